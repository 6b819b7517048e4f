package gitx

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// commitBeside makes a commit on HEAD, with git's plumbing and an index of
// its own (git's index, the work tree and the branch are left alone),
// whose files are HEAD's with written set and removed left out, and
// returns its id.
func commitBeside(t *testing.T, dir string, written map[string]string, removed ...string) string {
	t.Helper()
	env := append(os.Environ(), "GIT_INDEX_FILE="+filepath.Join(t.TempDir(), "index"))
	run := func(stdin string, args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env, cmd.Stdin = dir, env, strings.NewReader(stdin)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	run("", "read-tree", "HEAD")
	for p, data := range written {
		blob := run(data, "hash-object", "-w", "--stdin")
		run("", "update-index", "--add", "--cacheinfo", "100644,"+blob+","+p)
	}
	for _, p := range removed {
		run("", "update-index", "--force-remove", p)
	}
	return run("", "commit-tree", "-p", "HEAD", "-m", "beside", run("", "write-tree"))
}

// A kk serve killed in the middle of Repo.MoveTo, after git read-tree
// wrote the new commit's files into the work tree, left them there with
// the branch and git's index at the old commit: every later tick refused
// to move ("Untracked working tree file … would be overwritten"), and the
// files showed as a person's changes (TestServeSoakKill9 with
// KK_SOAK_PUSH=1 KK_SOAK_SEED=7, iteration 35). Killed after the branch
// moved, git's index was left at the old commit. The next open's
// FinishMove sets either right, the person's own files untouched.
func TestMoveKilledHalfwayIsFinishedByTheNextStart(t *testing.T) {
	for _, point := range []string{"tree", "moved"} {
		t.Run(point, func(t *testing.T) {
			ctx := context.Background()
			dir, from, to := killedMove(t, point)

			r2 := openRepo(t, dir)
			did, err := r2.FinishMove(ctx)
			if err != nil || did == "" {
				t.Fatalf("FinishMove: %q, %v", did, err)
			}
			want := map[string]string{"tree": from, "moved": to}[point]
			if got := gitOut(t, dir, "rev-parse", "HEAD"); got != want {
				t.Errorf("HEAD at %s, want %s", got, want)
			}
			if got := gitOut(t, dir, "status", "--porcelain"); got != "?? mine.txt" {
				t.Errorf("git status after FinishMove:\n%s\nwant only the person's mine.txt", got)
			}
			if got, err := os.ReadFile(filepath.Join(dir, "mine.txt")); err != nil || string(got) != "the person's" {
				t.Errorf("the person's mine.txt (%v): %q", err, got)
			}
			if _, err := os.Stat(filepath.Join(dir, ".git", "kk-move")); err == nil {
				t.Error("the record of the move is left")
			}
			if did, err := r2.FinishMove(ctx); did != "" || err != nil {
				t.Errorf("a second FinishMove: %q, %v", did, err)
			}
			if point == "tree" {
				if err := r2.MoveTo(ctx, from, to, nil, nil); err != nil {
					t.Fatalf("the move again: %v", err)
				}
				if got := gitOut(t, dir, "status", "--porcelain"); got != "?? mine.txt" {
					t.Errorf("git status after the move:\n%s", got)
				}
			}
			fsck(t, dir)
		})
	}
}

// A person's git commit may land between a killed move and the next
// start's FinishMove: the start frees git's index (RemoveStaleLocks), and
// git commit reads the index before it locks it, so the commit is made
// from the index as the kill left it. FinishMove then finds the branch
// at neither end of the move, and left it all as it was: killed after
// the branch moved, a colleague's file the move brought in stayed out of
// git's index for good, deleted and untracked in git status
// (TestServeSoakKill9, seed 802 iteration 27); killed before, the files
// the move wrote stayed in the work tree, untracked, in the way of every
// later move. A branch past either end is now set right as that end is,
// for the files the person's commit left as that end holds them.
func TestMoveKilledHalfwayThenAPersonsCommit(t *testing.T) {
	for _, point := range []string{"tree", "moved"} {
		t.Run(point, func(t *testing.T) {
			ctx := context.Background()
			dir, from, to := killedMove(t, point)
			// The person commits their own file, and one the move
			// changed, from git's index as the kill left it.
			write(t, dir, "a.md", "the person's a\n")
			gitOut(t, dir, "add", "--", "mine.txt", "a.md")
			gitOut(t, dir, "commit", "-q", "-m", "person", "--", "mine.txt", "a.md")
			person := gitOut(t, dir, "rev-parse", "HEAD")

			r2 := openRepo(t, dir)
			did, err := r2.FinishMove(ctx)
			if err != nil || did == "" {
				t.Fatalf("FinishMove: %q, %v", did, err)
			}
			if got := gitOut(t, dir, "rev-parse", "HEAD"); got != person {
				t.Errorf("HEAD at %s, want the person's commit %s", got, person)
			}
			if got := gitOut(t, dir, "status", "--porcelain"); got != "" {
				t.Errorf("git status after FinishMove:\n%s\nwant nothing", got)
			}
			if got, err := os.ReadFile(filepath.Join(dir, "a.md")); err != nil || string(got) != "the person's a\n" {
				t.Errorf("the person's a.md (%v): %q", err, got)
			}
			end := map[string]string{"tree": from, "moved": to}[point]
			if got := gitOut(t, dir, "rev-parse", "HEAD^"); got != end {
				t.Errorf("the person's commit is on %s, want %s", got, end)
			}
			if _, err := os.Stat(filepath.Join(dir, ".git", "kk-move")); err == nil {
				t.Error("the record of the move is left")
			}
			fsck(t, dir)
		})
	}
}

// The next start keeps the index.lock a worker killed in a move left,
// and FinishMove takes it over: git's index is not free between the kill
// and the repair, so no git commit of a person's is made from it as the
// kill left it (git commit reads the index before it locks it; one
// that is not partial commits that index whole, which would have undone
// the move's files on the branch).
func TestMoveKilledHalfwayKeepsGitsIndexLockedUntilFinished(t *testing.T) {
	for _, point := range []string{"tree", "moved"} {
		t.Run(point, func(t *testing.T) {
			ctx := context.Background()
			dir, from, to := killedMove(t, point)
			gitOut(t, dir, "add", "--", "mine.txt")
			lock := filepath.Join(dir, ".git", "index.lock")
			write(t, dir, ".git/index.lock", LockMarker+" session=dead pid=1\n")

			r2 := openRepo(t, dir)
			if _, err := r2.RemoveStaleLocks(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(lock); err != nil {
				t.Fatalf("the start removed the lock of the killed move before its repair: %v", err)
			}
			cmd := exec.Command("git", "commit", "-q", "-m", "person")
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "index.lock") {
				t.Errorf("a person's git commit before the repair: %v %s", err, out)
			}
			did, err := r2.FinishMove(ctx)
			if err != nil || did == "" {
				t.Fatalf("FinishMove: %q, %v", did, err)
			}
			if _, err := os.Stat(lock); !os.IsNotExist(err) {
				t.Errorf("index.lock after the repair: %v", err)
			}
			want := map[string]string{"tree": from, "moved": to}[point]
			if got := gitOut(t, dir, "rev-parse", "HEAD"); got != want {
				t.Errorf("HEAD at %s, want %s", got, want)
			}
			if got := gitOut(t, dir, "status", "--porcelain"); got != "A  mine.txt" {
				t.Errorf("git status after FinishMove:\n%s\nwant only the person's mine.txt, staged", got)
			}
			fsck(t, dir)
		})
	}
}

// killedAt runs work, a move or a commit of r's, killed at point: its
// goroutine ends there, its deferred clean-up done (as the next start's
// RemoveStaleLocks does).
func killedAt(t *testing.T, r *Repo, point string, work func()) {
	t.Helper()
	r.fault = func(p string) error {
		if p == point {
			runtime.Goexit()
		}
		return nil
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		work()
		t.Error("not stopped at " + point)
	}()
	<-done
}

// killedMove makes a repository whose MoveTo from one commit to another
// (a.md changed, new.md added, gone.md removed) was killed at point,
// with the person's untracked mine.txt beside it, and returns its folder
// and the move's two commits.
func killedMove(t *testing.T, point string) (dir, from, to string) {
	t.Helper()
	ctx := context.Background()
	dir = gitRepo(t)
	write(t, dir, "a.md", "a")
	write(t, dir, "gone.md", "gone")
	if _, err := CommitPaths(ctx, dir, worker, "init", []string{"a.md", "gone.md"}); err != nil {
		t.Fatal(err)
	}
	r := openRepo(t, dir)
	from = gitOut(t, dir, "rev-parse", "HEAD")
	to = commitBeside(t, dir, map[string]string{"a.md": "a, moved\n", "new.md": "new\n"}, "gone.md")
	write(t, dir, "mine.txt", "the person's")

	killedAt(t, r, point, func() { _ = r.MoveTo(ctx, from, to, nil, nil) })
	if _, err := os.Stat(filepath.Join(dir, "new.md")); err != nil {
		t.Fatalf("the move did not reach the work tree before its kill: %v", err)
	}
	return dir, from, to
}

// A rebase of kk's killed in its work tree may leave the repository's
// packed-refs.lock (git takes it to delete REBASE_HEAD or
// CHERRY_PICK_HEAD, and a SIGTERM in the instant it creates it leaves
// it: TestServeSoakKill9, seed 202 iteration 18): the next replay
// removes it, once it is older than a git command holds one; a fresh one
// (a person's git deleting a ref now) is left alone.
func TestReplayRemovesThePackedRefsLockItsKilledRebaseLeft(t *testing.T) {
	ctx := context.Background()
	dir, _ := committedRepo(t)
	branch := gitOut(t, dir, "symbolic-ref", "--short", "HEAD")
	aside := filepath.Join(dir, ".git", "kk-share")
	n := 0
	diverge := func() {
		t.Helper()
		n++
		up := commitBeside(t, dir, map[string]string{fmt.Sprintf("theirs-%d.md", n): "theirs\n"})
		gitOut(t, dir, "update-ref", "refs/remotes/origin/main", up)
		write(t, dir, fmt.Sprintf("ours-%d.md", n), "ours")
		if _, err := CommitPaths(ctx, dir, worker, "ours", []string{fmt.Sprintf("ours-%d.md", n)}); err != nil {
			t.Fatal(err)
		}
	}
	diverge()
	if _, _, err := RebaseAside(ctx, dir, aside, branch, "refs/remotes/origin/main", "theirs", nil); err != nil {
		t.Fatal(err)
	}
	asideGit := gitOut(t, aside, "rev-parse", "--absolute-git-dir")
	lock := filepath.Join(dir, ".git", "packed-refs.lock")
	for _, age := range []time.Duration{time.Minute, 0} {
		// The kill: the rebase's state and the lock are left.
		if err := os.MkdirAll(filepath.Join(asideGit, "rebase-merge"), 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, dir, ".git/packed-refs.lock", "")
		then := time.Now().Add(-age)
		if err := os.Chtimes(lock, then, then); err != nil {
			t.Fatal(err)
		}
		diverge()
		_, _, err := RebaseAside(ctx, dir, aside, branch, "refs/remotes/origin/main", "theirs", nil)
		_, serr := os.Stat(lock)
		switch {
		case age > 0 && (err != nil || serr == nil):
			t.Fatalf("after a rebase killed %v ago: replay %v, the lock left: %v", age, err, serr == nil)
		case age == 0 && (serr != nil || err == nil):
			t.Fatalf("a packed-refs.lock taken now: removed %v, replay %v (want it left, and the replay to wait)", serr != nil, err)
		}
	}
	// Older now: the next replay, which finds the killed rebase's state
	// still there, removes it.
	then := time.Now().Add(-time.Minute)
	if err := os.Chtimes(lock, then, then); err != nil {
		t.Fatal(err)
	}
	if _, _, err := RebaseAside(ctx, dir, aside, branch, "refs/remotes/origin/main", "theirs", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(lock); err == nil {
		t.Fatal("the lock a killed rebase left is there after the next replay")
	}
}

// kk serve's git fetch starts no git maintenance run --auto (kk serve
// runs git gc --auto itself, bounded): started by it, it ran on after a
// kill of kk serve and could leave objects/maintenance.lock
// (TestServeSoakKill9, seed 403 iteration 4). A pre-auto-gc hook, which
// git's automatic gc runs when it is due (gc.auto=1 and two loose
// objects in one fan-out folder), tells. (The replay's git rebase gets
// maintenance.auto=false too; it runs no hooks, so this probe cannot
// see it.)
func TestFetchStartsNoAutomaticMaintenance(t *testing.T) {
	ctx := context.Background()
	origin, _ := committedRepo(t)
	branch := gitOut(t, origin, "symbolic-ref", "--short", "HEAD")
	dir := filepath.Join(t.TempDir(), "clone")
	gitOut(t, filepath.Dir(dir), "clone", "-q", origin, dir)
	// gc is due: two loose objects in objects/17.
	in17 := 0
	for i := 0; in17 < 2; i++ {
		if i > 100000 {
			t.Fatal("no loose objects in objects/17")
		}
		cmd := exec.Command("git", "hash-object", "-w", "--stdin")
		cmd.Dir, cmd.Stdin = dir, strings.NewReader(fmt.Sprintf("filler %d\n", i))
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(string(out), "17") {
			in17++
		}
	}
	ran := filepath.Join(t.TempDir(), "auto-gc-ran")
	write(t, dir, ".git/hooks/pre-auto-gc", "#!/bin/sh\ntouch '"+ran+"'\nexit 1\n")
	if err := os.Chmod(filepath.Join(dir, ".git", "hooks", "pre-auto-gc"), 0o755); err != nil {
		t.Fatal(err)
	}
	gitOut(t, dir, "config", "gc.auto", "1")
	probe := func(what string) {
		t.Helper()
		if _, err := os.Stat(ran); err == nil {
			t.Fatalf("%s started git's automatic maintenance (its pre-auto-gc hook ran)", what)
		}
	}
	// The probe probes: a git command that runs it does.
	gitOut(t, dir, "commit", "-q", "--allow-empty", "-m", "probe")
	if _, err := os.Stat(ran); err != nil {
		t.Fatalf("git commit ran no automatic gc: the probe cannot tell (%v)", err)
	}
	if err := os.Remove(ran); err != nil {
		t.Fatal(err)
	}

	gitOut(t, origin, "update-ref", "HEAD", commitBeside(t, origin, map[string]string{"theirs.md": "theirs\n"}))
	upstream, err := Fetch(ctx, dir, "origin", branch)
	if err != nil || upstream == "" {
		t.Fatalf("Fetch: %q, %v", upstream, err)
	}
	probe("git fetch")
}

// The lock files a killed kk serve's git commands left in kk's own work
// tree's git folder (a SIGTERM that lands while git creates one leaves
// it: CHERRY_PICK_HEAD.lock, TestServeSoakKill9 seed 501) are removed at
// the next start (TidyAside), the killed rebase's state kept for the
// next replay; a missing work tree is nothing to do.
func TestTidyAsideRemovesTheLocksAKilledServerLeft(t *testing.T) {
	ctx := context.Background()
	dir := gitRepo(t)
	write(t, dir, "a.md", "a")
	if _, err := CommitPaths(ctx, dir, worker, "init", []string{"a.md"}); err != nil {
		t.Fatal(err)
	}
	aside := filepath.Join(dir, ".git", "kk-share")
	if err := TidyAside(ctx, aside); err != nil {
		t.Fatalf("TidyAside without kk's work tree: %v", err)
	}
	branch := gitOut(t, dir, "symbolic-ref", "--short", "HEAD")
	gitOut(t, dir, "update-ref", "refs/remotes/origin/main", commitBeside(t, dir, map[string]string{"theirs.md": "theirs\n"}))
	write(t, dir, "ours.md", "ours")
	if _, err := CommitPaths(ctx, dir, worker, "ours", []string{"ours.md"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := RebaseAside(ctx, dir, aside, branch, "refs/remotes/origin/main", "theirs", nil); err != nil {
		t.Fatal(err)
	}
	asideGit := gitOut(t, aside, "rev-parse", "--absolute-git-dir")
	left := []string{"CHERRY_PICK_HEAD.lock", "index.lock", "rebase-merge/done.lock"}
	for _, p := range left {
		write(t, asideGit, p, "")
	}
	if err := TidyAside(ctx, aside); err != nil {
		t.Fatal(err)
	}
	for _, p := range left {
		if _, err := os.Stat(filepath.Join(asideGit, p)); err == nil {
			t.Errorf("%s is left", p)
		}
	}
	if _, err := os.Stat(filepath.Join(asideGit, "rebase-merge")); err != nil {
		t.Errorf("the killed rebase's state went: %v", err)
	}
}
