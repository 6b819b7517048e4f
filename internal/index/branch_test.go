package index

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/store"
)

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=kk test", "-c", "user.email=kk@example.invalid", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func gitKB(t *testing.T) *store.KB {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	k := seedKB(t)
	git(t, k.Root, "init", "-q", "-b", "main")
	return k
}

func TestBranchesUnbornAndDetached(t *testing.T) {
	ctx := context.Background()
	k := gitKB(t)
	if b, err := CurrentBranch(ctx, k); err != nil || b != "main" {
		t.Fatalf("CurrentBranch on an unborn branch = %q, %v; want main", b, err)
	}
	if b, _ := DefaultBranch(ctx, k); b != "main" {
		t.Errorf("DefaultBranch = %q; want main", b)
	}
	git(t, k.Root, "add", "-A")
	git(t, k.Root, "commit", "-q", "-m", "seed")
	git(t, k.Root, "checkout", "-q", "--detach")
	if b, err := CurrentBranch(ctx, k); err != nil || b != DetachedHEAD {
		t.Errorf("CurrentBranch on a detached HEAD = %q, %v; want %s", b, err, DetachedHEAD)
	}
	git(t, k.Root, "update-ref", "refs/remotes/origin/trunk", "HEAD")
	git(t, k.Root, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/trunk")
	if b, _ := DefaultBranch(ctx, k); b != "trunk" {
		t.Errorf("DefaultBranch with origin/HEAD -> trunk = %q", b)
	}
	if got, err := gitx.LocalBranches(ctx, k.Root); err != nil || !slices.Equal(got, []string{"main"}) {
		t.Errorf("LocalBranches = %v, %v", got, err)
	}
}

// A new branch starts from the default branch's index, then the two diverge;
// gc removes the index of a deleted branch.
func TestBranchCopyDivergeAndGC(t *testing.T) {
	ctx := context.Background()
	k := gitKB(t)
	git(t, k.Root, "add", "-A")
	git(t, k.Root, "commit", "-q", "-m", "seed")

	main, st, err := Open(ctx, k, "main")
	if err != nil {
		t.Fatal(err)
	}
	if st.Added != 3 {
		t.Fatalf("main's first sync: %+v", st)
	}
	if err := main.Close(); err != nil {
		t.Fatal(err)
	}

	git(t, k.Root, "checkout", "-q", "-b", "feature/login")
	branch, err := CurrentBranch(ctx, k)
	if err != nil || branch != "feature/login" {
		t.Fatalf("CurrentBranch = %q, %v", branch, err)
	}
	feat, st, err := Open(ctx, k, branch)
	if err != nil {
		t.Fatal(err)
	}
	// Copied from main: nothing had to be read again.
	if st.Unchanged != 3 || st.Changed() || st.Touched != 0 {
		t.Fatalf("feature's first sync after the copy: %+v; want 3 unchanged", st)
	}
	writeLeaf(t, k, "auth/passkeys.md", leaf("practice-passkeys", "Passkeys", "WebAuthn login", []string{"auth"}, "", "Passkeys replace passwords."))
	if st, err = feat.Sync(ctx, k.NodesDir()); err != nil || st.Added != 1 {
		t.Fatalf("feature sync: %+v, %v", st, err)
	}
	if hits, _ := holders(ctx, feat, "passkeys", 5); len(hits) != 1 {
		t.Errorf("feature's index lacks its new leaf: %v", ids(hits))
	}
	if err := feat.Close(); err != nil {
		t.Fatal(err)
	}
	// Main's index did not follow.
	mainDB, err := openFile(ctx, Path(k, "main"), "main")
	if err != nil {
		t.Fatal(err)
	}
	if hits, _ := holders(ctx, mainDB, "passkeys", 5); len(hits) != 0 {
		t.Errorf("main's index sees the feature branch's leaf: %v", ids(hits))
	}
	if err := mainDB.Close(); err != nil {
		t.Fatal(err)
	}

	// gc keeps both while they exist, then drops the deleted branch.
	res, err := GC(ctx, k)
	if err != nil || len(res.Removed) != 0 || !slices.Equal(res.Kept, []string{"feature/login", "main"}) {
		t.Fatalf("GC with both branches: %+v, %v", res, err)
	}
	if err := os.MkdirAll(BranchesDir(k)+"/not%zzours", 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, k.Root, "checkout", "-q", "main")
	git(t, k.Root, "branch", "-q", "-D", "feature/login")
	res, err = GC(ctx, k)
	if err != nil || !slices.Equal(res.Removed, []string{"feature/login"}) || !slices.Equal(res.Kept, []string{"main"}) {
		t.Fatalf("GC after deleting the branch: %+v, %v", res, err)
	}
	if _, err := os.Stat(Path(k, "feature/login")); !os.IsNotExist(err) {
		t.Errorf("the deleted branch's index is still there: %v", err)
	}
	if _, err := os.Stat(BranchesDir(k) + "/not%zzours"); err != nil {
		t.Errorf("gc removed a folder kk did not write: %v", err)
	}

	before, after, err := Compact(ctx, k, "main")
	if err != nil || before == 0 || after == 0 {
		t.Errorf("Compact = %d, %d, %v", before, after, err)
	}
	if _, _, err := Compact(ctx, k, "gone"); err == nil {
		t.Error("Compact of a branch without an index succeeded")
	}
}

// Outside a git work tree, gc keeps the current (default) branch's index
// and removes the others instead of failing.
func TestGCOutsideGit(t *testing.T) {
	k := newKB(t)
	ctx := context.Background()
	db, _, err := Open(ctx, k, "main")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(BranchesDir(k), EncodeBranch("old-feature")), 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := GC(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Kept, []string{"main"}) || !slices.Equal(res.Removed, []string{"old-feature"}) {
		t.Fatalf("gc outside git: kept %v removed %v", res.Kept, res.Removed)
	}
}

// TestDetachedHEADHasOneIndex: commits made on a detached HEAD (kk serve
// committing on it, a rebase) all use one index, seeded from the default
// branch's; kk gc keeps it while HEAD is detached and removes it once
// HEAD is on a branch again. A branch named like the old per-commit
// folders is a branch like any other.
func TestDetachedHEADHasOneIndex(t *testing.T) {
	ctx := context.Background()
	k := gitKB(t)
	git(t, k.Root, "add", "-A")
	git(t, k.Root, "commit", "-q", "-m", "seed")
	if _, err := Sync(ctx, k, "main"); err != nil {
		t.Fatal(err)
	}
	git(t, k.Root, "checkout", "-q", "--detach")
	for i := range 5 {
		b, err := CurrentBranch(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Sync(ctx, k, b); err != nil {
			t.Fatal(err)
		}
		git(t, k.Root, "commit", "-q", "--allow-empty", "-m", fmt.Sprintf("detached %d", i))
	}
	folders := func() []string {
		entries, err := os.ReadDir(BranchesDir(k))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range entries {
			if e.IsDir() {
				out = append(out, e.Name())
			}
		}
		return out
	}
	if got := folders(); !slices.Equal(got, []string{"HEAD", "main"}) {
		t.Errorf("index folders after 5 commits on a detached HEAD: %v", got)
	}
	if res, err := GC(ctx, k); err != nil || len(res.Removed) != 0 {
		t.Errorf("gc while detached: %+v, %v", res, err)
	}
	git(t, k.Root, "checkout", "-q", "-b", "detached-1234567")
	if b, err := CurrentBranch(ctx, k); err != nil || b != "detached-1234567" {
		t.Errorf("a branch named detached-1234567: %q, %v", b, err)
	}
	if res, err := GC(ctx, k); err != nil || !slices.Equal(res.Removed, []string{"HEAD"}) {
		t.Errorf("gc on a branch: %+v, %v", res, err)
	}
}

// A branch whose name is longer, encoded, than a folder name may be (100
// non-ASCII letters: 600 bytes) made every command fail ("creating the
// index folder: … file name too long"); it has an index like any branch,
// and gc removes it once the branch is gone.
func TestBranchWithALongName(t *testing.T) {
	ctx := context.Background()
	k := gitKB(t)
	git(t, k.Root, "add", "-A")
	git(t, k.Root, "commit", "-q", "-m", "seed")
	long := strings.Repeat("ü", 60) + "/" + strings.Repeat("功能", 30)
	git(t, k.Root, "checkout", "-q", "-b", long)
	b, err := CurrentBranch(ctx, k)
	if err != nil || b != long {
		t.Fatalf("CurrentBranch = %q, %v", b, err)
	}
	if _, err := Sync(ctx, k, b); err != nil {
		t.Fatal(err)
	}
	res, err := GC(ctx, k)
	if err != nil || !slices.Equal(res.Kept, []string{long}) || len(res.Removed) != 0 {
		t.Fatalf("GC with the branch: %+v, %v", res, err)
	}
	git(t, k.Root, "checkout", "-q", "main")
	git(t, k.Root, "branch", "-q", "-D", long)
	res, err = GC(ctx, k)
	if err != nil || len(res.Removed) != 1 || !strings.HasPrefix(res.Removed[0], "üü") || !strings.HasSuffix(res.Removed[0], "…") {
		t.Fatalf("GC after deleting the branch: %+v, %v", res, err)
	}
	if _, err := os.Stat(filepath.Dir(Path(k, long))); !os.IsNotExist(err) {
		t.Errorf("the deleted branch's index is still there: %v", err)
	}
}
