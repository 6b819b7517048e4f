package graph

import (
	"os"
	"strings"
	"testing"
)

// TestWriteToUnreadableLeafSaysSo: when a hand edit has broken an atom's
// front matter, an update, a delete or a changelog append of that atom
// says that its leaf cannot be read and names the file, instead of
// NOT_FOUND (which sends an agent off to create the atom again).
func TestWriteToUnreadableLeafSaysSo(t *testing.T) {
	t.Parallel()
	k := newKB(t)
	createAtom(t, k, "Rel B", []string{"src/rb/**"}, "")
	p := k.NodePath("graph/map-rel-b.md")
	src, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(string(src), "title: Rel B", "title: [unclosed", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	before := treeHash(t, k)
	for _, raw := range []string{
		`{"operation":"update","entityType":"atom","id":"map-rel-b","version":1,"knowledge":"x"}`,
		`{"operation":"delete","entityType":"atom","id":"map-rel-b","version":1}`,
	} {
		r := run(t, k, ManageGraphJSON, raw)
		msg, _ := r["error"].(map[string]any)["message"].(string)
		if errCode(r) != "INTERNAL_ERROR" || !strings.Contains(msg, "graph/map-rel-b.md") || !strings.Contains(msg, "cannot be read") {
			t.Errorf("%s: %v", raw, r)
		}
	}
	r := run(t, k, ManageChangelogJSON, `{"operation":"append","parentType":"atom","parentId":"map-rel-b","taskId":"T","summary":"s"}`)
	if msg, _ := r["error"].(map[string]any)["message"].(string); errCode(r) != "INTERNAL_ERROR" || !strings.Contains(msg, "cannot be read") {
		t.Errorf("changelog append: %v", r)
	}
	if after := treeHash(t, k); after != before {
		t.Error("a refused write changed the tree")
	}
}

// A get of an entity whose leaf a hand edit broke says that its leaf
// cannot be read and names the file, as a write does: NOT_FOUND would send
// an agent to create the entity again.
func TestGetOfUnreadableLeafSaysSo(t *testing.T) {
	t.Parallel()
	k := newKB(t)
	createAtom(t, k, "Rel C", []string{"src/rc/**"}, "")
	p := k.NodePath("graph/map-rel-c.md")
	src, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(string(src), "title: Rel C", "title: [unclosed", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, k, QueryGraphJSON, `{"operation":"get","entityType":"atom","id":"map-rel-c"}`)
	msg, _ := r["error"].(map[string]any)["message"].(string)
	if errCode(r) != "INTERNAL_ERROR" || !strings.Contains(msg, "graph/map-rel-c.md") || !strings.Contains(msg, "cannot be read") {
		t.Errorf("get: %v", r)
	}
	// An id no leaf has, readable or not, is still NOT_FOUND.
	if r := run(t, k, QueryGraphJSON, `{"operation":"get","entityType":"atom","id":"map-nothing"}`); errCode(r) != "NOT_FOUND" {
		t.Errorf("get of an unknown id: %v", r)
	}
}
