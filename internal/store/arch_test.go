package store

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The domain packages are shared by every face (CLI, MCP, HTTP, hooks), so
// they must not depend on any face: no cobra, no internal/cli.
func TestDomainPackagesImportNoFace(t *testing.T) {
	forbidden := []string{"github.com/spf13/cobra", "github.com/kk-project/kk/internal/cli"}
	for _, pkg := range []string{"store", "node", "frontmatter", "lock", "atomicfile", "schema", "yamlstyle", "yamlvalue", "gitx", "benchtree", "contracts", "discover", "freshness", "usage", "session", "curate", "pack", "graph", "harness", "hooks", "install", "workpool", "index"} {
		dir := filepath.Join("..", pkg)
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("package %s: no Go files (%v)", pkg, err)
		}
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			parsed, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range parsed.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				for _, bad := range forbidden {
					if path == bad || strings.HasPrefix(path, bad+"/") {
						t.Errorf("%s imports %s; domain code must not depend on a face", f, path)
					}
				}
			}
		}
	}
}
