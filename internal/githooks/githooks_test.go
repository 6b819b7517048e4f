package githooks

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/checks"
	"github.com/kk-project/kk/internal/store"
)

// fakeKK stands in for kk on PATH: it records its working folder, its
// arguments and KK_INTERNAL in $KK_FAKE_LOG, writes to stderr and exits
// with $KK_FAKE_EXIT. When $KK_FAKE_HOLD is set it first waits (up to
// 20 s) for that file to exist.
const fakeKK = `#!/bin/sh
if [ -n "${KK_FAKE_HOLD-}" ]; then
	i=0
	while [ ! -e "$KK_FAKE_HOLD" ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i+1)); done
fi
printf '%s|%s|%s\n' "$PWD" "$*" "${KK_INTERNAL-unset}" >> "$KK_FAKE_LOG"
echo "kk: something failed" >&2
exit "${KK_FAKE_EXIT-0}"
`

// userHook is a hook the user had before kk: it records its arguments and
// standard input in $USER_HOOK_LOG and exits with $USER_HOOK_EXIT.
const userHook = `#!/bin/sh
input=$(cat)
printf '%s|%s\n' "$*" "$input" >> "$USER_HOOK_LOG"
exit "${USER_HOOK_EXIT-0}"
`

type env struct {
	t       *testing.T
	root    string // work tree and knowledge base root
	k       *store.KB
	kkLog   string
	userLog string
}

// newRepo makes a git repository with one commit and a knowledge base
// folder at its root, and puts the fake kk first on PATH.
func newRepo(t *testing.T) *env {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	if runtime.GOOS == "windows" {
		t.Skip("the hooks are sh scripts run directly, which needs a POSIX system")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "bin")
	must(t, os.MkdirAll(bin, 0o755))
	must(t, os.WriteFile(filepath.Join(bin, "kk"), []byte(fakeKK), 0o755))
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("HOME", tmp)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_AUTHOR_NAME", "kk test")
	t.Setenv("GIT_AUTHOR_EMAIL", "kk@example.invalid")
	t.Setenv("GIT_COMMITTER_NAME", "kk test")
	t.Setenv("GIT_COMMITTER_EMAIL", "kk@example.invalid")
	t.Setenv("KK_INTERNAL", "")
	if err := os.Unsetenv("KK_INTERNAL"); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KK_GIT_HOOKS", "wait")
	t.Setenv("KK_FAKE_HOLD", "")
	e := &env{t: t, root: filepath.Join(tmp, "repo"), kkLog: filepath.Join(tmp, "kk.log"), userLog: filepath.Join(tmp, "user.log")}
	t.Setenv("KK_FAKE_LOG", e.kkLog)
	t.Setenv("USER_HOOK_LOG", e.userLog)
	must(t, os.MkdirAll(filepath.Join(e.root, ".ai", "kenkeep"), 0o755))
	e.git("init", "-q", "-b", "main")
	must(t, os.WriteFile(filepath.Join(e.root, "a.txt"), []byte("one\n"), 0o644))
	e.git("add", "-A")
	e.git("commit", "-qm", "one")
	e.k = store.New(e.root)
	return e
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// git runs git in the repository and fails the test when it fails.
func (e *env) git(args ...string) string {
	e.t.Helper()
	out, err := e.gitErr(args...)
	if err != nil {
		e.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (e *env) gitErr(args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = e.root
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (e *env) install(o Options) *Result {
	e.t.Helper()
	res, err := Install(context.Background(), e.k, o)
	must(e.t, err)
	return res
}

func (e *env) uninstall() *Result {
	e.t.Helper()
	res, err := Uninstall(context.Background(), e.k)
	must(e.t, err)
	return res
}

// kkCalls returns the lines the fake kk logged.
func (e *env) kkCalls() []string { return readLines(e.t, e.kkLog) }

func (e *env) userCalls() []string { return readLines(e.t, e.userLog) }

func readLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	must(t, err)
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

func changes(res *Result) []string {
	var out []string
	for _, c := range res.Changes {
		out = append(out, c.Action+" "+c.Path)
	}
	return out
}

func (e *env) wantKKCalls(want ...string) {
	e.t.Helper()
	if got := e.kkCalls(); !slices.Equal(got, want) {
		e.t.Fatalf("kk calls = %q, want %q", got, want)
	}
}

func resolved(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	must(t, err)
	return r
}

func TestInstallFolderGitUses(t *testing.T) {
	for _, tc := range []struct {
		name      string
		hooksPath func(e *env) string // core.hooksPath to set; "" leaves it unset
		dir       func(e *env) string // where the hooks must land
		shown     func(e *env) string // Result.Dir
	}{
		{
			name:  "git dir",
			dir:   func(e *env) string { return filepath.Join(e.root, ".git", "hooks") },
			shown: func(e *env) string { return ".git/hooks" },
		},
		{
			name:      "relative core.hooksPath",
			hooksPath: func(e *env) string { return "tools/hooks" },
			dir:       func(e *env) string { return filepath.Join(e.root, "tools", "hooks") },
			shown:     func(e *env) string { return "tools/hooks" },
		},
		{
			name:      "absolute core.hooksPath",
			hooksPath: func(e *env) string { return filepath.Join(filepath.Dir(e.root), "shared-hooks") },
			dir:       func(e *env) string { return filepath.Join(filepath.Dir(e.root), "shared-hooks") },
			shown: func(e *env) string {
				return filepath.ToSlash(filepath.Join(resolved(e.t, filepath.Dir(e.root)), "shared-hooks"))
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newRepo(t)
			if tc.hooksPath != nil {
				e.git("config", "core.hooksPath", tc.hooksPath(e))
			}
			res := e.install(Options{})
			dir := tc.dir(e)
			if res.Dir != tc.shown(e) {
				t.Errorf("Dir = %q, want %q", res.Dir, tc.shown(e))
			}
			for _, name := range Names {
				fi, err := os.Stat(filepath.Join(dir, name))
				must(t, err)
				if fi.Mode().Perm() != 0o755 {
					t.Errorf("%s mode = %v, want 0755", name, fi.Mode().Perm())
				}
				data, err := os.ReadFile(filepath.Join(dir, name))
				must(t, err)
				if !bytes.Equal(data, script(name, "kk", ".")) {
					t.Errorf("%s differs from Script", name)
				}
			}
			if tc.hooksPath != nil {
				if _, err := os.Stat(filepath.Join(e.root, ".git", "hooks", PostCheckout)); err == nil {
					t.Errorf("a hook went into .git/hooks although core.hooksPath is set")
				}
			}
			// git runs them: a branch checkout syncs, from the repository root.
			e.git("checkout", "-q", "-b", "feature")
			e.wantKKCalls(resolved(t, e.root) + "|sync --root .|unset")
		})
	}
}

func TestInstallIsIdempotentAndUpgradeRefreshes(t *testing.T) {
	e := newRepo(t)
	first := e.install(Options{})
	if got, want := changes(first), []string{"created .git/hooks/post-applypatch", "created .git/hooks/post-checkout", "created .git/hooks/post-commit", "created .git/hooks/post-index-change", "created .git/hooks/post-merge", "created .git/hooks/post-rewrite", "updated .git/config"}; !slices.Equal(got, want) {
		t.Fatalf("first install = %q, want %q", got, want)
	}
	for _, o := range []Options{{}, {Upgrade: true}} {
		if res := e.install(o); len(res.Changes) != 0 || len(res.Warnings) != 0 {
			t.Fatalf("second install (%+v) = %q %q, want no change", o, changes(res), res.Warnings)
		}
	}
	hook := filepath.Join(e.root, ".git", "hooks", PostMerge)
	old := bytes.Replace(script(PostMerge, "kk", "."), []byte(" v"+scriptVersion), []byte(" v0"), 1)
	must(t, os.WriteFile(hook, old, 0o644))
	must(t, os.Chmod(hook, 0o644))
	if res := e.install(Options{}); len(res.Changes) != 0 {
		t.Fatalf("install without --upgrade touched kk's own hook: %q", changes(res))
	}
	res := e.install(Options{Upgrade: true})
	if got, want := changes(res), []string{"updated .git/hooks/post-merge"}; !slices.Equal(got, want) {
		t.Fatalf("upgrade = %q, want %q", got, want)
	}
	fi, err := os.Stat(hook)
	must(t, err)
	if fi.Mode().Perm() != 0o755 {
		t.Errorf("upgrade left mode %v, want 0755", fi.Mode().Perm())
	}
}

func TestChainedHookKeepsArgumentsInputAndStatus(t *testing.T) {
	e := newRepo(t)
	hook := filepath.Join(e.root, ".git", "hooks", PostCheckout)
	must(t, os.WriteFile(hook, []byte(userHook), 0o750))
	res := e.install(Options{})
	if got, want := changes(res), []string{"created .git/hooks/post-applypatch", "updated .git/hooks/post-checkout", "created .git/hooks/post-checkout.kk-chained", "created .git/hooks/post-commit", "created .git/hooks/post-index-change", "created .git/hooks/post-merge", "created .git/hooks/post-rewrite", "updated .git/config"}; !slices.Equal(got, want) {
		t.Fatalf("install = %q, want %q", got, want)
	}

	// Through git: both run, and the user's hook failing fails git (git
	// reports a failed post-checkout hook as exit status 1).
	t.Setenv("USER_HOOK_EXIT", "3")
	out, err := e.gitErr("checkout", "-q", "-b", "feature")
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("git checkout = %v (%s), want exit status 1 from the failing hook", err, out)
	}
	head := strings.TrimSpace(e.git("rev-parse", "HEAD"))
	if got, want := e.userCalls(), []string{head + " " + head + " 1|"}; !slices.Equal(got, want) {
		t.Errorf("user hook calls = %q, want %q", got, want)
	}
	e.wantKKCalls(resolved(t, e.root) + "|sync --root .|unset")

	// Run directly: the same arguments and standard input reach the user's
	// hook; a file checkout (third argument 0) does not run kk.
	must(t, os.Remove(e.userLog))
	cmd := exec.Command(hook, "a b", "c", "0")
	cmd.Dir = e.root
	cmd.Stdin = strings.NewReader("line one\nline two")
	err = cmd.Run()
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("hook = %v, want exit status 3", err)
	}
	if got, want := e.userCalls(), []string{"a b c 0|line one", "line two"}; !slices.Equal(got, want) {
		t.Errorf("user hook calls = %q, want %q", got, want)
	}
	e.wantKKCalls(resolved(t, e.root) + "|sync --root .|unset")

	t.Setenv("USER_HOOK_EXIT", "0")
	e.git("checkout", "-q", "main")
	if n := len(e.kkCalls()); n != 2 {
		t.Errorf("kk ran %d times, want 2", n)
	}
}

func TestChainingRefusesToOverwriteAChainedHook(t *testing.T) {
	e := newRepo(t)
	dir := filepath.Join(e.root, ".git", "hooks")
	must(t, os.WriteFile(filepath.Join(dir, PostMerge), []byte("#!/bin/sh\necho mine\n"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, PostMerge+ChainSuffix), []byte("#!/bin/sh\necho older\n"), 0o755))
	res := e.install(Options{})
	if got, want := changes(res), []string{"created .git/hooks/post-applypatch", "created .git/hooks/post-checkout", "created .git/hooks/post-commit", "created .git/hooks/post-index-change", "created .git/hooks/post-rewrite", "updated .git/config"}; !slices.Equal(got, want) {
		t.Fatalf("install = %q, want %q", got, want)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], ".git/hooks/post-merge is not kk's hook and .git/hooks/post-merge.kk-chained exists too") {
		t.Fatalf("warnings = %q", res.Warnings)
	}
	data, err := os.ReadFile(filepath.Join(dir, PostMerge))
	must(t, err)
	if string(data) != "#!/bin/sh\necho mine\n" {
		t.Errorf("the user's hook changed: %q", data)
	}
}

func TestFileCheckoutAndGuardsSkipKK(t *testing.T) {
	e := newRepo(t)
	e.install(Options{})
	must(t, os.WriteFile(filepath.Join(e.root, "a.txt"), []byte("changed\n"), 0o644))
	e.git("checkout", "--", "a.txt") // post-checkout with third argument 0
	e.wantKKCalls()

	t.Setenv("KK_INTERNAL", "1")
	e.git("checkout", "-q", "-b", "internal")
	e.wantKKCalls()
	if err := os.Unsetenv("KK_INTERNAL"); err != nil {
		t.Fatal(err)
	}

	t.Setenv("KK_GIT_HOOKS", "off")
	e.git("checkout", "-q", "-b", "off")
	e.wantKKCalls()
}

func TestFailingOrMissingKKNeverFailsGit(t *testing.T) {
	e := newRepo(t)
	e.install(Options{})
	t.Setenv("KK_FAKE_EXIT", "1")
	out, err := e.gitErr("checkout", "-b", "feature")
	if err != nil {
		t.Fatalf("git checkout with kk failing: %v\n%s", err, out)
	}
	if strings.Contains(out, "something failed") {
		t.Errorf("kk's output reached git's: %q", out)
	}
	e.wantKKCalls(resolved(t, e.root) + "|sync --root .|unset")

	// Without kk on PATH (only git and dirname, which the hook uses).
	bin := t.TempDir()
	for _, prog := range []string{"git", "dirname"} {
		p, err := exec.LookPath(prog)
		if err != nil {
			t.Skipf("%s is not installed", prog)
		}
		must(t, os.Symlink(p, filepath.Join(bin, prog)))
	}
	t.Setenv("PATH", bin)
	if out, err := e.gitErr("checkout", "-q", "main"); err != nil || out != "" {
		t.Errorf("git checkout without kk on PATH = %v, output %q; want success and no output", err, out)
	}
	if n := len(e.kkCalls()); n != 1 {
		t.Errorf("kk ran %d times, want 1", n)
	}
}

func TestPostMergeSyncs(t *testing.T) {
	e := newRepo(t)
	e.install(Options{})
	e.git("checkout", "-q", "-b", "side")
	must(t, os.WriteFile(filepath.Join(e.root, "b.txt"), []byte("two\n"), 0o644))
	e.git("add", "-A")
	e.git("commit", "-qm", "two")
	e.git("checkout", "-q", "main")
	must(t, os.Remove(e.kkLog))
	e.git("merge", "-q", "--no-edit", "side")
	e.wantKKCalls(resolved(t, e.root) + "|sync --root .|unset")
}

func TestHookRunsKKInTheBackground(t *testing.T) {
	e := newRepo(t)
	e.install(Options{})
	t.Setenv("KK_GIT_HOOKS", "")
	release := filepath.Join(t.TempDir(), "release")
	t.Setenv("KK_FAKE_HOLD", release)
	// The fake kk waits for the release file; git returning before it
	// exists shows the hook did not wait for kk.
	e.git("checkout", "-q", "-b", "feature")
	e.wantKKCalls()
	must(t, os.WriteFile(release, nil, 0o644))
	deadline := time.Now().Add(20 * time.Second)
	// (the fake kk creates its log before it writes the line)
	for calls := e.kkCalls(); (len(calls) == 0 || calls[len(calls)-1] == "") && time.Now().Before(deadline); calls = e.kkCalls() {
		time.Sleep(20 * time.Millisecond)
	}
	e.wantKKCalls(resolved(t, e.root) + "|sync --root .|unset")
}

func TestKnowledgeBaseInASubfolder(t *testing.T) {
	e := newRepo(t)
	sub := filepath.Join(e.root, "svc", "it's")
	must(t, os.MkdirAll(filepath.Join(sub, ".ai", "kenkeep"), 0o755))
	e.k = store.New(sub)
	e.install(Options{})
	data, err := os.ReadFile(filepath.Join(e.root, ".git", "hooks", PostCheckout))
	must(t, err)
	if !bytes.Equal(data, script(PostCheckout, "kk", "svc/it's")) {
		t.Fatalf("hook differs from Script with the subfolder")
	}
	e.git("checkout", "-q", "-b", "feature")
	e.wantKKCalls(resolved(t, sub) + "|sync --root .|unset")
}

func TestLinkedWorktreeUsesTheCommonHooksFolder(t *testing.T) {
	e := newRepo(t)
	wt := filepath.Join(filepath.Dir(e.root), "wt")
	e.git("worktree", "add", "-q", "-b", "wt-branch", wt)
	must(t, os.MkdirAll(filepath.Join(wt, ".ai", "kenkeep"), 0o755))
	res, err := Install(context.Background(), store.New(wt), Options{})
	must(t, err)
	common := filepath.ToSlash(filepath.Join(resolved(t, e.root), ".git", "hooks"))
	if res.Dir != common {
		t.Fatalf("Dir = %q, want %q", res.Dir, common)
	}
	cmd := exec.Command("git", "checkout", "-q", "-b", "wt-feature")
	cmd.Dir = wt
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git checkout in the worktree: %v\n%s", err, out)
	}
	e.wantKKCalls(resolved(t, wt) + "|sync --root .|unset")
}

func TestUninstallRestoresByteForByte(t *testing.T) {
	e := newRepo(t)
	dir := filepath.Join(e.root, ".git", "hooks")
	user := []byte("#!/bin/sh\n# mine, with no trailing newline\nexit 0")
	must(t, os.WriteFile(filepath.Join(dir, PostMerge), user, 0o700))
	must(t, os.Chmod(filepath.Join(dir, PostMerge), 0o700))
	e.install(Options{})
	res := e.uninstall()
	if got, want := changes(res), []string{"removed .git/hooks/post-applypatch", "removed .git/hooks/post-checkout", "removed .git/hooks/post-commit", "removed .git/hooks/post-index-change", "updated .git/hooks/post-merge", "removed .git/hooks/post-merge.kk-chained", "removed .git/hooks/post-rewrite", "updated .git/config"}; !slices.Equal(got, want) {
		t.Fatalf("uninstall = %q, want %q", got, want)
	}
	data, err := os.ReadFile(filepath.Join(dir, PostMerge))
	must(t, err)
	fi, err := os.Stat(filepath.Join(dir, PostMerge))
	must(t, err)
	if !bytes.Equal(data, user) || fi.Mode().Perm() != 0o700 {
		t.Errorf("restored hook = %q mode %v, want %q mode 0700", data, fi.Mode().Perm(), user)
	}
	for _, gone := range []string{PostCheckout, PostMerge + ChainSuffix} {
		if _, err := os.Lstat(filepath.Join(dir, gone)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still exists", gone)
		}
	}
	if res := e.uninstall(); len(res.Changes) != 0 || len(res.Warnings) != 0 {
		t.Errorf("second uninstall = %q %q, want nothing", changes(res), res.Warnings)
	}
}

func TestUninstallLeavesAHookThatIsNotKKs(t *testing.T) {
	e := newRepo(t)
	dir := filepath.Join(e.root, ".git", "hooks")
	must(t, os.WriteFile(filepath.Join(dir, PostMerge), []byte(userHook), 0o755))
	e.install(Options{})
	// The user puts a hook of their own over kk's.
	must(t, os.WriteFile(filepath.Join(dir, PostMerge), []byte("#!/bin/sh\necho newer\n"), 0o755))
	res := e.uninstall()
	if got, want := changes(res), []string{"removed .git/hooks/post-applypatch", "removed .git/hooks/post-checkout", "removed .git/hooks/post-commit", "removed .git/hooks/post-index-change", "removed .git/hooks/post-rewrite", "updated .git/config"}; !slices.Equal(got, want) {
		t.Fatalf("uninstall = %q, want %q", got, want)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], ".git/hooks/post-merge is not kk's hook, so .git/hooks/post-merge.kk-chained was not put back") {
		t.Fatalf("warnings = %q", res.Warnings)
	}
}

func TestUninstallCleansTheFolderGitNoLongerUses(t *testing.T) {
	e := newRepo(t)
	e.install(Options{})
	// git ignores the folder, so no word about committing kk's hooks
	// there (TestInstallInATrackedHooksFolder) joins the warning
	must(t, os.WriteFile(filepath.Join(e.root, ".gitignore"), []byte("/hooks/\n"), 0o644))
	e.git("config", "core.hooksPath", "hooks")
	res := e.install(Options{})
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "kk's hooks in .git/hooks are never run: git runs hooks from hooks (core.hooksPath)") {
		t.Fatalf("warnings = %q", res.Warnings)
	}
	res = e.uninstall()
	want := []string{"removed hooks/post-applypatch", "removed hooks/post-checkout", "removed hooks/post-commit", "removed hooks/post-index-change", "removed hooks/post-merge", "removed hooks/post-rewrite",
		"removed .git/hooks/post-applypatch", "removed .git/hooks/post-checkout", "removed .git/hooks/post-commit", "removed .git/hooks/post-index-change", "removed .git/hooks/post-merge", "removed .git/hooks/post-rewrite", "updated .git/config"}
	if got := changes(res); !slices.Equal(got, want) {
		t.Fatalf("uninstall = %q, want %q", got, want)
	}
}

func TestInstallInATrackedHooksFolder(t *testing.T) {
	e := newRepo(t)
	e.git("config", "core.hooksPath", ".githooks")
	res := e.install(Options{})
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "git runs hooks from .githooks (core.hooksPath), a folder of the work tree that git does not ignore: commit kk's hooks there with .ai/kenkeep (git add .githooks)") {
		t.Fatalf("warnings = %q", res.Warnings)
	}
	// nothing changed the second time: nothing to say
	if res := e.install(Options{}); len(res.Warnings) != 0 {
		t.Fatalf("second install warnings = %q", res.Warnings)
	}
}

func TestOutsideAWorkTree(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	t.Setenv("GIT_CEILING_DIRECTORIES", os.TempDir())
	root := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(root, ".ai", "kenkeep"), 0o755))
	k := store.New(root)
	if _, err := Install(context.Background(), k, Options{}); !errors.Is(err, ErrNotWorkTree) {
		t.Errorf("Install = %v, want ErrNotWorkTree", err)
	}
	if _, err := Uninstall(context.Background(), k); !errors.Is(err, ErrNotWorkTree) {
		t.Errorf("Uninstall = %v, want ErrNotWorkTree", err)
	}
	if got := Doctor(context.Background(), k); got != nil {
		t.Errorf("Doctor = %+v, want no checks", got)
	}
}

func TestDoctor(t *testing.T) {
	e := newRepo(t)
	dir := filepath.Join(e.root, ".git", "hooks")
	check := func(name string) (string, string, string, []string) {
		t.Helper()
		for _, c := range Doctor(context.Background(), e.k) {
			if c.Name == name {
				return c.Level, c.Message, c.Fix, c.Details
			}
		}
		return "", "", "", nil
	}

	level, msg, fix, _ := check("git-hooks")
	if level != checks.DoctorWarn || msg != "kk's post-applypatch, post-checkout, post-commit, post-index-change, post-merge, post-rewrite hook(s) are not installed in .git/hooks: branch indexes are synced only when a command uses them, and the generated files of merged, rebased or cherry-picked commits are not regenerated" || !strings.Contains(fix, "kk init") {
		t.Errorf("missing: %s %q %q", level, msg, fix)
	}

	must(t, os.WriteFile(filepath.Join(dir, PostMerge), []byte(userHook), 0o755))
	e.install(Options{})
	level, msg, _, details := check("git-hooks")
	if level != checks.DoctorOK || msg != "post-applypatch, post-checkout, post-commit, post-index-change, post-merge, post-rewrite in .git/hooks keep the search index and the generated files in step" {
		t.Errorf("installed: %s %q", level, msg)
	}
	if want := []string{".git/hooks/post-merge runs .git/hooks/post-merge.kk-chained first"}; !slices.Equal(details, want) {
		t.Errorf("installed details = %q, want %q", details, want)
	}
	if level, _, _, _ := check("git-hooks-folder"); level != "" {
		t.Errorf("git-hooks-folder reported without core.hooksPath")
	}

	must(t, os.Chmod(filepath.Join(dir, PostCheckout), 0o644))
	level, msg, fix, _ = check("git-hooks")
	if level != checks.DoctorError || msg != "git ignores kk's post-checkout hook(s) in .git/hooks: not executable" || fix != "chmod +x '"+filepath.Join(dir, PostCheckout)+"'" {
		t.Errorf("not executable: %s %q %q", level, msg, fix)
	}
	must(t, os.Chmod(filepath.Join(dir, PostCheckout), 0o755))

	must(t, os.WriteFile(filepath.Join(dir, PostCheckout), script(PostCheckout, "/old/kk", "."), 0o755))
	level, msg, fix, _ = check("git-hooks")
	if level != checks.DoctorWarn || msg != "kk's post-checkout hook(s) in .git/hooks are out of date" || fix != "run `kk init --upgrade`" {
		t.Errorf("out of date: %s %q %q", level, msg, fix)
	}

	e.git("config", "core.hooksPath", "githooks")
	level, msg, fix, _ = check("git-hooks-folder")
	if level != checks.DoctorWarn || msg != "kk's post-applypatch, post-checkout, post-commit, post-index-change, post-merge, post-rewrite hook(s) in .git/hooks are never run: git runs hooks from githooks (core.hooksPath is githooks)" || !strings.Contains(fix, "kk uninstall --git-hooks") {
		t.Errorf("stale folder: %s %q %q", level, msg, fix)
	}
	e.uninstall()
	e.install(Options{})
	if level, msg, _, _ := check("git-hooks-folder"); level != checks.DoctorOK || msg != "git runs hooks from githooks (core.hooksPath is githooks)" {
		t.Errorf("moved folder: %s %q", level, msg)
	}
	if level, _, _, _ := check("git-hooks"); level != checks.DoctorOK {
		t.Errorf("hooks in core.hooksPath: %s", level)
	}
}

func TestIsKK(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want bool
	}{
		{string(script(PostCheckout, "kk", ".")), true},
		{string(script(PostMerge, "bin/kk", "sub")), true},
		{userHook, false},
		{"#!/bin/sh\necho hi\n# kk-git-hook: post-merge v1\n", false},
		{"", false},
	} {
		if got := isKK([]byte(tc.src)); got != tc.want {
			t.Errorf("isKK(%q) = %v, want %v", tc.src, got, tc.want)
		}
	}
}

// The hooks ask kk to regenerate the commits a git operation made, once
// the operation is over: a merge commit after a merge (not after a
// fast-forward), every picked commit after the last pick of a
// cherry-pick, every rebased commit after a rebase; an ordinary commit
// asks for nothing.
func TestHooksRegenerateAfterMergeRebaseAndCherryPick(t *testing.T) {
	e := newRepo(t)
	e.install(Options{})
	commit := func(file, msg string) {
		t.Helper()
		must(t, os.WriteFile(filepath.Join(e.root, file), []byte(msg+"\n"), 0o644))
		e.git("add", "-A")
		e.git("commit", "-qm", msg)
	}
	rev := func(r string) string { return strings.TrimSpace(e.git("rev-parse", r)) }
	regenerations := func() []string {
		var out []string
		for _, c := range e.kkCalls() {
			if strings.Contains(c, "index rebuild") {
				_, args, _ := strings.Cut(c, "|")
				args, _, _ = strings.Cut(args, "|")
				out = append(out, args)
			}
		}
		must(t, os.RemoveAll(e.kkLog))
		return out
	}
	e.git("checkout", "-q", "-b", "side")
	commit("s1.txt", "s1")
	commit("s2.txt", "s2")
	e.git("checkout", "-q", "main")
	commit("m1.txt", "m1")
	if got := regenerations(); len(got) != 0 {
		t.Fatalf("an ordinary commit: %q", got)
	}

	e.git("checkout", "-q", "-b", "ff", "main~1")
	e.git("merge", "-q", "--no-edit", "side")
	if got := regenerations(); len(got) != 0 {
		t.Fatalf("a fast-forward: %q", got)
	}
	e.git("checkout", "-q", "-b", "merged", "main")
	e.git("merge", "-q", "--no-edit", "side")
	if got, want := regenerations(), []string{"index rebuild --commits HEAD^! --root ."}; !slices.Equal(got, want) {
		t.Fatalf("a merge: %q, want %q", got, want)
	}

	e.git("checkout", "-q", "-b", "picked", "main")
	start := rev("HEAD")
	e.git("cherry-pick", "side~1", "side")
	if got, want := regenerations(), []string{"index rebuild --commits " + start + "..HEAD --root ."}; !slices.Equal(got, want) {
		t.Fatalf("a cherry-pick of two commits: %q, want %q", got, want)
	}
	e.git("checkout", "-q", "-b", "picked-one", "main")
	e.git("cherry-pick", "side~1")
	if got, want := regenerations(), []string{"index rebuild --commits HEAD^! --root ."}; !slices.Equal(got, want) {
		t.Fatalf("a cherry-pick of one commit: %q, want %q", got, want)
	}

	e.git("checkout", "-q", "-b", "reverted", "picked")
	start = rev("HEAD")
	e.git("revert", "--no-edit", "HEAD", "HEAD~1")
	if got, want := regenerations(), []string{"index rebuild --commits " + start + "..HEAD --root ."}; !slices.Equal(got, want) {
		t.Fatalf("a revert of two commits: %q, want %q", got, want)
	}
	e.git("revert", "--no-edit", "HEAD")
	if got, want := regenerations(), []string{"index rebuild --commits HEAD^! --root ."}; !slices.Equal(got, want) {
		t.Fatalf("a revert of one commit: %q, want %q", got, want)
	}

	e.git("checkout", "-q", "-b", "rebased", "side")
	e.git("rebase", "-q", "main")
	if got, want := regenerations(), []string{"index rebuild --commits " + rev("main") + "..HEAD --root ."}; !slices.Equal(got, want) {
		t.Fatalf("a rebase: %q, want %q", got, want)
	}
	e.git("commit", "-q", "--amend", "-m", "amended")
	if got := regenerations(); len(got) != 0 {
		t.Fatalf("an amend: %q", got)
	}

	// A squash merge stages the regenerated files for the commit to come.
	e.git("checkout", "-q", "-b", "squashed", "main")
	e.git("merge", "-q", "--squash", "side")
	if got, want := regenerations(), []string{"index rebuild --stage --root ."}; !slices.Equal(got, want) {
		t.Fatalf("a squash merge: %q, want %q", got, want)
	}
}

// A branch checkout or a merge defines kk's merge drivers again where the
// repository's config lost them (a config reset, a clone whose config
// someone edited): all three, the generated files', the ledger's and the
// folder summaries'.
func TestHooksDefineEveryMergeDriverAgain(t *testing.T) {
	e := newRepo(t)
	e.install(Options{})
	for _, d := range mergeDrivers("kk", ".") {
		_, _ = e.gitErr("config", "--remove-section", "merge."+d[0])
	}
	e.git("checkout", "-q", "-b", "side")
	for _, d := range mergeDrivers("kk", ".") {
		if got := strings.TrimSpace(e.git("config", "--get", "merge."+d[0]+".driver")); got != d[2] {
			t.Errorf("after a branch checkout, merge.%s.driver = %q; want %q", d[0], got, d[2])
		}
	}
}

// kk init --kk-command names the kk the hooks run; kk's merge drivers of
// nodes/.redirects.json and FOLDER_SUMMARIES.md ran "kk" from PATH
// instead, so a repository whose kk is not on PATH (a vendored binary)
// fell back to git's own merge on every such merge. They now run the same
// command, relative to the knowledge base's root as in the hooks, both as
// kk init defines them and as the hooks define them again.
func TestMergeDriversRunTheKKCommand(t *testing.T) {
	e := newRepo(t)
	sub := filepath.Join(e.root, "svc")
	e.k = store.New(sub)
	must(t, os.MkdirAll(filepath.Join(e.k.Dir, ".state"), 0o755))
	must(t, os.MkdirAll(filepath.Join(e.k.Dir, "nodes"), 0o755))
	must(t, os.WriteFile(e.k.InstalledPath(), []byte(`{"schema_version": 1, "package": "kk", "harnesses": [], "kk_command": "./tools/kk"}`+"\n"), 0o644))
	toolsLog := filepath.Join(filepath.Dir(e.root), "tools.log")
	must(t, os.MkdirAll(filepath.Join(sub, "tools"), 0o755))
	// the vendored kk: it records its arguments and merges by taking theirs
	must(t, os.WriteFile(filepath.Join(sub, "tools", "kk"), []byte("#!/bin/sh\nprintf '%s\\n' \"$1\" >> '"+toolsLog+"'\ncp \"$4\" \"$3\"\n"), 0o755))
	must(t, os.WriteFile(e.k.GitattributesPath(), []byte("/nodes/.redirects.json merge=kk-redirects\n/FOLDER_SUMMARIES.md merge=kk-summaries\n"), 0o644))
	ledger := filepath.Join(e.k.NodesDir(), ".redirects.json")
	summaries := e.k.SummariesPath()
	write := func(p, s string) { t.Helper(); must(t, os.WriteFile(p, []byte(s), 0o644)) }
	write(ledger, "{\n  \"a\": [\"a1\"]\n}\n")
	write(summaries, "base\n")
	e.install(Options{})
	for _, d := range []string{RedirectsDriver, SummariesDriver} {
		if got := e.git("config", "--get", "merge."+d+".driver"); !strings.HasPrefix(got, "svc/tools/kk git-merge-") {
			t.Fatalf("merge.%s.driver = %q, want the recorded kk command, from the work tree's top", d, got)
		}
	}
	e.git("add", "-A")
	e.git("commit", "-qm", "base")
	e.git("checkout", "-q", "-b", "side")
	write(ledger, "{\n  \"a\": [\"a1\"],\n  \"b\": [\"b1\"]\n}\n")
	write(summaries, "side\n")
	e.git("commit", "-qam", "side")
	e.git("checkout", "-q", "main")
	write(ledger, "{\n  \"a\": [\"a1\"],\n  \"c\": [\"c1\"]\n}\n")
	write(summaries, "main\n")
	e.git("commit", "-qam", "main")
	e.git("merge", "-q", "--no-edit", "side")
	var drivers []string // the hooks run it too
	for _, l := range readLines(t, toolsLog) {
		if strings.HasPrefix(l, "git-merge-") {
			drivers = append(drivers, l)
		}
	}
	if got, want := drivers, []string{"git-merge-redirects", "git-merge-summaries"}; !slices.Equal(got, want) {
		t.Fatalf("the vendored kk ran %q, want %q", got, want)
	}
	for _, c := range e.kkCalls() {
		if strings.Contains(c, "git-merge-") {
			t.Fatalf("kk on PATH ran a merge driver: %q", c)
		}
	}

	// defined again by a hook where the config lost them
	for _, d := range mergeDrivers("kk", ".") {
		_, _ = e.gitErr("config", "--remove-section", "merge."+d[0])
	}
	e.git("checkout", "-q", "-b", "other")
	for _, d := range []string{RedirectsDriver, SummariesDriver} {
		if got := e.git("config", "--get", "merge."+d+".driver"); !strings.HasPrefix(got, "svc/tools/kk git-merge-") {
			t.Fatalf("after a branch checkout, merge.%s.driver = %q, want the recorded kk command", d, got)
		}
	}
}

func TestDriverKK(t *testing.T) {
	for _, c := range []struct{ command, rel, want string }{
		{"kk", ".", "kk"},
		{"kk", "svc", "kk"},
		{"/opt/kk/bin/kk", "svc", "/opt/kk/bin/kk"},
		{"./tools/kk", ".", "./tools/kk"},
		{"./tools/kk", "svc", "svc/tools/kk"},
		{"tools/kk --flag", "svc/a", "svc/a/tools/kk --flag"},
		{"tools/kk", "svc/it's", `'svc/it'\''s'/tools/kk`},
	} {
		if got := driverKK(c.command, c.rel); got != c.want {
			t.Errorf("driverKK(%q, %q) = %q, want %q", c.command, c.rel, got, c.want)
		}
	}
}

// A knowledge base in a subfolder of the repository (a monorepo's
// service) has hooks that run kk in a subshell, (cd <folder> && kk ...).
// Inside a command substitution that made "$((cd", which a POSIX shell
// (dash, Debian's and Ubuntu's /bin/sh) reads as arithmetic: every hook
// failed with "Syntax error: Unterminated quoted string" and regenerated
// nothing. Every hook parses, for each folder, with each of sh, dash and
// bash found (dash is the one that failed; sh is bash on some systems).
func TestHooksParseWithTheKnowledgeBaseInASubfolder(t *testing.T) {
	var shells []string
	for _, name := range []string{"sh", "dash", "bash"} {
		if p, err := exec.LookPath(name); err == nil {
			shells = append(shells, p)
		}
	}
	if len(shells) == 0 {
		t.Skip("none of sh, dash and bash is installed: the test parses the hooks with them")
	}
	dir := t.TempDir()
	for _, rel := range []string{".", "app", "svc/it's"} {
		for _, name := range Names {
			file := filepath.Join(dir, name)
			must(t, os.WriteFile(file, script(name, "kk", rel), 0o755))
			for _, sh := range shells {
				if out, err := exec.Command(sh, "-n", file).CombinedOutput(); err != nil {
					t.Errorf("%s with the knowledge base in %q does not parse with %s: %v\n%s", name, rel, sh, err, out)
				}
			}
		}
	}
}
