package search

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/op"
)

func TestReadNode(t *testing.T) {
	k := newKB(t)
	mustOK(t, run(t, k, KBUpsertJSON, `{"entities":[{"id":"req-1","type":"req","title":"Log in","priority":"must"},{"id":"test-t1","type":"test","title":"login test"}],
		"edges":[{"type":"verified_by","from":"REQ-1","to":"Test-T1"}],"created_by":"me","source":"test"}`))
	a := createAtom(t, k, "Auth", []string{"src/auth/**"}, "")
	for i := range 3 {
		mustOK(t, run(t, k, AppendChangelogJSON, fmt.Sprintf(`{"operation":"append","parentType":"atom","parentId":%q,"taskId":"T","summary":"s%d"}`, a["id"], i)))
	}

	req := mustOK(t, run(t, k, ReadNodeJSON, `{"id":"req-1"}`))
	if req["type"] != "req" || req["priority"] != "must" || fmt.Sprint(req["edges"]) == "[]" {
		t.Fatalf("req: %v", req)
	}
	edge := req["edges"].([]any)[0].(map[string]any)
	if edge["type"] != "verified_by" || edge["to"] != "test-t1" || edge["created_by"] != "me" {
		t.Fatalf("edge: %v", edge)
	}

	// A leaf moved since the last read is found again.
	moved := filepath.Join(k.NodesDir(), "elsewhere", "req-1.md")
	if err := os.MkdirAll(filepath.Dir(moved), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(k.NodePath(strings.TrimPrefix(req["path"].(string), ".ai/kenkeep/nodes/")), moved); err != nil {
		t.Fatal(err)
	}
	if again := mustOK(t, run(t, k, ReadNodeJSON, `{"id":"req-1"}`)); again["path"] != ".ai/kenkeep/nodes/elsewhere/req-1.md" {
		t.Fatalf("after a move: %v", again)
	}

	atom := mustOK(t, run(t, k, ReadNodeJSON, `{"id":"`+a["id"].(string)+`","changelogLimit":2}`))
	log := atom["changelog"].([]any)
	if atom["changelogTotal"] != float64(3) || len(log) != 2 || log[0].(map[string]any)["summary"] != "s2" || fmt.Sprint(atom["paths"]) != "[src/auth/**]" {
		t.Fatalf("atom: %v", atom)
	}
	noLog := mustOK(t, run(t, k, ReadNodeJSON, `{"id":"`+a["id"].(string)+`","includeChangelog":false}`))
	if _, has := noLog["changelog"]; has {
		t.Fatalf("includeChangelog false: %v", noLog)
	}
	for _, p := range []string{atom["path"].(string), strings.TrimPrefix(atom["path"].(string), ".ai/kenkeep/nodes/"), k.Root + "/" + atom["path"].(string)} {
		got := mustOK(t, run(t, k, ReadNodeJSON, fmt.Sprintf(`{"path":%q}`, p)))
		if got["id"] != a["id"] {
			t.Fatalf("path %s: %v", p, got)
		}
	}
	for raw, want := range map[string]string{
		`{"id":"nope"}`:                      op.CodeNotFound,
		`{"path":"graph/nope.md"}`:           op.CodeNotFound,
		`{}`:                                 op.CodeValidation,
		`{"id":"req-1","path":"a.md"}`:       op.CodeValidation,
		`{"path":"../x.md"}`:                 op.CodeValidation,
		`{"path":"/etc/passwd"}`:             op.CodeValidation,
		`{"path":"graph/index.md"}`:          op.CodeValidation,
		`{"path":"graph/x.txt"}`:             op.CodeValidation,
		`{"id":"req-1","changelogLimit":-1}`: op.CodeValidation,
		`{"id":"req-1","extra":1}`:           op.CodeValidation,
	} {
		if got := errCode(run(t, k, ReadNodeJSON, raw)); got != want {
			t.Errorf("%s: %q, want %q", raw, got, want)
		}
	}
}

func TestSearchNodesAndEntry(t *testing.T) {
	k := newKB(t)
	createAtom(t, k, "Webhook retries", []string{"src/hooks/**"}, "")
	d := mustOK(t, run(t, k, SearchNodesJSON, `{"query":"webhook","limit":5}`))
	if hits := d["hits"].([]any); len(hits) != 1 || d["branch"] == "" {
		t.Fatalf("search: %v", d)
	}
	for raw, want := range map[string]string{`{"query":"..."}`: op.CodeValidation, `{"query":"x","limit":0}`: op.CodeValidation, `{"query":"x","limit":101}`: op.CodeValidation} {
		if got := errCode(run(t, k, SearchNodesJSON, raw)); got != want {
			t.Errorf("%s: %q, want %q", raw, got, want)
		}
	}
	e := mustOK(t, run(t, k, ReadEntryJSON, `{}`))
	if e["path"] != ".ai/kenkeep/ENTRY.md" || !strings.HasPrefix(e["content"].(string), "---\n") {
		t.Fatalf("entry: %v", e)
	}
	if got := errCode(run(t, k, ReadEntryJSON, `{"x":1}`)); got != op.CodeValidation {
		t.Fatalf("entry with a parameter: %q", got)
	}
	if err := os.Remove(k.EntryPath()); err != nil {
		t.Fatal(err)
	}
	if got := errCode(run(t, k, ReadEntryJSON, `{}`)); got != op.CodeNotFound {
		t.Fatalf("no entry: %q", got)
	}
}

// A leaf path that is a symlink leading out of the knowledge tree (one a
// colleague committed, pulled in: git keeps symlinks) is refused, as the
// tree's readers skip it: kk reads no file outside the tree by its path,
// and says nothing of what it holds. Found through kk serve's web page,
// whose /leaf/<path> parsed /etc/passwd and any markdown elsewhere on the
// machine, redirecting to its id or quoting its parse error.
func TestReadNodeRefusesALinkOutOfTheTree(t *testing.T) {
	k := newKB(t)
	a := createAtom(t, k, "Inside", []string{"src/**"}, "")
	inside := strings.TrimPrefix(a["path"].(string), ".ai/kenkeep/nodes/")
	outside := filepath.Join(t.TempDir(), "secret.md")
	leaf, err := os.ReadFile(k.NodePath(inside))
	if err != nil {
		t.Fatal(err)
	}
	// A valid leaf outside: the worst case, it would parse.
	if err := os.WriteFile(outside, []byte(strings.ReplaceAll(string(leaf), "Inside", "Secret")), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(k.NodesDir(), "links")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "out.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(outside), filepath.Join(k.NodesDir(), "outdir")); err != nil {
		t.Fatal(err)
	}
	// A link to a leaf inside the tree is read.
	if err := os.Symlink(k.NodePath(inside), filepath.Join(dir, "in.md")); err != nil {
		t.Fatal(err)
	}
	if got := mustOK(t, run(t, k, ReadNodeJSON, `{"path":"links/in.md"}`)); got["id"] != a["id"] {
		t.Errorf("a link inside the tree: %v", got)
	}
	for _, p := range []string{"links/out.md", "outdir/secret.md"} {
		r := run(t, k, ReadNodeJSON, fmt.Sprintf(`{"path":%q}`, p))
		if errCode(r) != op.CodeValidation || strings.Contains(fmt.Sprint(r), "Secret") || strings.Contains(fmt.Sprint(r), outside) {
			t.Errorf("%s: %v", p, r)
		}
	}
}

// A read by id of a leaf a hand edit broke says that its leaf cannot be
// read and names the file, not that no node has the id.
func TestReadNodeOfUnreadableLeafSaysSo(t *testing.T) {
	k := newKB(t)
	a := createAtom(t, k, "Auth", []string{"src/auth/**"}, "")
	got := mustOK(t, run(t, k, ReadNodeJSON, `{"id":"`+a["id"].(string)+`"}`))
	p := k.NodePath(strings.TrimPrefix(got["path"].(string), ".ai/kenkeep/nodes/"))
	src, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(string(src), "title: Auth", "title: [unclosed", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, k, ReadNodeJSON, `{"id":"`+a["id"].(string)+`"}`)
	e, _ := r["error"].(map[string]any)
	if msg, _ := e["message"].(string); e["code"] != op.CodeInternal || !strings.Contains(msg, "cannot be read") || !strings.Contains(msg, got["path"].(string)) {
		t.Errorf("read of a broken leaf: %v", r)
	}
}

// kk_entry on an ENTRY.md a merge stopped on (its conflict markers) gave
// the agent the markers as the project's overview; it says what happened
// and what to do, as session-start does.
func TestReadEntryWithConflictMarkers(t *testing.T) {
	k := newKB(t)
	if _, err := ReadEntry(t.Context(), k, EntryParams{}); err != nil {
		t.Fatal(err)
	}
	src := "---\n<<<<<<< HEAD\nnodes_hash: a\n=======\nnodes_hash: b\n>>>>>>> other\n---\n# kenkeep\n"
	if err := os.WriteFile(k.EntryPath(), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadEntry(t.Context(), k, EntryParams{})
	e, ok := err.(*op.Error)
	if !ok || e.Code != op.CodeInvariant || !strings.Contains(e.Message, "conflict markers (lines 2 to 6)") || !strings.Contains(e.Message, "kk index rebuild") {
		t.Errorf("ReadEntry = %v", err)
	}
}
