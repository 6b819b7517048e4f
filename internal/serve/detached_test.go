package serve

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/index"
)

// TestDetachedHEADIsRefused: kk serve pins the branch it serves, so on a
// detached HEAD it refuses to start, saying how to go on, and makes no
// commit and no index folder (it once committed there and made one index
// folder per commit: 38 folders for 40 jobs). The one index of a detached
// HEAD is the index package's (TestDetachedHEADHasOneIndex).
func TestDetachedHEADIsRefused(t *testing.T) {
	k := newRepo(t, 0)
	head := git(t, k, "rev-parse", "HEAD")
	git(t, k, "checkout", "-q", "--detach")
	b := New(Options{KB: k})
	err := b.Open(context.Background())
	if err == nil || !strings.Contains(err.Error(), "HEAD is detached") || !strings.Contains(err.Error(), "git switch") {
		t.Fatalf("Open on a detached HEAD: %v", err)
	}
	if got := git(t, k, "rev-parse", "HEAD"); got != head {
		t.Errorf("HEAD moved from %s to %s", head, got)
	}
	entries, err := os.ReadDir(index.BranchesDir(k))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var folders []string
	for _, e := range entries {
		if e.IsDir() {
			folders = append(folders, e.Name())
		}
	}
	// main's is the one made while the repository was set up, on main.
	if slices.Contains(folders, index.DetachedHEAD) {
		t.Errorf("index folders after a refused start: %v", folders)
	}
}

// TestHealthSaysWhatIsWrongWithHEAD: HEAD's file spoiled under a running
// server (a script's echo into .git/HEAD, a crash of an editor, a
// checkout of a branch that does not exist). Found by the serve10 red
// team: /healthz called every such HEAD "a detached HEAD", which sent the
// person looking for a git switch that could not help (with junk in HEAD
// git takes the folder for no repository at all). It names the file,
// what it holds, and the line that puts the served branch back; the jobs
// wait, and run once HEAD is mended.
func TestHealthSaysWhatIsWrongWithHEAD(t *testing.T) {
	for _, c := range []struct {
		name, head string
		want       []string
	}{
		{"junk", "garbage\n", []string{"neither a branch nor a commit", `"garbage"`, "ref: refs/heads/main"}},
		{"empty", "", []string{"empty", "ref: refs/heads/main"}},
		{"not a ref", "ref: nonsense\n", []string{`"nonsense"`, "ref: refs/heads/main"}},
		{"missing branch", "ref: refs/heads/no-such-branch\n", []string{"no-such-branch", "does not exist", "git switch main"}},
		{"not a branch", "ref: refs/tags/v9\n", []string{"refs/tags/v9", "not a branch", "git switch main"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := newRepo(t, 0)
			s := start(t, k, nil)
			s.post(t, httpapi.PostRequest{Title: "Before", Content: "Before.\n"})
			headFile := filepath.Join(k.Root, ".git", "HEAD")
			before, err := os.ReadFile(headFile)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(headFile, []byte(c.head), 0o644); err != nil {
				t.Fatal(err)
			}
			id := s.postAsync(t, "While HEAD is spoiled")
			h := s.waitHealth(t, "HEAD")
			if strings.Contains(h.WaitingFor, "detached") {
				t.Errorf("/healthz calls a spoiled HEAD detached: %s", h.WaitingFor)
			}
			for _, w := range append(c.want, headFile) {
				if !strings.Contains(h.WaitingFor, w) {
					t.Errorf("/healthz does not say %q: %s", w, h.WaitingFor)
				}
			}
			if j, _ := s.Queue.Get(id); j.Status.Final() {
				t.Fatalf("the job ended while HEAD was spoiled: %+v", j)
			}
			if err := os.WriteFile(headFile, before, 0o644); err != nil {
				t.Fatal(err)
			}
			if j := s.waitJob(t, id, time.Minute); j.Status != "done" {
				t.Errorf("the job once HEAD was mended: %+v", j)
			}
			clean(t, k)
		})
	}
}

// TestStartSaysWhatIsWrongWithHEAD: a start over a HEAD file holding junk
// said only git's "not a git repository" for a folder that plainly is
// one; it names the HEAD file and how to mend it.
func TestStartSaysWhatIsWrongWithHEAD(t *testing.T) {
	k := newRepo(t, 0)
	headFile := filepath.Join(k.Root, ".git", "HEAD")
	if err := os.WriteFile(headFile, []byte("garbage\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b := New(Options{KB: k})
	t.Cleanup(func() { _ = b.Close() })
	err := b.Open(context.Background())
	if err == nil || !strings.Contains(err.Error(), headFile) || !strings.Contains(err.Error(), "ref: refs/heads/") || strings.Contains(err.Error(), "detached") {
		t.Fatalf("Open over a spoiled HEAD: %v", err)
	}
}

// TestHealthSaysHEADIsSpoiledWhileIdle: HEAD's file spoiled under a
// server with no job queued. /healthz said "ok" until a job came and was
// held: a monitor learned of it only from a post that then waited. As
// for a work tree removed under the server, /healthz says it at once.
func TestHealthSaysHEADIsSpoiledWhileIdle(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	s.post(t, httpapi.PostRequest{Title: "Before", Content: "Before.\n"})
	headFile := filepath.Join(k.Root, ".git", "HEAD")
	before, err := os.ReadFile(headFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(headFile, []byte("garbage\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if h := s.health(t); h.Status != "waiting" || !strings.Contains(h.WaitingFor, headFile) || h.QueueDepth != 0 {
		t.Errorf("/healthz of an idle server whose HEAD is spoiled: %+v", h)
	}
	if err := os.WriteFile(headFile, before, 0o644); err != nil {
		t.Fatal(err)
	}
	if h := s.health(t); h.Status != "ok" {
		t.Errorf("/healthz once HEAD is mended: %+v", h)
	}
}
