package discover

import (
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/curate"
)

// Statuses of a changed document.
const (
	StatusNew     = "new"     // not in the bootstrap state
	StatusChanged = "changed" // in it, with another content hash
)

// ChangedDoc is a document a bootstrap re-run has to look at.
type ChangedDoc struct {
	Doc
	Status string `json:"status"`
	// Previous is the hash the bootstrap state recorded (changed only).
	Previous string `json:"previous_sha256,omitempty"`
}

// Changed keeps the docs (with hashes) whose content differs from what the
// bootstrap state recorded for the same path, in the order given. Docs
// without a hash count as changed.
func Changed(docs []Doc, st *curate.BootstrapState) []ChangedDoc {
	// The state holds whatever --source-doc and --source-hash were given:
	// compare cleaned paths and bare lower-case hex digests.
	recorded := make(map[string]string, len(st.Docs))
	// Sorted, so that when two spellings of one path disagree the choice is
	// always the same.
	for _, p := range slices.Sorted(maps.Keys(st.Docs)) {
		sum := st.Docs[p].ContentSHA256
		recorded[path.Clean(strings.ReplaceAll(p, `\`, "/"))] = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(sum), "sha256:"))
	}
	out := []ChangedDoc{}
	for _, d := range docs {
		rec, ok := recorded[d.Path]
		switch {
		case !ok:
			out = append(out, ChangedDoc{Doc: d, Status: StatusNew})
		case d.SHA256 == "" || rec != d.SHA256:
			out = append(out, ChangedDoc{Doc: d, Status: StatusChanged, Previous: rec})
		}
	}
	return out
}
