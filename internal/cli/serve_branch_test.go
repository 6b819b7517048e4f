//go:build unix

package cli

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/httpapi"
)

// A kk serve restarted while a person has another branch checked out
// (a git checkout -b and back, in the instant a service manager restarts
// a killed server) served that branch, as a start does, though its queue
// held jobs accepted for the branch served before: they ran on the
// person's branch, or, once the person was back, were held for ever
// ("kk serve serves the branch side …"). The start now keeps the branch
// the queued jobs were accepted for, and they wait until it is checked
// out again. Found by TestServeSoakKill9 (KK_SOAK_PERSON_GIT=1,
// KK_SOAK_SEED=7, iteration 29).
func TestServeRestartKeepsTheBranchOfItsQueue(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	t.Parallel()
	ctx := context.Background()
	root := filepath.Join(t.TempDir(), "kb")
	s := startCrashServer(t, root, 0)
	wait := func(s *crashServer, id string) httpapi.JobStatus {
		t.Helper()
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		j, err := s.client.Wait(wctx, id, 10*time.Millisecond)
		if err != nil {
			t.Fatalf("job %s: %v\n%s", id, err, s.log)
		}
		return j
	}
	j, err := s.client.Post(ctx, httpapi.PostRequest{Title: "First", Content: "Committed on main.\n"})
	if err != nil {
		t.Fatal(err)
	}
	if j = wait(s, j.JobID); j.Status != "done" {
		t.Fatalf("first job: %+v", j)
	}
	git := func(args ...string) string {
		t.Helper()
		out, err := gitx.Run(ctx, root, args...)
		if err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	// The person goes to a branch of theirs; a job comes, and waits.
	git("checkout", "-q", "-b", "side")
	j, err = s.client.Post(ctx, httpapi.PostRequest{Title: "Second", Content: "Accepted while the person was on side.\n"})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		got, err := s.client.Job(ctx, j.JobID)
		if err == nil && strings.Contains(got.WaitingFor, "side") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job never waited for main: %+v %v\n%s", got, err, s.log)
		}
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Wait(); err != nil {
		t.Fatalf("kk serve after SIGTERM: %v\n%s", err, s.log)
	}

	// Restarted while side is checked out: the job still waits for main.
	s = startCrashServer(t, root, 0)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		got, err := s.client.Job(ctx, j.JobID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Final() {
			t.Fatalf("the job ran while side was checked out: %+v\n%s", got, s.log)
		}
		if strings.Contains(got.WaitingFor, "side") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job never waited for main after the restart: %+v\n%s", got, s.log)
		}
	}
	git("checkout", "-q", "main")
	if got := wait(s, j.JobID); got.Status != "done" {
		t.Fatalf("second job: %+v\n%s", got, s.log)
	}
	if n := strings.Count(git("log", "--format=%s", "main"), "("+j.JobID+"): "); n != 1 {
		t.Errorf("main holds %d commits of the job", n)
	}
	if n := strings.Count(git("log", "--format=%s", "side"), "("+j.JobID+"): "); n != 0 {
		t.Errorf("side holds %d commits of the job", n)
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Wait(); err != nil {
		t.Errorf("kk serve after SIGTERM: %v", err)
	}
}
