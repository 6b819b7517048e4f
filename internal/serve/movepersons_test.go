package serve

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/curate"
	"github.com/kk-project/kk/internal/fakemodel"
	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/jobqueue"
	"github.com/kk-project/kk/internal/service"
	"github.com/kk-project/kk/internal/store"
)

// moveTree writes and commits two notes: misc/map-channel-buffers.md, and
// patterns/map-worker-pools.md, whose Related section links to it.
func moveTree(t *testing.T) *store.KB {
	t.Helper()
	k := newRepo(t, 0)
	for _, in := range []contracts.NodeInput{
		{Type: "map", Title: "Channel buffers", Folder: "misc", Body: "A buffered channel holds values until read.\n"},
		{Type: "map", Title: "Worker pools", Folder: "patterns", Body: "Workers read jobs from a channel.\n", RelatesTo: []string{"map-channel-buffers"}},
	} {
		if _, err := curate.WriteNode(ctx, k, in, curate.WriteOptions{Command: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	commitAll(t, k, "tree")
	return k
}

// moveDecision is a placement into go/concurrency that moves the note at
// from there.
func moveDecision(title, from string) string {
	return `{"folder":"go/concurrency","title":"` + title + `","description":"d","type":"map","tags":[],` +
		`"refactors":[{"from":"` + from + `","to":"go/concurrency"}]}`
}

// TestAMoveOfANoteWithAPersonsChanges: the guard that refuses a job's
// edit or deletion of a note with a person's uncommitted changes did not
// cover the model's refactors: a move of a note the person was editing
// (or of a note never committed, or one that rewrote the links of a note
// the person was editing) committed the person's lines in kk serve's
// store(…) commit, as its own work. The refactors are now left out, as
// for any refactor kk cannot apply: the note is placed where the model
// said, in one commit holding none of the person's files, the job's note
// says why, naming the note, and the person's bytes are as they were.
func TestAMoveOfANoteWithAPersonsChanges(t *testing.T) {
	for _, tc := range []struct {
		name   string
		edited string // the note the person changes, relative to nodes/
		moved  string // the note the model moves
		change func(t *testing.T, k *store.KB) string
	}{
		{"the moved note edited", "misc/map-channel-buffers.md", "misc/map-channel-buffers.md", func(t *testing.T, k *store.KB) string {
			return appendLine(t, k, "misc/map-channel-buffers.md")
		}},
		{"the note whose links follow edited", "patterns/map-worker-pools.md", "misc/map-channel-buffers.md", func(t *testing.T, k *store.KB) string {
			return appendLine(t, k, "patterns/map-worker-pools.md")
		}},
		{"the moved note never committed", "misc/map-fresh-note.md", "misc/map-fresh-note.md", func(t *testing.T, k *store.KB) string {
			in := contracts.NodeInput{Type: "map", Title: "Fresh note", Description: "d", Folder: "misc", Body: "Written by kk node write.\n"}
			if _, err := curate.WriteNode(ctx, k, in, curate.WriteOptions{Command: "kk node write"}); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(k.NodePath("misc/map-fresh-note.md"))
			if err != nil {
				t.Fatal(err)
			}
			return string(data)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := moveTree(t)
			want := tc.change(t, k)
			status := notGenerated(git(t, k, "status", "--porcelain"))
			_, p := modelServer(t, moveDecision("Channels", tc.moved), nil)
			s := start(t, k, p)
			head := git(t, k, "rev-parse", "HEAD")
			j := s.post(t, httpapi.PostRequest{Content: "Channels pass values between goroutines.\n"})
			if j.Status != "done" || j.Path != "go/concurrency/map-channels.md" {
				t.Fatalf("job: %+v", j)
			}
			if !strings.HasPrefix(j.Note, "Placed without the model's refactors") || !strings.Contains(j.Note, tc.edited) || !strings.Contains(j.Note, "not committed") {
				t.Errorf("the job's note does not say the refactors were left out for %s: %q", tc.edited, j.Note)
			}
			if got := git(t, k, "rev-list", "--count", head+"..HEAD"); got != "1" {
				t.Fatalf("%s commits for one job", got)
			}
			for _, f := range jobCommit(t, k, "store", j) {
				if strings.HasPrefix(f, ".ai/kenkeep/nodes/") && !strings.HasPrefix(f, ".ai/kenkeep/nodes/go/") && !strings.HasSuffix(f, "index.md") {
					t.Errorf("the job's commit holds %s, a note of the person's", f)
				}
			}
			if got, _ := os.ReadFile(k.NodePath(tc.edited)); string(got) != want {
				t.Errorf("%s holds:\n%s\nwant the person's:\n%s", tc.edited, got, want)
			}
			if _, err := os.Stat(k.NodePath("go/concurrency/" + strings.TrimPrefix(tc.moved, "misc/"))); err == nil {
				t.Errorf("%s was moved", tc.moved)
			}
			// (The work tree's generated files are those of its leaves,
			// the person's edits included.)
			if got := notGenerated(git(t, k, "status", "--porcelain")); got != status {
				t.Errorf("git status of the notes after the job:\n%s\nwant the person's alone:\n%s", got, status)
			}
			headChecks(t, k)
		})
	}
}

// TestAMoveOfTheNoteTheJobBeforeWrote: the model moves the note the job
// just before posted, whose commit may not have landed when this job is
// written (a job's commit overlaps the next job): it is no person's
// change, and the move is made.
func TestAMoveOfTheNoteTheJobBeforeWrote(t *testing.T) {
	k := moveTree(t)
	fm := &fakemodel.Server{JSON: func(body []byte) string {
		if strings.Contains(string(body), "Second post") {
			return moveDecision("Second", "misc/map-first.md")
		}
		return `{"folder":"misc","title":"First","description":"d","type":"map","tags":[]}`
	}}
	srv := httptest.NewServer(fm)
	t.Cleanup(srv.Close)
	s := start(t, k, provider(t, srv.URL))
	for round := 0; round < 3; round++ {
		a, err := s.Client.Post(ctx, httpapi.PostRequest{Content: "First post, round " + string(rune('a'+round)) + ".\n"})
		if err != nil {
			t.Fatal(err)
		}
		b, err := s.Client.Post(ctx, httpapi.PostRequest{Content: "Second post, round " + string(rune('a'+round)) + ".\n"})
		if err != nil {
			t.Fatal(err)
		}
		ja, jb := s.wait(t, a.JobID), s.wait(t, b.JobID)
		if ja.Status != "done" || jb.Status != "done" {
			t.Fatalf("round %d: %+v %+v", round, ja, jb)
		}
		if !strings.Contains(jb.Note, "Moved misc/map-first.md to go/concurrency/map-first.md.") {
			t.Errorf("round %d: the move of the note the job before wrote was left out: %q", round, jb.Note)
		}
		// The next round's first post lands at misc/map-first.md again.
		for _, p := range []string{"go/concurrency/map-first.md", jb.Path} {
			q, err := s.Client.Delete(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			if j := s.wait(t, q.JobID); j.Status != "done" {
				t.Fatalf("round %d: the deletion of %s: %+v", round, p, j)
			}
		}
	}
	clean(t, k)
	headChecks(t, k)
}

// appendLine appends a person's line to the note at rel (relative to
// nodes/), not committed, and returns the file's new content.
func appendLine(t *testing.T, k *store.KB, rel string) string {
	t.Helper()
	data, err := os.ReadFile(k.NodePath(rel))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data) + "A person's line, not committed.\n"
	writeFile(t, k.NodePath(rel), text)
	return text
}

// notGenerated is git status --porcelain's lines but those of the
// generated index files.
func notGenerated(status string) string {
	var out []string
	for _, l := range strings.Split(status, "\n") {
		if !strings.HasSuffix(l, "/ENTRY.md") && !strings.HasSuffix(l, "/GRAPH.md") && !strings.HasSuffix(l, "/index.md") {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return strings.Join(out, "\n")
}

// TestAMovedNoteAPersonCommitsBeforeTheMovesCommit: a person commits
// their version of the note the model's refactor moved, between the
// job's write and its commit. The job's commit would put the note's old
// bytes at the new path and remove the person's: it is not made; the
// job is held (put back and run again, never failed: a post is not
// lost), and the person's commit stays the tip.
func TestAMovedNoteAPersonCommitsBeforeTheMovesCommit(t *testing.T) {
	k := moveTree(t)
	_, p := modelServer(t, moveDecision("Channels", "misc/map-channel-buffers.md"), nil)
	b := New(Options{KB: k, Provider: p})
	t.Cleanup(func() { _ = b.Close() })
	var touched []string
	var last func(context.Context) error
	job := &service.Job{ID: "job-move-raced-by-a-person", Op: service.OpStore, Request: service.JobRequest{Content: "Channels pass values between goroutines.\n"}, Created: time.Now()}
	withTouch(job, &touched)
	job.OnDefer(func(fn func(context.Context) error) { last = fn })
	original, err := os.ReadFile(k.NodePath("misc/map-channel-buffers.md"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Apply(ctx, job); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(job.Noted(), "Moved misc/map-channel-buffers.md") {
		t.Fatalf("the job did not move the note: %q", job.Noted())
	}
	persons := string(original) + "The person's line, committed.\n"
	if err := os.MkdirAll(k.NodePath("misc"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, k.NodePath("misc/map-channel-buffers.md"), persons)
	git(t, k, "add", ".ai/kenkeep/nodes/misc/map-channel-buffers.md")
	git(t, k, "-c", "user.name=p", "-c", "user.email=p@p", "commit", "-qm", "the person's version", "--", ".ai/kenkeep/nodes/misc/map-channel-buffers.md")
	head := git(t, k, "rev-parse", "HEAD")
	if err := last(ctx); !errors.Is(err, jobqueue.ErrHeld) || !strings.Contains(err.Error(), "misc/map-channel-buffers.md") {
		t.Fatalf("the move's commit over the person's commit of the note: %v", err)
	}
	if got := git(t, k, "rev-parse", "HEAD"); got != head {
		t.Fatalf("the job made a commit:\n%s", git(t, k, "show", "--stat", "HEAD"))
	}
	if got := git(t, k, "show", "HEAD:.ai/kenkeep/nodes/misc/map-channel-buffers.md"); got+"\n" != persons {
		t.Errorf("the tip's note:\n%s\nwant the person's:\n%s", got, persons)
	}
}
