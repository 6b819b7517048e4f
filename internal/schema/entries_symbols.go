package schema

import "github.com/kk-project/kk/internal/extract"

// The symbol manifest the symbol extractor reads (internal/extract), which
// checks every manifest against this schema before use.
var symbolEntries = []Entry{extract.SymbolManifestEntry}
