package trace

import (
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/op"
)

// errMessage is the message of a failed operation's envelope.
func errMessage(r map[string]any) string {
	e, _ := r["error"].(map[string]any)
	s, _ := e["message"].(string)
	return s
}

// An edge from an entity to itself is refused at the write, naming the
// edge and the id, whatever its type and however the two ends spell the
// id: kb_check reported it only once it was in the tree.
func TestUpsertRefusesASelfEdge(t *testing.T) {
	t.Parallel()
	k := newKB(t)
	seedTrace(t, k)
	before := treeHash(t, k)
	recs, _ := index.ReadAudit(k, "main")
	for _, c := range []struct{ name, raw, want string }{
		{"depends_on", `{"edges":[{"type":"depends_on","from":"req-7","to":"req-7"}],"created_by":"a","source":"s"}`, "edges[0]"},
		{"ends differing in case", `{"edges":[{"type":"depends_on","from":"req-8","to":"req-7"},{"type":"depends_on","from":"REQ-8","to":"req-8"}],"created_by":"a","source":"s"}`, "edges[1]"},
		{"relates_to", `{"edges":[{"type":"relates_to","from":"adr-3","to":"adr-3","kind":"refines"}],"created_by":"a","source":"s"}`, "edges[0]"},
		{"on a new entity", `{"entities":[{"id":"req-9","type":"req","title":"nine"}],"edges":[{"type":"depends_on","from":"req-9","to":"req-9"}],"created_by":"a","source":"s"}`, "edges[0]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, k, KBUpsertJSON, c.raw)
			if errCode(r) != op.CodeValidation {
				t.Fatalf("code %q, want %s: %v", errCode(r), op.CodeValidation, r)
			}
			msg := errMessage(r)
			if !strings.Contains(msg, c.want+".to") || !strings.Contains(msg, "itself") {
				t.Fatalf("message %q names neither the field %s.to nor the self-edge", msg, c.want)
			}
			if treeHash(t, k) != before {
				t.Fatal("the tree changed")
			}
			if now, _ := index.ReadAudit(k, "main"); len(now) != len(recs) {
				t.Fatal("a refused changeset left an audit record")
			}
		})
	}
}

// kb_delete of an edge of a type kk does not know is bad input, naming the
// type and the types there are, not NOT_FOUND (which says the edge could
// exist).
func TestDeleteOfAnUnknownEdgeTypeNamesTheTypes(t *testing.T) {
	t.Parallel()
	k := newKB(t)
	seedTrace(t, k)
	before := treeHash(t, k)
	for _, raw := range []string{
		`{"edges":[{"type":"blocks","from":"req-7","to":"req-8"}],"created_by":"a","source":"s"}`,
		`{"edges":[{"type":"blocks","from":"req-nope","to":"req-8"}],"created_by":"a","source":"s"}`,
	} {
		r := run(t, k, kbDeleteUser, raw)
		if errCode(r) != op.CodeValidation {
			t.Fatalf("code %q, want %s: %v", errCode(r), op.CodeValidation, r)
		}
		msg := errMessage(r)
		for _, want := range []string{"edges[0].type", `"blocks"`, "depends_on", "verified_by", "relates_to"} {
			if !strings.Contains(msg, want) {
				t.Errorf("message %q lacks %q", msg, want)
			}
		}
		if treeHash(t, k) != before {
			t.Fatal("the tree changed")
		}
	}
	// A known type with no such edge is still NOT_FOUND.
	if r := run(t, k, kbDeleteUser, `{"edges":[{"type":"depends_on","from":"req-7","to":"req-8"}],"created_by":"a","source":"s"}`); errCode(r) != op.CodeNotFound {
		t.Fatalf("code %q, want NOT_FOUND: %v", errCode(r), r)
	}
}
