package serve

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/store"
)

// refHook installs a reference-transaction hook in k's repository that
// runs body at the "prepared" state while the file flag exists, and
// returns flag (not yet made).
func refHook(t *testing.T, k *store.KB, body string) string {
	t.Helper()
	return hookWhile(t, k, "reference-transaction", `[ "$1" = prepared ]`, body)
}

// hookWhile installs the hook name in k's repository, running body when
// cond holds and the file flag exists, and returns flag (not yet made).
func hookWhile(t *testing.T, k *store.KB, name, cond, body string) string {
	t.Helper()
	flag := filepath.Join(t.TempDir(), "hook-on")
	hook := filepath.Join(k.Root, ".git", "hooks", name)
	if err := os.MkdirAll(filepath.Dir(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\nif " + cond + " && [ -e " + flag + " ]; then\n" + body + "\nfi\nexit 0\n"
	if err := os.WriteFile(hook, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return flag
}

// TestAReferenceTransactionHookThatRefuses: the person's
// reference-transaction hook refuses the branch's move (exit 1, as a
// policy hook does). The job fails, as for any commit the repository
// refuses (TestAFailedCommitLeavesNothing: a hook may judge the commit
// it is shown, and a job it refuses must not hold every job after it),
// its files put back; its error named git's words alone ("git
// update-ref: … fatal: ref updates aborted by hook"): it now names the
// hook, what it said and what to do. Once the hook lets the branch
// move, posts are done as before.
func TestAReferenceTransactionHookThatRefuses(t *testing.T) {
	k := newRepo(t, 0)
	flag := refHook(t, k, "echo 'the policy hook refuses: ticket number missing' >&2; exit 1")
	s := start(t, k, nil)
	writeFile(t, flag, "")
	head := git(t, k, "rev-parse", "HEAD")
	for _, title := range []string{"Refused once", "Refused twice"} {
		j := s.wait(t, s.postAsync(t, title))
		if j.Status != "failed" || !strings.Contains(j.Error, "ticket number missing") || !strings.Contains(j.Error, filepath.Join(".git", "hooks", "reference-transaction")) || !strings.Contains(j.Error, "fix the hook") {
			t.Errorf("a job the hook refused: %+v", j)
		}
	}
	if got := git(t, k, "rev-parse", "HEAD"); got != head {
		t.Fatalf("a commit while the hook refuses:\n%s", git(t, k, "log", "--oneline", "-3"))
	}
	clean(t, k)
	if err := os.Remove(flag); err != nil {
		t.Fatal(err)
	}
	j := s.wait(t, s.postAsync(t, "Once the hook lets it"))
	if j.Status != "done" {
		t.Fatalf("a job once the hook lets it: %+v", j)
	}
	jobCommit(t, k, "store", j)
	clean(t, k)
}

// TestAHookThatHangs: the person's reference-transaction hook (run by
// kk's git update-ref) or post-index-change hook (run by its git
// update-index) that does not end (waiting on a network that never
// answers): /healthz said ok while the job waited for ever, and SIGTERM
// (the server's stop) never ended kk serve, which kept git's locks and
// its own. The commit waits for the hook as for a held lock: /healthz
// says so, naming the hook; the stop ends the wait (the hook and its git
// are ended, their locks removed) and leaves the job for the next start,
// where it is done with one commit.
func TestAHookThatHangs(t *testing.T) {
	for _, tc := range []struct{ hook, cond string }{
		{"reference-transaction", `[ "$1" = prepared ]`},
		{"post-index-change", "true"},
	} {
		t.Run(tc.hook, func(t *testing.T) {
			k := newRepo(t, 0)
			flag := hookWhile(t, k, tc.hook, tc.cond, "while :; do sleep 0.1; done")
			s := start(t, k, nil)
			writeFile(t, flag, "")
			id := s.postAsync(t, "Behind a hook that hangs")
			s.waitHealth(t, filepath.Join(".git", "hooks", tc.hook))
			stopped := make(chan struct{})
			go func() { s.stop(); close(stopped) }()
			select {
			case <-stopped:
			case <-time.After(time.Minute):
				t.Fatal("the server's stop did not end while the hook hung")
			}
			for _, lock := range []string{"HEAD.lock", filepath.Join("refs", "heads", "main.lock")} {
				if _, err := os.Stat(filepath.Join(k.Root, ".git", lock)); err == nil {
					t.Errorf(".git/%s is left after the stop", lock)
				}
			}
			if err := os.Remove(flag); err != nil {
				t.Fatal(err)
			}
			s = start(t, k, nil)
			j := s.wait(t, id)
			if j.Status != "done" {
				t.Fatalf("the job after the restart: %+v", j)
			}
			jobCommit(t, k, "store", j)
			clean(t, k)
		})
	}
}

// TestAModelThatNeverAnswersDoesNotHoldTheStop: a model that takes the
// request and never answers (a stuck server or proxy) held kk serve's
// stop (SIGTERM, Ctrl-C) for as long as the provider's tries last, up
// to four timeouts of two minutes, while /healthz said ok. The placement
// now ends at the stop (10 s later, so that a model about to answer
// still places the note): nothing was written, and the job is run again
// at the next start.
func TestAModelThatNeverAnswersDoesNotHoldTheStop(t *testing.T) {
	k := newRepo(t, 0)
	got := make(chan struct{}, 16)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	s := start(t, k, provider(t, srv.URL))
	head := git(t, k, "rev-parse", "HEAD")
	id := s.postAsync(t, "Placed by a model that never answers")
	<-got
	stopped := make(chan struct{})
	go func() { s.stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(time.Minute):
		t.Fatal("the server's stop did not end while the model did not answer")
	}
	if got := git(t, k, "rev-parse", "HEAD"); got != head {
		t.Fatalf("a commit during the stop: %s", git(t, k, "log", "--oneline", "-2"))
	}
	s = start(t, k, nil)
	j := s.wait(t, id)
	if j.Status != "done" {
		t.Fatalf("the job after the restart: %+v", j)
	}
	jobCommit(t, k, "store", j)
	clean(t, k)
}
