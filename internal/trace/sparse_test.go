package trace

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/op"
	"github.com/kk-project/kk/internal/store"
)

// TestCheckRefusesASparseCheckout: kb_check (the MCP tool, and kk serve's
// route to it) judged a sparse checkout from the leaves it holds: an edge
// to a note the checkout leaves out was reported dangling, though the note
// exists. kk check and kk lint refuse such a checkout, naming what is left
// out and what to run; kb_check now refuses the same way, and reports no
// finding.
func TestCheckRefusesASparseCheckout(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	k := newKB(t)
	mustOK(t, run(t, k, KBUpsertJSON, `{
		"entities": [
			{"id": "req-1", "type": "req", "title": "Pool connections"},
			{"id": "req-2", "type": "req", "title": "Retry with backoff"}
		],
		"edges": [{"type": "depends_on", "from": "req-2", "to": "req-1"}],
		"created_by": "agent:test", "source": "task T-1"}`))
	gitIn := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = k.Root
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	gitIn("init", "-q", "-b", "main")
	gitIn("add", "-A")
	gitIn("commit", "-q", "-m", "notes")
	if d := mustOK(t, run(t, k, KBCheckJSON, `{"rules":["no-dangling-edges"]}`)); len(d["violations"].([]any)) != 0 {
		t.Fatalf("the whole checkout: %v", d)
	}
	// The note req-2 depends on is left out of the checkout.
	leaf := ""
	for _, p := range []string{"requirements/req-1.md", "req-1.md"} {
		if _, err := os.Stat(k.NodePath(p)); err == nil {
			leaf = k.Rel(k.NodePath(p))
		}
	}
	if leaf == "" {
		t.Fatal("req-1's leaf not found")
	}
	gitIn("sparse-checkout", "set", "--no-cone", "/*", "!/"+leaf)
	if _, err := os.Stat(filepath.Join(k.Root, leaf)); !os.IsNotExist(err) {
		t.Fatalf("the sparse checkout kept %s: %v", leaf, err)
	}
	// A process started in the sparse checkout (kk serve, kk mcp).
	k = store.New(k.Root)
	r := run(t, k, KBCheckJSON, `{"rules":["no-dangling-edges"]}`)
	if errCode(r) == "" {
		t.Fatalf("kb_check on a sparse checkout answered: %v", r)
	}
	msg, _ := r["error"].(map[string]any)["message"].(string)
	if !strings.Contains(msg, "only partly checked out") || !strings.Contains(msg, "git sparse-checkout add .ai/kenkeep") {
		t.Errorf("kb_check's refusal does not say what is left out and what to run: %q", msg)
	}
	if errCode(r) != op.CodeInternal {
		t.Errorf("code %s", errCode(r))
	}
}
