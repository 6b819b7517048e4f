//go:build unix

package cli

// The fault suite of kk serve with real processes (see also
// internal/serve/fault_test.go): signals to the whole process group, a
// stop during the push tick's rebase, and kill -9 across the commit.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/httpapi"
)

// groupServer starts kk serve in a process group of its own (as systemd
// or a shell's job control would), with extra arguments.
func groupServer(t *testing.T, root string, delay time.Duration, args ...string) *crashServer {
	t.Helper()
	s := startCrashServerWith(t, root, delay, func(cmd *exec.Cmd) {
		cmd.Args = append(cmd.Args, args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	})
	return s
}

// signalGroup sends sig to the server's whole process group and waits
// for the server to end; it returns how it ended.
func (s *crashServer) signalGroup(t *testing.T, sig syscall.Signal) error {
	t.Helper()
	if err := syscall.Kill(-s.cmd.Process.Pid, sig); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(2 * time.Minute):
		if err := s.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		t.Fatalf("kk serve did not stop after %v:\n%s", sig, s.log)
		return nil
	}
}

// waitAll waits for every job and checks it ended done with exactly one
// commit, or failed with none.
func waitAll(t *testing.T, root string, c *httpapi.Client, ids []string, log fmt.Stringer) (done, failed int) {
	t.Helper()
	ctx := context.Background()
	subjects, statuses := "", map[string]httpapi.JobStatus{}
	for _, id := range ids {
		wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		j, err := c.Wait(wctx, id, 10*time.Millisecond)
		cancel()
		if err != nil {
			t.Fatalf("job %s: %v\n%s", id, err, log)
		}
		statuses[id] = j
	}
	out, err := gitx.Read(ctx, root, "log", "--format=%s", "main")
	if err != nil {
		t.Fatal(err)
	}
	subjects = string(out)
	for _, id := range ids {
		j := statuses[id]
		n := strings.Count(subjects, "("+id+"): ")
		switch {
		case j.Status == "done" && n == 1:
			done++
		case j.Status == "failed" && n == 0:
			failed++
			t.Logf("job %s failed: %s", id, j.Error)
		default:
			t.Errorf("job %s ended %s (%s) with %d commits", id, j.Status, j.Error, n)
		}
	}
	return done, failed
}

// noLocks checks that no git lock file is left in the repository.
func noLocks(t *testing.T, root string) {
	t.Helper()
	if err := filepath.WalkDir(filepath.Join(root, ".git"), func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".lock") {
			t.Errorf("lock left: %s", p)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// SIGTERM to kk serve's whole process group (systemd's stop, kill --
// -PGID) while a job's commit runs git: git runs in a group of its own,
// so the job's commit lands, kk serve exits 0, and every job accepted
// ends done with exactly one commit (the rest after the next start).
func TestServeFaultSigtermToTheProcessGroup(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	if testing.Short() {
		t.Skip("runs kk serve twice")
	}
	t.Parallel()
	ctx := context.Background()
	root := filepath.Join(t.TempDir(), "kb")
	s := groupServer(t, root, 0)
	// A repository hook that keeps each commit's git update-ref busy for
	// a moment, and says when.
	marker := filepath.Join(t.TempDir(), "hook-ran")
	hook := filepath.Join(root, ".git", "hooks", "reference-transaction")
	if err := os.MkdirAll(filepath.Dir(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hook, []byte("#!/bin/sh\n[ \"$1\" = prepared ] && { touch "+marker+"; sleep 1; }\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 4 {
		j, err := s.client.Post(ctx, httpapi.PostRequest{Title: fmt.Sprintf("Stopped %d", i), Content: "A job the stop must not lose.\n"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.JobID)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no commit ever ran its hook:\n%s", s.log)
		}
	}
	if err := s.signalGroup(t, syscall.SIGTERM); err != nil {
		t.Fatalf("kk serve after SIGTERM to its group: %v\n%s", err, s.log)
	}
	if err := os.Remove(hook); err != nil {
		t.Fatal(err)
	}
	s = startCrashServer(t, root, 0)
	done, failed := waitAll(t, root, s.client, ids, s.log)
	if failed > 0 || done != len(ids) {
		t.Errorf("%d done, %d failed of %d\n%s", done, failed, len(ids), s.log)
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	noLocks(t, root)
}

// SIGTERM to the process group while --push-every's rebase runs (a merge
// driver makes it slow, and says when it runs): the rebase finishes (or
// is aborted), never left halfway; the branch is checked out again, no
// lock is left, and the jobs are on the branch.
func TestServeFaultSigtermDuringThePushRebase(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	if testing.Short() {
		t.Skip("runs kk serve with --push-every")
	}
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	root := filepath.Join(dir, "kb")
	origin := filepath.Join(dir, "origin.git")
	other := filepath.Join(dir, "other")
	s := groupServer(t, root, 0)
	run := func(dir string, args ...string) {
		t.Helper()
		if _, err := gitx.Run(ctx, dir, args...); err != nil {
			t.Fatal(err)
		}
	}
	run(dir, "init", "-q", "--bare", "-b", "main", origin)
	run(root, "remote", "add", "origin", origin)
	run(root, "push", "-q", "origin", "main")
	run(dir, "clone", "-q", origin, other)
	// Two jobs, committed locally.
	var ids []string
	for i := range 2 {
		j, err := s.client.Post(ctx, httpapi.PostRequest{Title: fmt.Sprintf("Local %d", i), Content: "Committed here first.\n"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.JobID)
	}
	waitAll(t, root, s.client, ids, s.log)
	if err := s.signalGroup(t, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// The other clone changes ENTRY.md too, so that the rebase merges it,
	// through a slow merge driver that says when it runs.
	entry := filepath.Join(other, ".ai", "kenkeep", "ENTRY.md")
	data, err := os.ReadFile(entry)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(entry, append(data, "\nA line from another clone.\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	run(other, "-c", "user.name=o", "-c", "user.email=o@o", "commit", "-qam", "other clone")
	run(other, "push", "-q", "origin", "main")
	marker := filepath.Join(dir, "driver-ran")
	run(root, "config", "merge.slow.driver", "touch "+marker+"; sleep 2; cp %B %A")
	if err := os.WriteFile(filepath.Join(root, ".git", "info", "attributes"), []byte("ENTRY.md merge=slow\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s = groupServer(t, root, 0, "--push-every", "200ms")
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the push tick's rebase never merged ENTRY.md:\n%s", s.log)
		}
	}
	if err := s.signalGroup(t, syscall.SIGTERM); err != nil {
		t.Fatalf("kk serve after SIGTERM during the rebase: %v\n%s", err, s.log)
	}
	if gitx.RebaseInProgress(filepath.Join(root, ".git")) {
		t.Fatalf("the rebase was left halfway:\n%s", s.log)
	}
	if b, err := gitx.Read(ctx, root, "symbolic-ref", "--short", "HEAD"); err != nil || strings.TrimSpace(string(b)) != "main" {
		t.Errorf("HEAD after the stop: %q %v", b, err)
	}
	noLocks(t, root)
	out, _ := gitx.Read(ctx, root, "log", "--format=%s", "main")
	for _, id := range ids {
		if strings.Count(string(out), "("+id+"): ") != 1 {
			t.Errorf("job %s: history\n%s", id, out)
		}
	}
	if st, _ := gitx.Read(ctx, root, "status", "--porcelain"); len(st) > 0 {
		t.Errorf("status after the stop:\n%s", st)
	}
}

// killRounds is how many times TestServeKill9AcrossTheCommit kills kk
// serve; KK_SERVE_KILL_ROUNDS asks for more (scripts/serve-kill9.sh
// runs 100).
func killRounds(t *testing.T) int {
	if v := os.Getenv("KK_SERVE_KILL_ROUNDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("KK_SERVE_KILL_ROUNDS=%q", v)
		}
		return n
	}
	return 12
}

// kill -9 of a real kk serve at random points across its jobs' writes
// and commits, round after round: the server restarts every time without
// a person, every job accepted ends done with exactly one commit or
// failed with none, no lock is left, git status is clean and git fsck
// finds nothing wrong.
func TestServeKill9AcrossTheCommit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	if testing.Short() {
		t.Skip("kills and restarts kk serve")
	}
	t.Parallel()
	ctx := context.Background()
	root := filepath.Join(t.TempDir(), "kb")
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 1))
	t.Logf("seed %d", seed)
	rounds := killRounds(t)
	var all []string
	for round := range rounds {
		s := startCrashServer(t, root, 15*time.Millisecond)
		for i := range 4 {
			j, err := s.client.Post(ctx, httpapi.PostRequest{Title: fmt.Sprintf("Kill round %d note %d", round, i), Content: "Posted before a kill -9.\n"})
			if err != nil {
				t.Fatalf("round %d: %v\n%s", round, err, s.log)
			}
			all = append(all, j.JobID)
		}
		time.Sleep(time.Duration(rng.IntN(400)) * time.Millisecond)
		s.kill(t)
	}
	s := startCrashServer(t, root, 0)
	done, failed := waitAll(t, root, s.client, all, s.log)
	t.Logf("%d rounds: %d jobs done, %d failed", rounds, done, failed)
	if st, err := gitx.Read(ctx, root, "status", "--porcelain", "--untracked-files=all"); err != nil || len(st) > 0 {
		t.Errorf("status: %s %v", st, err)
	}
	if out, err := gitx.Run(ctx, root, "fsck", "--strict", "--no-dangling"); err != nil {
		t.Errorf("git fsck: %v %s", err, out)
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Wait(); err != nil {
		t.Errorf("kk serve after SIGTERM: %v", err)
	}
	noLocks(t, root)
}

// SIGHUP to kk serve's process group while a job's commit runs (the
// terminal it runs in is closed, an ssh session drops) stops it as
// SIGTERM does: the commit lands, kk serve exits 0 and leaves no lock,
// and the jobs left are done after the next start. Found by the QA run:
// SIGHUP ended kk serve at once (Go's default), in the middle of the
// commit, leaving kk's index.lock to block the person's git until kk
// serve started again.
func TestServeFaultSighupDuringTheCommit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	t.Parallel()
	ctx := context.Background()
	root := filepath.Join(t.TempDir(), "kb")
	s := groupServer(t, root, 0)
	marker := filepath.Join(t.TempDir(), "hook-ran")
	hook := filepath.Join(root, ".git", "hooks", "reference-transaction")
	if err := os.MkdirAll(filepath.Dir(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hook, []byte("#!/bin/sh\n[ \"$1\" = prepared ] && { touch "+marker+"; sleep 1; }\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 3 {
		j, err := s.client.Post(ctx, httpapi.PostRequest{Title: fmt.Sprintf("Hung up %d", i), Content: "A job the hangup must not lose.\n"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.JobID)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no commit ever ran its hook:\n%s", s.log)
		}
	}
	if err := s.signalGroup(t, syscall.SIGHUP); err != nil {
		t.Fatalf("kk serve after SIGHUP to its group: %v\n%s", err, s.log)
	}
	noLocks(t, root)
	if err := os.Remove(hook); err != nil {
		t.Fatal(err)
	}
	s = startCrashServer(t, root, 0)
	done, failed := waitAll(t, root, s.client, ids, s.log)
	if failed > 0 || done != len(ids) {
		t.Errorf("%d done, %d failed of %d\n%s", done, failed, len(ids), s.log)
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	noLocks(t, root)
}
