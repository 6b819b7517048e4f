package gitx

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestHeadBranchAgreesWithGit compares the HEAD file reading with git's
// own answer: a branch, a branch with a slash, an unborn branch, a linked
// worktree, and a detached HEAD (which HeadBranch leaves to git).
func TestHeadBranchAgreesWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	ctx := context.Background()
	dir := t.TempDir()
	git := func(d string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=kk", "-c", "user.email=kk@example.invalid", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = d
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	check := func(d, want string) {
		t.Helper()
		got, ok := HeadBranch(d)
		viaGit, err := CurrentBranch(ctx, d)
		if err != nil {
			t.Fatal(err)
		}
		if !ok || got != want || viaGit != want {
			t.Fatalf("HeadBranch(%s) = %q, %v; git says %q; want %q", d, got, ok, viaGit, want)
		}
	}
	git(dir, "init", "-q", "-b", "trunk")
	sub := filepath.Join(dir, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	check(sub, "trunk") // unborn, from a subfolder
	git(dir, "commit", "-q", "--allow-empty", "-m", "one")
	git(dir, "checkout", "-q", "-b", "topic/login")
	check(dir, "topic/login")
	wt := filepath.Join(t.TempDir(), "wt")
	git(dir, "worktree", "add", "-q", "-b", "side", wt)
	check(wt, "side")
	git(dir, "checkout", "-q", "--detach")
	if b, ok := HeadBranch(dir); ok {
		t.Fatalf("detached HEAD read as branch %q", b)
	}
	outside := t.TempDir()
	if _, ok := HeadBranch(outside); ok {
		t.Fatal("a folder outside any repository has a branch")
	}
	if !NoRepository(outside) || NoRepository(sub) || NoRepository(wt) {
		t.Fatalf("NoRepository: outside %v, subfolder %v, worktree %v", NoRepository(outside), NoRepository(sub), NoRepository(wt))
	}
}
