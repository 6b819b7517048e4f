//go:build unix

package gitx

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
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

// A git process the Repo keeps from one commit to the next (cat-file,
// check-attr, update-ref) killed while a job is planned, by a signal kk
// did not send (a person's kill, the OOM killer), does not fail the
// commit: the process is started again. A dead cat-file failed the job
// for good ("committing: write |1: broken pipe"), found by killing kk
// serve's git children at random under a stream of posts.
func TestRepoCommitSurvivesAKeptGitKilledDuringAJob(t *testing.T) {
	kept := map[string]func(r *Repo) *exec.Cmd{
		"cat-file": func(r *Repo) *exec.Cmd {
			if r.cat == nil {
				return nil
			}
			return r.cat.cmd
		},
		"check-attr": func(r *Repo) *exec.Cmd {
			if r.attrs == nil {
				return nil
			}
			return r.attrs.cmd
		},
		"update-ref": func(r *Repo) *exec.Cmd {
			if r.refs == nil {
				return nil
			}
			return r.refs.cmd
		},
	}
	for name, cmdOf := range kept {
		t.Run(name, func(t *testing.T) {
			dir, r := committedRepo(t)
			if _, err := r.Commit(context.Background(), CommitOptions{Author: worker, Message: "one", Plan: files(map[string]string{"b.md": "b"})}); err != nil {
				t.Fatal(err)
			}
			// A person's commit meanwhile: the next commit reads its tree.
			other := gitOut(t, dir, "commit-tree", "-p", "HEAD", "-m", "by a person", gitOut(t, dir, "rev-parse", "HEAD^{tree}"))
			gitOut(t, dir, "update-ref", "refs/heads/"+r.Branch, other)
			killed := 0
			plan := func(head string) (Changes, error) {
				// The kill lands while the job is planned, the process
				// kept from the commit before.
				if cmd := cmdOf(r); cmd != nil && cmd.ProcessState == nil {
					if err := cmd.Process.Kill(); err == nil {
						waitGone(t, cmd.Process.Pid)
						killed++
					}
				}
				return Changes{Files: map[string][]byte{"c.md": []byte("c")}}, nil
			}
			l, err := r.Commit(context.Background(), CommitOptions{Author: worker, Message: "two", Plan: plan})
			if killed == 0 {
				t.Fatalf("no git %s was killed: the test proves nothing", name)
			}
			if err != nil {
				t.Fatalf("the commit, git %s killed: %v", name, err)
			}
			if l.IndexErr != nil {
				t.Fatal(l.IndexErr)
			}
			if got := gitOut(t, dir, "log", "--format=%s"); got != "two\nby a person\none\ninit" {
				t.Errorf("history:\n%s", got)
			}
			write(t, dir, "b.md", "b")
			write(t, dir, "c.md", "c")
			if st := gitOut(t, dir, "status", "--porcelain"); st != "" {
				t.Errorf("status: %q", st)
			}
			fsck(t, dir)
		})
	}
}

// waitGone waits until pid, a child killed, is a zombie or gone.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	stat := filepath.Join("/proc", strconv.Itoa(pid), "stat")
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, err := os.ReadFile(stat)
		if err != nil {
			return
		}
		if f := strings.Fields(string(b)); len(f) > 2 && f[2] == "Z" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d did not end", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A git update-index killed (SIGKILL: no clean-up) while it holds the lock
// of kk's copy of the index leaves that lock behind. The copy is kk's
// own, named after the server's session, so nobody else holds its lock:
// the next attempt, and every later commit of the session, must not stop
// on it. Every job after such a kill failed ("Unable to create
// …/index.kk-<session>.lock': File exists") until kk serve restarted.
func TestRepoCommitSurvivesAnUpdateIndexKilledHoldingItsLock(t *testing.T) {
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	dir, r := committedRepo(t)
	bin := t.TempDir()
	mark := filepath.Join(t.TempDir(), "killed")
	// The first git update-index runs, takes its lock, and is then killed
	// with the wrapper, as a kill -9 of the git process does.
	// Its input is a pipe nobody writes to: it waits, holding its lock,
	// until the kill.
	fifo := filepath.Join(t.TempDir(), "in")
	script := `#!/bin/sh
case " $* " in
*" update-index "*)
  if mkdir '` + mark + `' 2>/dev/null; then
    mkfifo '` + fifo + `'
    '` + real + `' "$@" <'` + fifo + `' &
    pid=$!
    exec 4>'` + fifo + `'
    while [ ! -e "$GIT_INDEX_FILE.lock" ] && kill -0 $pid 2>/dev/null; do sleep 0.01; done
    kill -KILL $pid
    kill -KILL $$
  fi;;
esac
exec '` + real + `' "$@"
`
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	for i, name := range []string{"b.md", "c.md"} {
		l, err := r.Commit(context.Background(), CommitOptions{Author: worker, Message: "job " + name, Plan: files(map[string]string{name: name})})
		if _, serr := os.Stat(mark); serr != nil {
			t.Fatal("git update-index was not killed: the test proves nothing")
		}
		if err != nil {
			t.Fatalf("commit %d: %v", i+1, err)
		}
		if l.IndexErr != nil {
			t.Fatal(l.IndexErr)
		}
	}
	if got := gitOut(t, dir, "log", "--format=%s"); got != "job c.md\njob b.md\ninit" {
		t.Errorf("history:\n%s", got)
	}
	write(t, dir, "b.md", "b.md")
	write(t, dir, "c.md", "c.md")
	if st := gitOut(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("status: %q", st)
	}
	fsck(t, dir)
}
