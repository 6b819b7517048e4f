package trace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// kb_check's no-dead-links finds a note moved by hand after an earlier
// check in the same process, once the index has seen the move (a kk
// write syncs it at once; a long-running process's reads look again
// within a second): its scan goes with the index generation.
func TestCheckDeadLinksFollowsTheTree(t *testing.T) {
	k := newKB(t)
	a := mustOK(t, run(t, k, CreateJSON, `{"operation":"create","entityType":"atom","name":"Link A","paths":["src/a/**"],"knowledge":"a"}`))
	b := mustOK(t, run(t, k, CreateJSON, `{"operation":"create","entityType":"atom","name":"Link B","paths":["src/b/**"],"knowledge":"b"}`))
	rel := func(m map[string]any) string { return strings.TrimPrefix(m["path"].(string), ".ai/kenkeep/nodes/") }
	src, err := os.ReadFile(k.NodePath(rel(a)))
	if err != nil {
		t.Fatal(err)
	}
	link := "\nSee [B](" + filepath.Base(rel(b)) + ").\n"
	if err := os.WriteFile(k.NodePath(rel(a)), append(src, link...), 0o644); err != nil {
		t.Fatal(err)
	}
	check := func() []any {
		t.Helper()
		r := mustOK(t, run(t, k, KBCheckJSON, `{"rules":["no-dead-links"]}`))
		v, _ := r["violations"].([]any)
		return v
	}
	if v := check(); len(v) != 0 {
		t.Fatalf("before the move: %v", v)
	}
	moved := filepath.Join(k.NodesDir(), "elsewhere", filepath.Base(rel(b)))
	if err := os.MkdirAll(filepath.Dir(moved), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(k.NodePath(rel(b)), moved); err != nil {
		t.Fatal(err)
	}
	mustOK(t, run(t, k, CreateJSON, `{"operation":"create","entityType":"atom","name":"Link C","paths":["src/c/**"],"knowledge":"c"}`))
	v := check()
	if len(v) != 1 || !strings.Contains(v[0].(map[string]any)["message"].(string), "is now at .ai/kenkeep/nodes/elsewhere/"+filepath.Base(rel(b))) {
		t.Fatalf("after the move: %v", v)
	}
	if err := os.Rename(moved, k.NodePath(rel(b))); err != nil {
		t.Fatal(err)
	}
	mustOK(t, run(t, k, CreateJSON, `{"operation":"create","entityType":"atom","name":"Link D","paths":["src/d/**"],"knowledge":"d"}`))
	if v := check(); len(v) != 0 {
		t.Fatalf("after moving it back: %v", v)
	}
}
