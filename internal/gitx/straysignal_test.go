//go:build unix

package gitx

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// killingGit puts a git on PATH that ends itself with SIGTERM the first
// time it is run with the argument arg, and otherwise runs the real git:
// what a signal sent to kk's process group does to a git command forked
// at that instant (the child is still in kk's group until it calls
// setpgid, and the pending signal ends it). It returns the mark whose
// existence says the kill happened.
func killingGit(t *testing.T, arg string) string {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	bin := t.TempDir()
	mark := filepath.Join(t.TempDir(), "killed")
	script := "#!/bin/sh\nfor a in \"$@\"; do\n  if [ \"$a\" = '" + arg + "' ] && mkdir '" + mark + "' 2>/dev/null; then kill -TERM $$; fi\ndone\nexec '" + real + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return mark
}

// A git command of a commit that a signal kk did not send ends (a stop
// sent to kk's process group, reaching a git forked at that instant) does
// not fail the commit: the branch has not moved, and the attempt is made
// again. The commit lands once, and nothing is left behind.
func TestRepoCommitSurvivesAGitKilledByAStraySignal(t *testing.T) {
	for _, arg := range []string{"update-index", "update-ref", "check-attr"} {
		t.Run(arg, func(t *testing.T) {
			dir, r := committedRepo(t)
			mark := killingGit(t, arg)
			l, err := r.Commit(context.Background(), CommitOptions{Author: worker, Message: "job", Plan: files(map[string]string{"b.md": "b"})})
			if _, serr := os.Stat(mark); serr != nil {
				t.Fatalf("git %s was not killed: the test proves nothing", arg)
			}
			if err != nil {
				t.Fatalf("commit: %v", err)
			}
			if l.IndexErr != nil {
				t.Fatal(l.IndexErr)
			}
			if got := gitOut(t, dir, "log", "--format=%s"); got != "job\ninit" {
				t.Errorf("history:\n%s", got)
			}
			write(t, dir, "b.md", "b")
			if st := gitOut(t, dir, "status", "--porcelain"); st != "" {
				t.Errorf("status: %q", st)
			}
			if locks, _ := filepath.Glob(filepath.Join(dir, ".git", "*.lock")); len(locks) > 0 {
				t.Errorf("locks left: %v", locks)
			}
			fsck(t, dir)
		})
	}
}

// A git command ended by a signal kk did not send is ErrKilled; one kk
// stopped itself (its context ended) is not.
func TestRunReportsAStraySignal(t *testing.T) {
	dir := gitRepo(t)
	killingGit(t, "status")
	_, err := Run(context.Background(), dir, "status")
	if !errors.Is(err, ErrKilled) || !strings.Contains(err.Error(), "git status") {
		t.Errorf("a git killed from outside: %v", err)
	}
	if _, err := Run(context.Background(), dir, "status"); err != nil {
		t.Errorf("the next git: %v", err)
	}
}
