package serve

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/store"
)

// conflicted sets up a served work tree whose leaf (posted through the
// server) was edited one way on the branch side and another on main, the
// person's identity configured; it returns the server and the leaf's
// repository path.
func conflicted(t *testing.T) (*server, string) {
	t.Helper()
	k := newRepo(t, 0)
	s := start(t, k, nil)
	git(t, k, "config", "user.name", "p")
	git(t, k, "config", "user.email", "p@p")
	git(t, k, "config", "core.editor", "true")
	j := s.post(t, httpapi.PostRequest{Title: "Shared note", Content: "Line one.\n"})
	leaf := store.DirName + "/nodes/" + j.Path
	orig, err := os.ReadFile(filepath.Join(k.Root, leaf))
	if err != nil {
		t.Fatal(err)
	}
	git(t, k, "switch", "-q", "-c", "side")
	writeFile(t, filepath.Join(k.Root, leaf), string(orig)+"From side.\n")
	git(t, k, "commit", "-qam", "side edit")
	git(t, k, "switch", "-q", "main")
	writeFile(t, filepath.Join(k.Root, leaf), string(orig)+"From main.\n")
	git(t, k, "commit", "-qam", "main edit")
	return s, leaf
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// resolve writes the leaf as the person resolved it and stages it.
func resolve(t *testing.T, s *server, leaf string) {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(s.KB.Root, leaf))
	if err != nil {
		t.Fatal(err)
	}
	var keep []string
	for _, l := range strings.SplitAfter(string(text), "\n") {
		if !strings.HasPrefix(l, "<<<<<<<") && !strings.HasPrefix(l, "=======") && !strings.HasPrefix(l, ">>>>>>>") {
			keep = append(keep, l)
		}
	}
	writeFile(t, filepath.Join(s.KB.Root, leaf), strings.Join(keep, ""))
	git(t, s.KB, "add", leaf)
}

// mayFail runs a git command of the person's that stops halfway (a
// conflict): its failure is expected.
func mayFail(t *testing.T, s *server, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = s.KB.Root
	out, _ := cmd.CombinedOutput()
	t.Logf("git %s: %s", strings.Join(args, " "), strings.TrimSpace(string(out)))
}

// TestFaultGitOperationInProgress: found by an outside fault run, where a
// job posted while the person's git merge had stopped at a conflict was
// committed into the middle of it (the merge's first parent moved under
// the person, and the work tree's index files were regenerated from a
// leaf with conflict markers). A merge, a cherry-pick, a revert, git am
// or a bisect in progress in the served work tree (the branch still
// checked out) is the person's: the jobs wait, /healthz says for what
// and how to end it, nothing is committed or written meanwhile, and once
// the person has concluded or aborted it the jobs are committed on what
// they left, one commit each.
func TestFaultGitOperationInProgress(t *testing.T) {
	for _, tc := range []struct {
		name   string
		begin  func(t *testing.T, s *server, leaf string)
		want   string // in /healthz's waiting_for
		finish func(t *testing.T, s *server, leaf string)
	}{
		{
			name:  "merge",
			begin: func(t *testing.T, s *server, leaf string) { mayFail(t, s, "merge", "side") },
			want:  "merge",
			finish: func(t *testing.T, s *server, leaf string) {
				resolve(t, s, leaf)
				git(t, s.KB, "commit", "-q", "--no-edit")
			},
		},
		{
			name: "merge resolved, not committed",
			begin: func(t *testing.T, s *server, leaf string) {
				mayFail(t, s, "merge", "side")
				resolve(t, s, leaf)
			},
			want:   "merge",
			finish: func(t *testing.T, s *server, leaf string) { git(t, s.KB, "merge", "--abort") },
		},
		{
			name:  "cherry-pick",
			begin: func(t *testing.T, s *server, leaf string) { mayFail(t, s, "cherry-pick", "side") },
			want:  "cherry-pick",
			finish: func(t *testing.T, s *server, leaf string) {
				resolve(t, s, leaf)
				git(t, s.KB, "cherry-pick", "--continue")
			},
		},
		{
			name:   "revert",
			begin:  func(t *testing.T, s *server, leaf string) { mayFail(t, s, "revert", "--no-edit", "HEAD~1") },
			want:   "revert",
			finish: func(t *testing.T, s *server, leaf string) { git(t, s.KB, "revert", "--abort") },
		},
		{
			name: "am",
			begin: func(t *testing.T, s *server, leaf string) {
				patch := filepath.Join(t.TempDir(), "side.patch")
				writeFile(t, patch, git(t, s.KB, "format-patch", "--stdout", "-1", "side")+"\n")
				mayFail(t, s, "am", patch)
			},
			want:   "git am",
			finish: func(t *testing.T, s *server, leaf string) { git(t, s.KB, "am", "--abort") },
		},
		{
			name:   "bisect",
			begin:  func(t *testing.T, s *server, leaf string) { git(t, s.KB, "bisect", "start") },
			want:   "bisect",
			finish: func(t *testing.T, s *server, leaf string) { git(t, s.KB, "bisect", "reset") },
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, leaf := conflicted(t)
			k := s.KB
			tc.begin(t, s, leaf)
			if b, _ := gitx.HeadBranch(k.Root); b != "main" {
				t.Fatalf("the person's %s left %q checked out; the test needs main", tc.name, b)
			}
			head := git(t, k, "rev-parse", "HEAD")
			status := git(t, k, "status", "--porcelain")
			id := s.postAsync(t, "Posted during the "+tc.name)
			h := s.waitHealth(t, tc.want)
			time.Sleep(300 * time.Millisecond)
			if j, _ := s.Client.Job(ctx, id); j.Status == "done" || j.Status == "failed" {
				t.Fatalf("a job ended during the person's %s: %+v (health %+v)", tc.name, j, h)
			}
			if got := git(t, k, "rev-parse", "HEAD"); got != head {
				t.Fatalf("the branch moved during the person's %s:\n%s", tc.name, git(t, k, "log", "--oneline", "-3"))
			}
			if got := git(t, k, "status", "--porcelain"); got != status {
				t.Fatalf("the work tree changed during the person's %s:\nbefore:\n%s\nafter:\n%s", tc.name, status, got)
			}
			tc.finish(t, s, leaf)
			after := git(t, k, "rev-parse", "HEAD")
			j := s.waitJob(t, id, 30*time.Second)
			if j.Status != "done" {
				t.Fatalf("the job after the %s: %+v", tc.name, j)
			}
			jobCommit(t, k, "store", j)
			if parent := git(t, k, "rev-parse", "HEAD^"); parent != after {
				t.Errorf("the job's commit is on %s, want the tip the person left, %s", parent, after)
			}
			if h := s.health(t); h.Status != "ok" {
				t.Errorf("health after: %+v", h)
			}
			clean(t, k)
			headChecks(t, k)
		})
	}
}

// TestFaultShareKeepsAMergeInProgress: the --push-every tick's rebase,
// run while the person's merge had its conflicts resolved and staged but
// not yet committed, autostashed the resolution and reset the work tree:
// MERGE_HEAD was gone, the person's git commit then made an ordinary
// commit (the merged branch's history lost) and the resolution was left
// as an unstaged change. The tick is skipped while a git operation of
// the person's is in progress, and shares once it is over.
func TestFaultShareKeepsAMergeInProgress(t *testing.T) {
	s, leaf := conflicted(t)
	k := s.KB
	other := withOrigin(t, k, "other")
	writeFile(t, filepath.Join(other, "other.txt"), "another clone's file\n")
	for _, args := range [][]string{{"add", "other.txt"}, {"-c", "user.name=o", "-c", "user.email=o@o", "commit", "-qm", "other"}, {"push", "-q", "origin", "main"}} {
		if _, err := gitx.Run(ctx, other, args...); err != nil {
			t.Fatal(err)
		}
	}
	mayFail(t, s, "merge", "side")
	resolve(t, s, leaf)
	head := git(t, k, "rev-parse", "HEAD")
	s.Backend.Share(ctx)
	if _, err := os.Stat(filepath.Join(k.Root, ".git", "MERGE_HEAD")); err != nil {
		t.Fatalf("the tick ended the person's merge: %v\n%s", err, git(t, k, "status"))
	}
	if got := git(t, k, "rev-parse", "HEAD"); got != head {
		t.Fatalf("the tick moved the branch during the person's merge:\n%s", git(t, k, "log", "--oneline", "-3"))
	}
	if st := git(t, k, "status", "--porcelain", "--", leaf); !strings.HasPrefix(st, "M ") {
		t.Fatalf("the person's staged resolution is not staged any more: %q", st)
	}
	git(t, k, "commit", "-q", "--no-edit")
	if parents := strings.Fields(git(t, k, "log", "-1", "--format=%P")); len(parents) != 2 {
		t.Fatalf("the person's merge commit has parents %v", parents)
	}
	s.Backend.Share(ctx)
	if got, want := git(t, k, "rev-parse", "refs/remotes/origin/main"), git(t, k, "rev-parse", "HEAD"); got != want {
		t.Errorf("after the merge, the tick did not share: origin/main %s, HEAD %s", got, want)
	}
	clean(t, k)
}
