package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIDocsUpToDate fails when docs/cli/ differs from the command tree.
// Refresh with: go test ./internal/cli -run TestCLIDocsUpToDate -update
func TestCLIDocsUpToDate(t *testing.T) {
	dir := filepath.Join("..", "..", "docs", "cli")
	pages := CommandDocs()
	for name, page := range pages {
		page = append(page, '\n')
		path := filepath.Join(dir, name)
		if *update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, page, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		old, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(old, page) {
			t.Errorf("docs/cli/%s is out of date; run: go test ./internal/cli -run TestCLIDocsUpToDate -update", name)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if _, ok := pages[e.Name()]; !ok && strings.HasSuffix(e.Name(), ".md") {
			if *update {
				os.Remove(filepath.Join(dir, e.Name()))
				continue
			}
			t.Errorf("docs/cli/%s documents no command; delete it or run with -update", e.Name())
		}
	}
}
