package serve

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/httpapi"
)

// TestStartDuringAPersonsRebaseOrBisect: kk serve (re)started while a
// person's rebase of the branch is stopped halfway (at a conflict), or a
// bisect runs, finds HEAD detached, as a running server does; the branch
// the operation returns to is the one served. It starts, holds the jobs
// posted meanwhile (/healthz says why), and once the person ends the
// operation, commits them on that branch, one commit each. It refused to
// start before ("HEAD is detached: check out the branch to serve (git
// switch <branch>)": advice that, followed during a rebase, leaves it
// halfway). Found by the serve red team, round 5: kill -9 of kk serve,
// then a rebase stopped at a conflict, then a restart.
func TestStartDuringAPersonsRebaseOrBisect(t *testing.T) {
	for _, tc := range []struct {
		name       string
		begin, end func(t *testing.T, s *server)
	}{
		{"rebase", func(t *testing.T, s *server) {
			if _, err := gitx.Run(ctx, s.KB.Root, "rebase", "base"); err == nil {
				t.Fatal("the rebase did not stop at the conflict")
			}
		}, func(t *testing.T, s *server) { git(t, s.KB, "rebase", "--abort") }},
		{"bisect", func(t *testing.T, s *server) {
			git(t, s.KB, "bisect", "start", "HEAD", "HEAD~2")
		}, func(t *testing.T, s *server) { git(t, s.KB, "bisect", "reset") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newRepo(t, 0)
			s := start(t, k, nil)
			s.post(t, httpapi.PostRequest{Title: "Before", Content: "Before.\n"})
			s.stop()
			git(t, k, "config", "user.name", "p")
			git(t, k, "config", "user.email", "p@p")
			person := filepath.Join(k.Root, "person.txt")
			for i, side := range []struct{ branch, text string }{{"base", "base\n"}, {"main", "main\n"}} {
				if i == 0 {
					git(t, k, "switch", "-q", "-c", side.branch)
				} else {
					git(t, k, "switch", "-q", side.branch)
				}
				if err := os.WriteFile(person, []byte(side.text), 0o644); err != nil {
					t.Fatal(err)
				}
				git(t, k, "add", "person.txt")
				git(t, k, "commit", "-qm", "person on "+side.branch)
			}
			s = &server{KB: k}
			tc.begin(t, s)
			if _, err := gitx.Read(ctx, k.Root, "symbolic-ref", "-q", "HEAD"); err == nil {
				t.Fatalf("HEAD is not detached: %s\n%s", git(t, k, "status"), git(t, k, "log", "--oneline"))
			}
			b := New(Options{KB: k})
			if err := b.Open(context.Background()); err != nil {
				t.Fatalf("a start during the person's %s: %v", tc.name, err)
			}
			if b.Branch() != "main" {
				t.Errorf("serving %q; want main", b.Branch())
			}
			_ = b.Close()
			s = start(t, k, nil)
			id := s.postAsync(t, "Posted during the "+tc.name)
			s.waitHealth(t, "main")
			if j, _ := s.Client.Job(ctx, id); j.Status == "done" || j.Status == "failed" {
				t.Fatalf("the job ended during the person's %s: %+v", tc.name, j)
			}
			tc.end(t, s)
			j := s.waitJob(t, id, 30*time.Second)
			if j.Status != "done" {
				t.Fatalf("the job once the %s ended: %+v", tc.name, j)
			}
			jobCommit(t, k, "store", j)
			if got := git(t, k, "log", "-1", "--format=%s", "main"); !strings.Contains(got, id) {
				t.Errorf("main's tip is %q, not the job's commit", got)
			}
			clean(t, k)
		})
	}
}
