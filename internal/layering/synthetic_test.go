package layering

import (
	"go/parser"
	"go/token"
	"path"
	"strings"
	"testing"
)

// synthetic parses sources (by module-relative file path) into packages,
// as load does for the module's own files.
func synthetic(t *testing.T, sources map[string]string) map[string]*pkg {
	t.Helper()
	pkgs := map[string]*pkg{}
	fset := token.NewFileSet()
	for _, name := range sortedKeys(sources) {
		f, err := parser.ParseFile(fset, name, sources[name], parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		addFile(pkgs, path.Dir(name), path.Base(name), f)
	}
	return pkgs
}

// The dependency check fails on a store that reaches internal/llm, even
// through another package, and names the chain; the same tree without the
// import passes.
func TestUpwardDependencyIsCaught(t *testing.T) {
	t.Parallel()
	sources := map[string]string{
		"internal/store/kb.go":         "package store\nimport _ \"" + module + "/internal/config\"\n",
		"internal/config/config.go":    "package config\nimport _ \"" + module + "/internal/llm\"\n",
		"internal/llm/llm.go":          "package llm\nimport _ \"" + module + "/internal/harness\"\n",
		"internal/harness/harness.go":  "package harness\n",
		"internal/llmconfig/config.go": "package llmconfig\n",
	}
	storeOnly := map[string]map[string]string{"internal/store": belowOf["internal/store"]}
	got := upwardDependencies(t, synthetic(t, sources), storeOnly)
	want := []string{
		"internal/store depends on internal/harness (internal/store -> internal/config -> internal/llm -> internal/harness)",
		"internal/store depends on internal/llm (internal/store -> internal/config -> internal/llm)",
	}
	if len(got) != len(want) {
		t.Fatalf("problems %q, want %d", got, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("problem %q, want it to start with %q", got[i], want[i])
		}
	}
	sources["internal/config/config.go"] = "package config\nimport _ \"" + module + "/internal/llmconfig\"\n"
	if got := upwardDependencies(t, synthetic(t, sources), storeOnly); len(got) != 0 {
		t.Fatalf("a store that reads only the leaf config package: %q", got)
	}
}

// The dispatch check fails on a face other than the MCP one that switches
// on an operation's name or compares it with a constant, and passes the
// MCP face doing the same.
func TestOperationSwitchInAFaceIsCaught(t *testing.T) {
	t.Parallel()
	const face = `package cli

type params struct{ Operation string }

func runGraph(p params) string {
	switch p.Operation {
	case "get":
		return "get"
	}
	return ""
}

func runDelete(operation string) bool { return operation == "delete" }

func runRead(p params) string { return p.Operation } // looks, does not choose
`
	pkgs := synthetic(t, map[string]string{
		"internal/cli/graph.go":       face,
		"internal/mcpserver/tools.go": strings.Replace(face, "package cli", "package mcpserver", 1),
	})
	got := operationDispatches(pkgs, nil)
	want := []string{"internal/cli/graph.go: runGraph: switch p.Operation", "internal/cli/graph.go: runDelete: operation == "}
	if len(got) != len(want) {
		t.Fatalf("problems %q, want %d", got, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("problem %q, want it to start with %q", got[i], want[i])
		}
	}
	// A listed function passes; a listed one that no longer chooses fails.
	allowed := map[string]string{"internal/cli/graph.go: runDelete": "test", "internal/cli/graph.go: runGraph": "test", "internal/cli/graph.go: gone": "test"}
	if got := operationDispatches(pkgs, allowed); len(got) != 1 || !strings.Contains(got[0], `"internal/cli/graph.go: gone"`) {
		t.Fatalf("with the functions listed: %q", got)
	}
}
