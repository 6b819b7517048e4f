package store

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitIn runs git in dir, failing the test with its output.
func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	cmd := exec.Command("git", append([]string{"-c", "user.name=kk test", "-c", "user.email=test@kk.invalid", "-c", "init.defaultBranch=main", "-c", "protocol.file.allow=always"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// gitDirOf asks git for dir's git folder, resolved.
func gitDirOf(t *testing.T, dir string) string {
	t.Helper()
	cmd := exec.Command("git", "rev-parse", "--absolute-git-dir")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	return resolved(t, strings.TrimSpace(string(out)))
}

func resolved(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// wantGuard checks that k's writer lock is .state/lock plus a guard at
// rel under the git folder git names for k's root.
func wantGuard(t *testing.T, k *KB, rel string) {
	t.Helper()
	s := k.WriterLock()
	if s.Path != filepath.Join(k.Dir, ".state", "lock") || s.Path != k.LockPath() {
		t.Errorf("Path = %s, want .state/lock", s.Path)
	}
	if s.Guard == "" {
		t.Fatalf("%s: no guard under the git folder", k.Root)
	}
	if err := os.MkdirAll(filepath.Dir(s.Guard), 0o755); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(gitDirOf(t, k.Root), "kenkeep", filepath.FromSlash(rel))
	if got := filepath.Join(resolved(t, filepath.Dir(s.Guard)), filepath.Base(s.Guard)); got != want {
		t.Errorf("Guard = %s, want %s", got, want)
	}
}

func TestLocksOutsideGit(t *testing.T) {
	k := New(t.TempDir())
	s := k.Locks("serve.lock")
	if s.Guard != "" || s.Path != filepath.Join(k.Dir, ".state", "serve.lock") {
		t.Fatalf("outside git: %+v, want .state/serve.lock alone", s)
	}
}

// The guard is under the work tree's own git folder, whatever GIT_DIR and
// GIT_WORK_TREE say: every process must find the same file. A linked
// worktree, a submodule and a knowledge base below the top of its work
// tree each have their own.
func TestLocksUnderTheGitFolder(t *testing.T) {
	base := t.TempDir()
	repo := filepath.Join(base, "repo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	gitIn(t, repo, "init", "-q")
	if err := os.WriteFile(filepath.Join(repo, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, repo, "add", "f")
	gitIn(t, repo, "commit", "-q", "-m", "f")

	top := New(repo)
	wantGuard(t, top, ".ai/kenkeep/lock")
	if s := top.Locks("capture/lock"); s.Guard != filepath.Join(filepath.Dir(top.WriterLock().Guard), "capture", "lock") {
		t.Errorf("capture lock guard %s", s.Guard)
	}
	// git and the tools around it take *.lock files in the git folder
	// for the lock files a killed git command left.
	if s := top.Locks("serve.lock"); s.Guard != filepath.Join(filepath.Dir(top.WriterLock().Guard), "serve.flock") || s.Path != filepath.Join(top.StateDir(), "serve.lock") {
		t.Errorf("serve lock %+v, want its guard serve.flock", s)
	}

	t.Run("GIT_DIR set", func(t *testing.T) {
		t.Setenv("GIT_DIR", filepath.Join(base, "elsewhere"))
		t.Setenv("GIT_WORK_TREE", base)
		if g := New(repo).WriterLock().Guard; g != top.WriterLock().Guard {
			t.Errorf("with GIT_DIR set the guard moved: %s, want %s", g, top.WriterLock().Guard)
		}
	})

	nested := New(filepath.Join(repo, "services", "api"))
	if err := os.MkdirAll(nested.Root, 0o755); err != nil {
		t.Fatal(err)
	}
	wantGuard(t, nested, "services/api/.ai/kenkeep/lock")

	wt := filepath.Join(base, "wt")
	gitIn(t, repo, "worktree", "add", "-q", wt)
	linked := New(wt)
	wantGuard(t, linked, ".ai/kenkeep/lock")
	if linked.WriterLock().Guard == top.WriterLock().Guard {
		t.Error("a linked worktree shares its main work tree's lock")
	}

	super := filepath.Join(base, "super")
	if err := os.MkdirAll(super, 0o755); err != nil {
		t.Fatal(err)
	}
	gitIn(t, super, "init", "-q")
	gitIn(t, super, "submodule", "add", "-q", repo, "sub")
	sub := New(filepath.Join(super, "sub"))
	if data, _ := os.ReadFile(filepath.Join(sub.Root, ".git")); !strings.HasPrefix(string(data), "gitdir: ") {
		t.Fatalf("the submodule's .git is not a gitdir file: %q", data)
	}
	wantGuard(t, sub, ".ai/kenkeep/lock")
	if !strings.Contains(sub.WriterLock().Guard, filepath.Join(".git", "modules", "sub")) {
		t.Errorf("the submodule's guard %s is not under the super-project's .git/modules/sub", sub.WriterLock().Guard)
	}
}
