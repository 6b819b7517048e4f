package curate

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/indexfiles"
	"github.com/kk-project/kk/internal/store"

	"github.com/kk-project/kk/internal/contracts"
)

// persistInput exercises every outcome of Persist; its results and the
// leaves it writes are pinned by testdata/persist/*.golden (rewrite them
// with KK_UPDATE=1).
const persistInput = `[
  {"action": "add", "candidate_origin": "0d9f6c2e-8f1a-4b7e-9c3d-2a1b4c5d6e7f:practice:0", "target_node_id": null, "home_folder": "ops",
   "proposed_node": {"title": "Retry with backoff", "type": "practice", "tags": ["ops", "http"], "description": "Retry idempotent calls with exponential backoff",
     "body": "Retry GET and PUT calls up to 3 times.\n", "kk_confidence": "high", "kk_relates_to": ["practice-existing", "map-new-thing"], "kk_depends_on": ["map-client"]},
   "rationale": "new practice"},
  {"action": "add", "candidate_origin": "docs/new-thing.md", "target_node_id": null,
   "proposed_node": {"title": "New thing", "type": "map", "tags": [], "description": "Where the new thing lives", "body": "In internal/thing.", "kk_confidence": "medium", "kk_relates_to": []},
   "rationale": "new map entry"},
  {"action": "modify", "candidate_origin": "docs/a.md", "target_node_id": "practice-existing",
   "proposed_node": {"title": "Existing, revised", "type": "practice", "tags": ["http"], "description": "Revised summary", "body": "Revised body.", "kk_confidence": "medium", "kk_relates_to": ["practice-retry-with-backoff"]},
   "rationale": "update"},
  {"action": "drop", "candidate_origin": "0d9f6c2e-8f1a-4b7e-9c3d-2a1b4c5d6e7f:map:0", "target_node_id": null, "proposed_node": null, "rationale": "noise"},
  {"action": "add", "candidate_origin": "docs/b.md", "target_node_id": null,
   "proposed_node": {"title": "Existing", "type": "practice", "tags": [], "description": "d", "body": "b", "kk_confidence": "high", "kk_relates_to": []},
   "rationale": "duplicate of an existing node"},
  {"action": "modify", "candidate_origin": "docs/c.md", "target_node_id": "practice-missing",
   "proposed_node": {"title": "Missing", "type": "practice", "tags": [], "description": "d", "body": "b", "kk_confidence": "high", "kk_relates_to": []},
   "rationale": "target gone"},
  {"action": "modify", "candidate_origin": "docs/d.md", "target_node_id": "map-client",
   "proposed_node": {"title": "Client", "type": "practice", "tags": [], "description": "d", "body": "b", "kk_confidence": "high", "kk_relates_to": []},
   "rationale": "wrong type"},
  {"action": "add", "candidate_origin": "docs/e.md", "target_node_id": null, "home_folder": "nowhere",
   "proposed_node": {"title": "Homeless", "type": "map", "tags": [], "description": "d", "body": "b", "kk_confidence": "high", "kk_relates_to": []},
   "rationale": "missing folder"},
  {"action": "contradict", "candidate_origin": "docs/f.md", "target_node_id": "map-client",
   "proposed_node": {"title": "Client", "type": "map", "tags": [], "description": "d", "body": "b", "kk_confidence": "high", "kk_relates_to": []},
   "rationale": "should have gone through dedup"},
  {"action": "add", "candidate_origin": "docs/g.md", "target_node_id": "map-client",
   "proposed_node": {"title": "Client two", "type": "map", "tags": [], "description": "d", "body": "b", "kk_confidence": "high", "kk_relates_to": []},
   "rationale": "add with a target"},
  {"action": "modify", "candidate_origin": "docs/h.md", "target_node_id": "map-new-thing",
   "proposed_node": {"title": "New thing", "type": "map", "tags": ["thing"], "description": "Where the new thing lives, revised", "body": "In internal/thing, since May.", "kk_confidence": "high", "kk_relates_to": []},
   "rationale": "refines the add above"},
  {"action": "add", "candidate_origin": "docs/i.md", "target_node_id": null,
   "proposed_node": {"title": "Two\nlines", "type": "map", "tags": [], "description": "d", "body": "b", "kk_confidence": "high", "kk_relates_to": []},
   "rationale": "bad title"},
  {"action": "modify", "candidate_origin": "docs/j.md", "target_node_id": null,
   "proposed_node": {"title": "No target", "type": "map", "tags": [], "description": "d", "body": "b", "kk_confidence": "high", "kk_relates_to": []},
   "rationale": "modify without target"},
  {"action": "add", "candidate_origin": "docs/k.md", "target_node_id": null, "proposed_node": null, "rationale": "no node"}
]`

func persistKB(t *testing.T) *store.KB {
	t.Helper()
	k := newTestKB(t)
	ctx := context.Background()
	for _, in := range []contracts.NodeInput{
		{Type: "practice", Title: "Existing", Description: "Old summary", Tags: []string{"http"}, Folder: "http", DerivedFrom: []string{"docs/old.md"}, Body: "Old body.\n"},
		{Type: "map", Title: "Client", Description: "The HTTP client", Tags: []string{"http"}, Body: "internal/http\n"},
	} {
		if _, err := WriteNode(ctx, k, in, WriteOptions{Mode: Create}); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(k.NodesDir(), "ops"), 0o755); err != nil {
		t.Fatal(err)
	}
	return k
}

func persistActions(t *testing.T, src string) []contracts.CuratorAction {
	t.Helper()
	var actions []contracts.CuratorAction
	if err := json.Unmarshal([]byte(src), &actions); err != nil {
		t.Fatal(err)
	}
	return actions
}

// persistSnapshot renders every file under nodes/ (leaves and indexes) as
// "== path ==" sections, sorted by path.
func persistSnapshot(t *testing.T, k *store.KB) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(k.NodesDir(), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(k.NodesDir(), p)
		b.WriteString("== " + filepath.ToSlash(rel) + " ==\n")
		b.Write(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func persistGoldenCheck(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "persist", name)
	if os.Getenv("KK_UPDATE") == "1" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (create it with KK_UPDATE=1)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n--- got ---\n%s\n--- want ---\n%s", name, got, want)
	}
}

func TestPersistGolden(t *testing.T) {
	k := persistKB(t)
	ctx := context.Background()
	rep, err := Persist(ctx, k, persistActions(t, persistInput), PersistOptions{Command: "test"})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.MarshalIndent(rep.Results, "", "  ")
	persistGoldenCheck(t, "results.golden.json", append(out, '\n'))
	if rep.Written != 4 || rep.Dropped != 1 || rep.Failed != 9 || rep.Unchanged != 0 {
		t.Errorf("counts: written %d dropped %d failed %d unchanged %d", rep.Written, rep.Dropped, rep.Failed, rep.Unchanged)
	}
	if len(rep.IndexChanged) == 0 {
		t.Error("the index was not regenerated")
	}
	tree := persistSnapshot(t, k)
	persistGoldenCheck(t, "tree.golden", []byte(tree))
	if res, err := indexfiles.Check(ctx, k); err != nil || len(res.Changed)+len(res.Removed) != 0 {
		t.Fatalf("index not up to date after persist: %+v %v", res, err)
	}

	// The same batch again writes nothing: the applied actions are
	// unchanged, the failed ones fail the same way.
	again, err := Persist(ctx, k, persistActions(t, persistInput), PersistOptions{Command: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if again.Written != 0 || again.Unchanged != 4 || again.Failed != 9 || len(again.IndexChanged) != 0 {
		t.Errorf("second run: written %d unchanged %d failed %d index %v", again.Written, again.Unchanged, again.Failed, again.IndexChanged)
	}
	for i, r := range again.Results {
		first := rep.Results[i]
		if r.Status == PersistUnchanged {
			r.Status = PersistWritten
		}
		if r != first {
			t.Errorf("row %d: second run %+v, first %+v", i, again.Results[i], first)
		}
	}
	if got := persistSnapshot(t, k); got != tree {
		t.Error("second run changed the tree")
	}
}

func TestPersistAddCollisionWithinBatch(t *testing.T) {
	k := newTestKB(t)
	src := `[
	  {"action": "add", "candidate_origin": "a", "target_node_id": null, "proposed_node": {"title": "Same", "type": "map", "tags": [], "description": "d", "body": "one", "kk_confidence": "low", "kk_relates_to": []}, "rationale": ""},
	  {"action": "add", "candidate_origin": "b", "target_node_id": null, "proposed_node": {"title": "same!", "type": "map", "tags": [], "description": "d", "body": "two", "kk_confidence": "high", "kk_relates_to": []}, "rationale": ""}
	]`
	rep, err := Persist(context.Background(), k, persistActions(t, src), PersistOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Results[0].Status != PersistWritten || rep.Results[1].Reason != ReasonAddCollision {
		t.Fatalf("%+v", rep.Results)
	}
	// A later add of the same title from another candidate collides with
	// the leaf on disk instead of becoming map-same-2.
	src2 := strings.Replace(src, `"candidate_origin": "a"`, `"candidate_origin": "c"`, 1)
	rep, err = Persist(context.Background(), k, persistActions(t, src2)[:1], PersistOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r := rep.Results[0]; r.Reason != ReasonAddCollision || !strings.Contains(r.Message, "map-same already exists at nodes/map-same.md") {
		t.Fatalf("%+v", r)
	}
	if _, err := os.Stat(filepath.Join(k.NodesDir(), "map-same-2.md")); err == nil {
		t.Fatal("a numbered twin was written")
	}
	// Replaying the original add is harmless while the leaf is as it
	// wrote it, and a collision once someone has edited the leaf.
	one := persistActions(t, src)[:1]
	if rep, err = Persist(context.Background(), k, one, PersistOptions{}); err != nil || rep.Results[0].Status != PersistUnchanged {
		t.Fatalf("replay: %+v %v", rep, err)
	}
	leaf := filepath.Join(k.NodesDir(), "map-same.md")
	edited := strings.Replace(string(persistRead(t, leaf)), "one", "one, edited by hand", 1)
	if err := os.WriteFile(leaf, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err = Persist(context.Background(), k, one, PersistOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r := rep.Results[0]; r.Reason != ReasonAddCollision || !strings.Contains(r.Message, "with other content") {
		t.Fatalf("%+v", r)
	}
	if string(persistRead(t, leaf)) != edited {
		t.Fatal("the replayed add overwrote a hand edit")
	}
}

func persistRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestPersistNoIndex(t *testing.T) {
	k := newTestKB(t)
	entry, _ := os.ReadFile(k.EntryPath())
	src := `[{"action": "add", "candidate_origin": "a", "target_node_id": null, "proposed_node": {"title": "X", "type": "map", "tags": [], "description": "d", "body": "b", "kk_confidence": "low", "kk_relates_to": []}, "rationale": ""}]`
	rep, err := Persist(context.Background(), k, persistActions(t, src), PersistOptions{NoIndex: true})
	if err != nil || rep.Written != 1 {
		t.Fatalf("%+v %v", rep, err)
	}
	if now, _ := os.ReadFile(k.EntryPath()); !bytes.Equal(now, entry) {
		t.Fatal("--no-index regenerated ENTRY.md")
	}
}

func TestPersistRefusesV2Trees(t *testing.T) {
	k := newTestKB(t)
	v2 := "---\nschema_version: 2\nid: map-old\ntitle: Old\nkind: map\nsummary: s\nconfidence: high\n---\nbody\n"
	if err := os.WriteFile(filepath.Join(k.NodesDir(), "map-old.md"), []byte(v2), 0o644); err != nil {
		t.Fatal(err)
	}
	src := `[{"action": "drop", "candidate_origin": "a", "target_node_id": null, "proposed_node": null, "rationale": ""}]`
	if _, err := Persist(context.Background(), k, persistActions(t, src), PersistOptions{}); err == nil || !strings.Contains(err.Error(), "kk migrate okf-v3") {
		t.Fatalf("err %v", err)
	}
}

// A home_folder that leaves nodes/ fails its own action only, as the
// help says of every failed action (kenkeep's curate-persist too); the
// batch is decoded whole and the other actions are written.
func TestPersistUnsafeHomeFolderFailsOnlyItsAction(t *testing.T) {
	k := newTestKB(t)
	src := `[
	  {"action": "add", "candidate_origin": "a", "target_node_id": null, "proposed_node": {"title": "Kept", "type": "map", "tags": [], "description": "d", "body": "one", "kk_confidence": "low", "kk_relates_to": []}, "rationale": ""},
	  {"action": "add", "candidate_origin": "b", "target_node_id": null, "proposed_node": {"title": "Escaping", "type": "map", "tags": [], "description": "d", "body": "two", "kk_confidence": "low", "kk_relates_to": []}, "rationale": "", "home_folder": "../../etc"},
	  {"action": "add", "candidate_origin": "c", "target_node_id": null, "proposed_node": {"title": "Absolute", "type": "map", "tags": [], "description": "d", "body": "three", "kk_confidence": "low", "kk_relates_to": []}, "rationale": "", "home_folder": "/tmp"}
	]`
	actions, err := DecodeActions("in.json", []byte(src))
	if err != nil {
		t.Fatalf("the batch is refused whole: %v", err)
	}
	rep, err := Persist(context.Background(), k, actions, PersistOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Results[0].Status != PersistWritten || rep.Results[1].Reason != ReasonHomeFolderInvalid || rep.Results[2].Reason != ReasonHomeFolderInvalid || rep.Written != 1 || rep.Failed != 2 {
		t.Fatalf("%+v", rep.Results)
	}
}
