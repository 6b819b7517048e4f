package serve

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/store"
)

// TestFaultJobGitThatHangsIsNamedAndEndsWithTheStop: a git command of a
// job that never ends (here git hash-object of the commit's files, which
// runs a clean filter of .gitattributes that hangs: git-lfs waiting on a
// stalled server, a network file system) held the job "processing" for
// ever while /healthz said ok, and kk serve's stop (SIGTERM) never
// ended: the stop waits for the job in progress, and nothing ended its
// git command. /healthz now names the git command the job waits for;
// the stop ends it 10 s later, the job is left to the next start, which
// (the filter fixed) commits it once.
func TestFaultJobGitThatHangsIsNamedAndEndsWithTheStop(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	head := git(t, k, "rev-parse", "HEAD")
	attrs := stallFilter(t, k, "*.md", "clean")
	id := s.postAsync(t, "Held by a filter that hangs")
	s.waitHealth(t, "git hash-object")
	stopped := make(chan struct{})
	go func() { s.stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(2 * time.Minute):
		t.Fatal("the server's stop did not end while the job's git command hung")
	}
	if got := git(t, k, "rev-parse", "HEAD"); got != head {
		t.Fatalf("a commit during the stop: %s", git(t, k, "log", "--oneline", "-2"))
	}
	git(t, k, "config", "--unset", "filter.stall.clean")
	if err := os.Remove(attrs); err != nil {
		t.Fatal(err)
	}
	s = start(t, k, nil)
	j := s.wait(t, id)
	if j.Status != "done" {
		t.Fatalf("the job after the restart: %+v", j)
	}
	jobCommit(t, k, "store", j)
	clean(t, k)
}

// TestFaultShareRebaseThatHangsEndsWithTheStop: the --push-every tick's
// rebase runs to its end whatever the stop (it is never left halfway),
// and so a rebase whose checkout runs a smudge filter of the person's
// that never ends held the tick, every job and the server's stop for
// ever. It now ends stopGrace after the stop (or after RebaseTimeout)
// and is aborted: the branch is as it was, with the job's commit, and
// no rebase is left in progress.
func TestFaultShareRebaseThatHangsEndsWithTheStop(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	remote := filepath.Join(t.TempDir(), "remote.git")
	git(t, k, "init", "-q", "--bare", remote)
	git(t, k, "remote", "add", "origin", remote)
	s.Backend.Share(ctx)
	// A colleague's note lands on origin.
	other := filepath.Join(t.TempDir(), "other")
	git(t, k, "clone", "-q", "-b", "main", remote, other)
	note := filepath.Join(other, "colleague.md")
	if err := os.WriteFile(note, []byte("A colleague's note.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, k, "-C", other, "add", "colleague.md")
	git(t, k, "-C", other, "-c", "user.name=c", "-c", "user.email=c@c", "commit", "-q", "-m", "colleague")
	git(t, k, "-C", other, "push", "-q", "origin", "HEAD:main")
	if j := s.post(t, httpapi.PostRequest{Title: "Local", Content: "Committed here first.\n"}); j.Status != "done" {
		t.Fatalf("post: %+v", j)
	}
	tip := git(t, k, "rev-parse", "HEAD")
	// Every note: the replay's work tree checks out the knowledge base's
	// folder.
	attrs := stallFilter(t, k, "*.md", "smudge")
	shared := make(chan struct{})
	go func() { s.Backend.Share(ctx); close(shared) }()
	// The replay has started (kk's own work tree is there, its checkout
	// held by the filter), then the stop comes.
	marker := filepath.Join(k.Root, ".git", "kk-share")
	for i := 0; ; i++ {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if i == 3000 {
			t.Fatal("the tick's rebase never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // into the checkout's filter
	go s.stop()
	select {
	case <-shared:
	case <-time.After(2 * time.Minute):
		t.Fatal("the tick's rebase still runs after the stop")
	}
	git(t, k, "config", "--unset", "filter.stall.smudge")
	if err := os.Remove(attrs); err != nil {
		t.Fatal(err)
	}
	if got := git(t, k, "rev-parse", "HEAD"); got != tip {
		t.Errorf("HEAD %s after the stopped rebase; want the job's commit %s, as before it", got, tip)
	}
	for _, d := range []string{"rebase-merge", "rebase-apply"} {
		if _, err := os.Stat(filepath.Join(k.Root, ".git", d)); err == nil {
			t.Errorf("a rebase is left in progress (.git/%s)", d)
		}
	}
	if st := git(t, k, "status", "--porcelain"); st != "" {
		t.Errorf("work tree not clean:\n%s", st)
	}
}

// stallFilter gives the files matching pattern in k's repository a git
// filter whose kind (clean or smudge) never ends: it sleeps 300 s, bounded
// so that a failing run ends, far past the tests' waits. It returns the
// attributes file that names the filter.
func stallFilter(t *testing.T, k *store.KB, pattern, kind string) string {
	t.Helper()
	stall := filepath.Join(t.TempDir(), "stall")
	if err := os.WriteFile(stall, []byte("#!/bin/sh\nexec sleep 300\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	attrs := filepath.Join(k.Root, ".git", "info", "attributes")
	if err := os.MkdirAll(filepath.Dir(attrs), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(attrs, []byte(pattern+" filter=stall\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, k, "config", "filter.stall."+kind, stall)
	return attrs
}
