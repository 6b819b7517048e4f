package serve

import (
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/curate"
	"github.com/kk-project/kk/internal/httpapi"
)

// TestAPlacementWithAMove: the model's decision moves an existing note
// into the folder where the new one goes (seed 000's refactors). The move,
// the note that links to the moved one (its generated links rewritten),
// the new note and the index files are one transaction and one commit;
// the job and the commit message say what moved.
func TestAPlacementWithAMove(t *testing.T) {
	k := newRepo(t, 0)
	for _, in := range []contracts.NodeInput{
		{Type: "map", Title: "Channel buffers", Folder: "misc", Body: "A buffered channel holds values until read.\n"},
		{Type: "map", Title: "Worker pools", Folder: "patterns", Body: "Workers read jobs from a channel.\n", RelatesTo: []string{"map-channel-buffers"}},
	} {
		if _, err := curate.WriteNode(ctx, k, in, curate.WriteOptions{Command: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	git(t, k, "add", "-A")
	git(t, k, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "tree")
	if b, _ := k.ReadLeaf("patterns/map-worker-pools.md"); !strings.Contains(string(b.Body), "(/misc/map-channel-buffers.md)") {
		t.Fatalf("the linking note's body:\n%s", b.Body)
	}
	decision := `{"folder":"go/concurrency","title":"Channels","description":"What channels are for","type":"map","tags":["golang"],` +
		`"refactors":[{"from":"misc/map-channel-buffers.md","to":"go/concurrency"}]}`
	fm, p := modelServer(t, decision, nil)
	s := start(t, k, p)
	head := git(t, k, "rev-parse", "HEAD")
	j := s.post(t, httpapi.PostRequest{Content: "Channels pass values between goroutines.\n"})
	if j.Status != "done" || j.Path != "go/concurrency/map-channels.md" {
		t.Fatalf("job: %+v", j)
	}
	if want := "Moved misc/map-channel-buffers.md to go/concurrency/map-channel-buffers.md."; !strings.Contains(j.Note, want) || !strings.Contains(j.Note, "Links rewritten in patterns/map-worker-pools.md.") {
		t.Errorf("note: %q", j.Note)
	}
	if n := fm.Requests(); n != 1 {
		t.Errorf("%d model requests", n)
	}
	if got := git(t, k, "rev-list", "--count", head+"..HEAD"); got != "1" {
		t.Fatalf("%s commits for one job", got)
	}
	jobCommit(t, k, "store", j)
	// (without rename detection, so that the move shows as its two paths)
	files := strings.Fields(git(t, k, "log", "-1", "--format=", "--name-only", "--no-renames"))
	for _, want := range []string{
		".ai/kenkeep/nodes/go/concurrency/map-channels.md",
		".ai/kenkeep/nodes/go/concurrency/map-channel-buffers.md",
		".ai/kenkeep/nodes/misc/map-channel-buffers.md",
		".ai/kenkeep/nodes/patterns/map-worker-pools.md",
	} {
		if !strings.Contains(" "+strings.Join(files, " ")+" ", " "+want+" ") {
			t.Errorf("the commit lacks %s; it has %v", want, files)
		}
	}
	if msg := commitMessage(t, k, j.JobID); !strings.Contains(msg, "\n\nMoved misc/map-channel-buffers.md to go/concurrency/map-channel-buffers.md.") {
		t.Errorf("commit message:\n%s", msg)
	}
	moved, err := k.ReadLeaf("go/concurrency/map-channel-buffers.md")
	if err != nil || moved.ID != "map-channel-buffers" {
		t.Fatalf("moved note: %+v %v", moved, err)
	}
	if b, _ := k.ReadLeaf("patterns/map-worker-pools.md"); !strings.Contains(string(b.Body), "(/go/concurrency/map-channel-buffers.md)") {
		t.Errorf("the link did not follow the move:\n%s", b.Body)
	}
	clean(t, k)
}

// TestARefactorKKCannotApplyIsDropped: a refactor that passes the checks
// but that the transaction cannot apply (moving a folder's notes into a
// folder that does not exist) is dropped: the note is placed where the
// model said, in one commit, and the job says the refactors were left out.
func TestARefactorKKCannotApplyIsDropped(t *testing.T) {
	k := newRepo(t, 0)
	if _, err := curate.WriteNode(ctx, k, contracts.NodeInput{Type: "map", Title: "Old note", Folder: "misc", Body: "Old.\n"}, curate.WriteOptions{Command: "test"}); err != nil {
		t.Fatal(err)
	}
	git(t, k, "add", "-A")
	git(t, k, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "tree")
	decision := `{"folder":"go","title":"Channels","description":"","type":"map","tags":[],"refactors":[{"from":"misc","to":"nowhere"}]}`
	_, p := modelServer(t, decision, nil)
	s := start(t, k, p)
	head := git(t, k, "rev-parse", "HEAD")
	j := s.post(t, httpapi.PostRequest{Content: "Channels.\n"})
	if j.Status != "done" || j.Path != "go/map-channels.md" || !strings.HasPrefix(j.Note, "Placed without the model's refactors, which kk could not apply: ") {
		t.Fatalf("job: %+v", j)
	}
	if got := git(t, k, "rev-list", "--count", head+"..HEAD"); got != "1" {
		t.Errorf("%s commits", got)
	}
	if _, err := k.ReadLeaf("misc/map-old-note.md"); err != nil {
		t.Errorf("the note the refactor named moved: %v", err)
	}
	clean(t, k)
}
