package gitx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// openRepo opens dir's repository for commits, closed with the test.
func openRepo(t *testing.T, dir string) *Repo {
	t.Helper()
	r, err := OpenRepo(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

// files is a Plan that commits the same changes whatever the tip.
func files(written map[string]string, removed ...string) func(string) (Changes, error) {
	c := Changes{Files: map[string][]byte{}, Removed: removed}
	for p, s := range written {
		c.Files[p] = []byte(s)
	}
	return func(string) (Changes, error) { return c, nil }
}

func commitJob(t *testing.T, r *Repo, subject string, plan func(string) (Changes, error)) Landed {
	t.Helper()
	l, err := r.Commit(context.Background(), CommitOptions{Author: worker, Message: subject, Plan: plan})
	if err != nil {
		t.Fatal(err)
	}
	if l.IndexErr != nil {
		t.Fatal(l.IndexErr)
	}
	return l
}

// fsck checks the repository with git fsck --strict.
func fsck(t *testing.T, dir string) {
	t.Helper()
	if out, err := Run(context.Background(), dir, "fsck", "--strict", "--no-dangling"); err != nil {
		t.Fatalf("git fsck: %v %s", err, out)
	}
}

// A commit holds exactly the changes it is given, whatever else is
// staged or changed in the work tree; git's index learns its entries and
// keeps everything else.
func TestRepoCommitTouchesOnlyItsChanges(t *testing.T) {
	dir := gitRepo(t)
	ctx := context.Background()
	write(t, dir, "notes/a.md", "a1")
	write(t, dir, "notes/b.md", "b1")
	if _, err := CommitPaths(ctx, dir, worker, "init", []string{"notes/a.md", "notes/b.md"}); err != nil {
		t.Fatal(err)
	}
	r := openRepo(t, dir)
	// Another writer's leftovers stay out of the commit.
	write(t, dir, "other/staged.md", "x")
	gitOut(t, dir, "add", "other/staged.md")
	write(t, dir, "notes/c*.md", "c")
	write(t, dir, "notes/a.md", "a2")
	if err := os.Remove(filepath.Join(dir, "notes", "b.md")); err != nil {
		t.Fatal(err)
	}
	l := commitJob(t, r, JobSubject("edit", "j1", "notes/a.md"), files(map[string]string{"notes/a.md": "a2", "notes/c*.md": "c"}, "notes/b.md"))
	if got := gitOut(t, dir, "rev-parse", "HEAD"); got != l.Commit {
		t.Fatalf("HEAD is %s, Commit says %s", got, l.Commit)
	}
	changed := strings.Split(gitOut(t, dir, "show", "--name-status", "--format=", "HEAD"), "\n")
	if !slices.Equal(changed, []string{"M\tnotes/a.md", "D\tnotes/b.md", "A\tnotes/c*.md"}) {
		t.Errorf("the commit holds %q", changed)
	}
	if st := gitOut(t, dir, "status", "--porcelain"); st != "A  other/staged.md" {
		t.Errorf("status after the commit: %q", st)
	}
	// A removed path git never tracked removes nothing.
	write(t, dir, "notes/d.md", "d")
	commitJob(t, r, JobSubject("store", "j2", "notes/d.md"), files(map[string]string{"notes/d.md": "d"}, "notes/never.md"))
	if got := gitOut(t, dir, "show", "--name-only", "--format=%s", "HEAD"); got != "store(j2): notes/d.md\n\nnotes/d.md" {
		t.Errorf("commit: %q", got)
	}
	// Nothing changed: the commit is still made, as the job's record.
	commitJob(t, r, JobSubject("edit", "j3", "notes/d.md"), files(nil))
	if got := gitOut(t, dir, "log", "-1", "--format=%s"); got != "edit(j3): notes/d.md" {
		t.Errorf("empty commit: %q", got)
	}
	if st := gitOut(t, dir, "status", "--porcelain"); st != "A  other/staged.md" {
		t.Errorf("status after the empty commit: %q", st)
	}
	for _, ref := range []string{"HEAD", r.Branch} {
		if got := gitOut(t, dir, "reflog", "-1", "--format=%H %gs", ref); got != gitOut(t, dir, "rev-parse", "HEAD")+" kk serve: commit" {
			t.Errorf("reflog of %s: %q", ref, got)
		}
	}
}

// The objects a commit writes itself are sound, in both object formats
// and from a linked work tree: trees in git's order (a folder sorts as if
// its name ended in "/"), folders created and emptied, executable files,
// a knowledge base in a sub-folder of the repository; commits made by a
// person in between are read from git. git fsck --strict finds nothing
// wrong and the work tree matches HEAD.
func TestRepoCommitWritesValidObjects(t *testing.T) {
	for _, layout := range []string{"sha1", "sha256", "worktree"} {
		t.Run(layout, func(t *testing.T) {
			ctx := context.Background()
			dir := gitRepo(t)
			if layout == "sha256" {
				dir = filepath.Join(t.TempDir(), "r")
				gitOut(t, filepath.Dir(dir), "init", "-q", "--object-format=sha256", "-b", "main", dir)
			}
			write(t, dir, "kb/x/a.md", "a")
			write(t, dir, "kb/x/gone/only.md", "o")
			write(t, dir, "README.md", "r")
			if _, err := CommitPaths(ctx, dir, worker, "init", []string{"kb/x/a.md", "kb/x/gone/only.md", "README.md"}); err != nil {
				t.Fatal(err)
			}
			if layout == "worktree" {
				wt := filepath.Join(t.TempDir(), "wt")
				gitOut(t, dir, "worktree", "add", "-q", "-b", "served", wt)
				dir = wt
			}
			r := openRepo(t, dir)
			if layout == "sha256" && r.ObjectFormat() != "sha256" {
				t.Fatalf("object format %s", r.ObjectFormat())
			}
			if layout == "worktree" && (r.GitDir == r.CommonDir || r.Branch != "served") {
				t.Fatalf("git dir %s, common dir %s, branch %s", r.GitDir, r.CommonDir, r.Branch)
			}
			write(t, dir, "kb/x/a-b.md", "ab")
			write(t, dir, "kb/x/a/deep/n.md", "n")
			write(t, dir, "kb/x/a.md", "a2")
			write(t, dir, "kb/run.sh", "#!/bin/sh\n")
			if err := os.Chmod(filepath.Join(dir, "kb", "run.sh"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.RemoveAll(filepath.Join(dir, "kb", "x", "gone")); err != nil {
				t.Fatal(err)
			}
			commitJob(t, r, JobSubject("store", "j9", "x/a/deep/n.md"), files(map[string]string{
				"kb/x/a-b.md": "ab", "kb/x/a/deep/n.md": "n", "kb/x/a.md": "a2", "kb/run.sh": "#!/bin/sh\n",
			}, "kb/x/gone/only.md"))
			fsck(t, dir)
			got := gitOut(t, dir, "ls-tree", "-r", "--format=%(objectmode) %(path)", "HEAD")
			want := "100644 README.md\n100755 kb/run.sh\n100644 kb/x/a-b.md\n100644 kb/x/a.md\n100644 kb/x/a/deep/n.md"
			if got != want {
				t.Errorf("HEAD holds\n%s\nwant\n%s", got, want)
			}
			if st := gitOut(t, dir, "status", "--porcelain"); st != "" {
				t.Errorf("status after the commit: %q", st)
			}
			if got := gitOut(t, dir, "log", "-1", "--format=%an <%ae>|%s", "HEAD"); got != "kk serve <kk-serve@kk.invalid>|store(j9): x/a/deep/n.md" {
				t.Errorf("commit %q", got)
			}
			for i, by := range []string{"worker", "worker", "person", "worker"} {
				name := fmt.Sprintf("kb/x/a/deep/m%d.md", i)
				write(t, dir, name, name)
				if by == "person" {
					gitOut(t, dir, "add", name)
					gitOut(t, dir, "-c", "user.name=p", "-c", "user.email=p@p", "commit", "-qm", "by hand")
					continue
				}
				commitJob(t, r, JobSubject("store", fmt.Sprintf("k%d", i), name), files(map[string]string{name: name}))
			}
			fsck(t, dir)
			if got := gitOut(t, dir, "ls-tree", "-r", "--name-only", "HEAD", "kb/x/a/deep"); got != "kb/x/a/deep/m0.md\nkb/x/a/deep/m1.md\nkb/x/a/deep/m2.md\nkb/x/a/deep/m3.md\nkb/x/a/deep/n.md" {
				t.Errorf("HEAD's kb/x/a/deep: %q", got)
			}
			if st := gitOut(t, dir, "status", "--porcelain"); st != "" {
				t.Errorf("status after the commits: %q", st)
			}
			if got, want := gitOut(t, dir, "ls-files", "-s"), gitOut(t, dir, "ls-tree", "-r", "--format=%(objectmode) %(objectname) 0\t%(path)", "HEAD"); got != want {
				t.Errorf("git's index:\n%s\nHEAD:\n%s", got, want)
			}
			// No object went to a per-work-tree folder git never reads.
			if layout == "worktree" {
				if _, err := os.Stat(filepath.Join(r.GitDir, "objects")); err == nil {
					t.Error("objects were written under the work tree's git folder")
				}
			}
		})
	}
}

// The first commit of an unborn branch has no parent.
func TestRepoCommitOnAnUnbornBranch(t *testing.T) {
	dir := gitRepo(t)
	write(t, dir, "a.md", "a")
	write(t, dir, "other.md", "o")
	r := openRepo(t, dir)
	commitJob(t, r, JobSubject("store", "j1", "a.md"), files(map[string]string{"a.md": "a"}))
	if got := gitOut(t, dir, "show", "--name-only", "--format=%s|%P", "HEAD"); got != "store(j1): a.md|\n\na.md" {
		t.Errorf("first commit: %q", got)
	}
	if st := gitOut(t, dir, "status", "--porcelain"); st != "?? other.md" {
		t.Errorf("status: %q", st)
	}
}

// A commit is made of the contents it is given, not of what the work
// tree holds by then (the next job wrote over it), and leaves git's index
// at the commit, so that git status shows only the later change.
func TestRepoCommitsTheContentsGiven(t *testing.T) {
	dir := gitRepo(t)
	ctx := context.Background()
	write(t, dir, "notes/a.md", "a1")
	write(t, dir, "notes/b.md", "b1")
	if _, err := CommitPaths(ctx, dir, worker, "init", []string{"notes/a.md", "notes/b.md"}); err != nil {
		t.Fatal(err)
	}
	r := openRepo(t, dir)
	// The job wrote a2 and c1 and removed b; the next job has already
	// written a3 and made b again.
	write(t, dir, "notes/a.md", "a3")
	write(t, dir, "notes/c.md", "c1")
	write(t, dir, "notes/b.md", "b2")
	commitJob(t, r, JobSubject("store", "j1", "notes/c.md"), files(map[string]string{"notes/a.md": "a2", "notes/c.md": "c1"}, "notes/b.md"))
	for p, want := range map[string]string{"notes/a.md": "a2", "notes/c.md": "c1"} {
		if got := gitOut(t, dir, "show", "HEAD:"+p); got != want {
			t.Errorf("HEAD:%s = %q, want %q", p, got, want)
		}
	}
	if out, err := Run(ctx, dir, "cat-file", "-e", "HEAD:notes/b.md"); err == nil {
		t.Errorf("notes/b.md is still in HEAD (%s)", out)
	}
	if st := gitOut(t, dir, "status", "--porcelain"); st != "M notes/a.md\n?? notes/b.md" {
		t.Errorf("status after the commit: %q", st)
	}
}

// index.lock is taken before the branch moves and let go only once the
// index is in place, as git commit does: a lock another git process
// holds is waited for (and reported), the branch staying where it is
// meanwhile; a wait that is told to stop ends with ErrInterrupted and
// nothing changed. Git's own lock on the branch is waited for too.
func TestRepoCommitWaitsForGitsLocks(t *testing.T) {
	ctx := context.Background()
	dir, r := committedRepo(t)
	head := gitOut(t, dir, "rev-parse", "HEAD")
	lock := filepath.Join(dir, ".git", "index.lock")
	write(t, dir, "b.md", "b")
	write(t, dir, "c.md", "c")
	write(t, dir, "d.md", "d")
	write(t, dir, ".git/index.lock", "")
	var mu sync.Mutex
	var reports []string
	done := make(chan error, 1)
	go func() {
		_, err := r.Commit(ctx, CommitOptions{Author: worker, Message: "one", Plan: files(map[string]string{"b.md": "b"}),
			OnWait: func(what string) { mu.Lock(); reports = append(reports, what); mu.Unlock() }})
		done <- err
	}()
	time.Sleep(400 * time.Millisecond)
	if got := gitOut(t, dir, "rev-parse", "HEAD"); got != head {
		t.Fatal("the branch moved while index.lock was held")
	}
	mu.Lock()
	if len(reports) == 0 || !strings.Contains(reports[0], lock) {
		t.Errorf("the wait was not reported naming the lock: %q", reports)
	}
	mu.Unlock()
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := gitOut(t, dir, "show", "HEAD:b.md"); got != "b" {
		t.Errorf("HEAD:b.md = %q", got)
	}
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Error("index.lock left behind")
	}

	// Told to stop while waiting: nothing moves, no lock is left.
	head = gitOut(t, dir, "rev-parse", "HEAD")
	write(t, dir, ".git/index.lock", "")
	stop, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	_, err := r.Commit(ctx, CommitOptions{Author: worker, Message: "two", Plan: files(map[string]string{"c.md": "c"}), Wait: stop})
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err = %v, want ErrInterrupted", err)
	}
	if got := gitOut(t, dir, "rev-parse", "HEAD"); got != head {
		t.Fatal("an interrupted commit moved the branch")
	}
	if data, _ := os.ReadFile(lock); len(data) != 0 {
		t.Error("the other process's lock was changed")
	}
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}

	// The branch's own lock, held for a moment by a git command.
	branchLock := filepath.Join(dir, ".git", "refs", "heads", r.Branch+".lock")
	write(t, dir, ".git/refs/heads/"+r.Branch+".lock", "")
	time.AfterFunc(300*time.Millisecond, func() { _ = os.Remove(branchLock) })
	commitJob(t, r, "three", files(map[string]string{"d.md": "d"}))
	if got := gitOut(t, dir, "log", "-1", "--format=%s"); got != "three" {
		t.Errorf("HEAD is %q", got)
	}
	if st := gitOut(t, dir, "status", "--porcelain"); st != "?? c.md" {
		t.Errorf("status: %q", st)
	}
}

// A person's commit that lands between the tip a commit was built on and
// the move of the branch makes the compare and swap miss: the commit is
// built again on the new tip (Plan is asked again), and neither change is
// lost.
func TestRepoCommitRebuildsWhenTheBranchMoved(t *testing.T) {
	ctx := context.Background()
	dir, r := committedRepo(t)
	// Another writer's commit, made with plumbing (git commit would wait
	// for the index.lock the worker holds).
	tree := gitOut(t, dir, "rev-parse", "HEAD^{tree}")
	other := gitOut(t, dir, "commit-tree", "-p", "HEAD", "-m", "by another writer", tree)
	moveBeforeTheFirstMove(t, r, dir, other)
	var heads []string
	l, err := r.Commit(ctx, CommitOptions{Author: worker, Message: "job", Plan: func(head string) (Changes, error) {
		heads = append(heads, head)
		return Changes{Files: map[string][]byte{"b.md": []byte("b")}}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(heads) != 2 || heads[1] != other || l.Parent != other {
		t.Errorf("planned on %v, parent %s; want the second plan on %s", heads, l.Parent, other)
	}
	if got := gitOut(t, dir, "log", "--format=%s"); got != "job\nby another writer\ninit" {
		t.Errorf("history:\n%s", got)
	}
	fsck(t, dir)
}

// A writer that moves the branch and leaves the commit's Scope as it was
// does not make the commit plan again: its changes are built on the new
// tip at once (a plan takes long enough for a writer that commits without
// a pause to move the branch during every one). One that changed the
// Scope does, and so does a plan that holds only on the tip (TipOnly).
func TestRepoCommitKeepsItsPlanWhenItsScopeIsUntouched(t *testing.T) {
	for _, tc := range []struct {
		name, other string
		tipOnly     bool
		plans       int
	}{
		{"outside", "src/x.go", false, 1},
		{"inside", "kb/x.md", false, 2},
		{"tip only", "src/x.go", true, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir, r := committedRepo(t)
			write(t, dir, "kb/a.md", "a")
			gitOut(t, dir, "add", "kb/a.md")
			gitOut(t, dir, "commit", "-q", "-m", "kb")
			// Another writer's commit, made with plumbing (git commit would
			// wait for the index.lock the worker holds).
			other := plumbingCommit(t, dir, tc.other, "by another writer")
			moveBeforeTheFirstMove(t, r, dir, other)
			plans := 0
			l, err := r.Commit(ctx, CommitOptions{Author: worker, Message: "job", Scope: "kb", Plan: func(head string) (Changes, error) {
				plans++
				return Changes{Files: map[string][]byte{"kb/b.md": []byte("b")}, TipOnly: tc.tipOnly}, nil
			}})
			if err != nil {
				t.Fatal(err)
			}
			if plans != tc.plans || l.Parent != other {
				t.Errorf("%d plans, parent %s; want %d, %s", plans, l.Parent, tc.plans, other)
			}
			if got := gitOut(t, dir, "ls-tree", "-r", "--name-only", "HEAD"); !slices.Contains(strings.Split(got, "\n"), tc.other) || !slices.Contains(strings.Split(got, "\n"), "kb/b.md") {
				t.Errorf("HEAD holds:\n%s", got)
			}
			if got := gitOut(t, dir, "diff", "--cached", "--name-only", "HEAD", "--", "kb/b.md"); got != "" {
				t.Errorf("git's index differs from HEAD: %s", got)
			}
			fsck(t, dir)
		})
	}
}

// moveBeforeTheFirstMove makes another writer move r's branch to other
// just before r's first move of it (its compare and swap then misses).
func moveBeforeTheFirstMove(t *testing.T, r *Repo, dir, other string) {
	t.Helper()
	raced := false
	r.fault = func(point string) error {
		if point == "move" && !raced {
			raced = true
			gitOut(t, dir, "update-ref", "refs/heads/"+r.Branch, other)
		}
		return nil
	}
}

// plumbingCommit makes a commit on HEAD that adds path, with git's
// plumbing and an index of its own (git's index and the branch are left
// alone), and returns its id.
func plumbingCommit(t *testing.T, dir, path, message string) string {
	t.Helper()
	env := append(os.Environ(), "GIT_INDEX_FILE="+filepath.Join(t.TempDir(), "index"))
	run := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	run("read-tree", "HEAD")
	cmd := exec.Command("git", "hash-object", "-w", "--stdin")
	cmd.Dir, cmd.Stdin = dir, strings.NewReader(path+"\n")
	blob, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	run("update-index", "--add", "--cacheinfo", "100644,"+strings.TrimSpace(string(blob))+","+path)
	return run("commit-tree", "-p", "HEAD", "-m", message, run("write-tree"))
}

// Whatever fails after the branch moved does not undo the commit: it is
// reported beside it.
func TestRepoCommitFailureAfterTheMove(t *testing.T) {
	ctx := context.Background()
	dir, r := committedRepo(t)
	r.fault = func(point string) error {
		if point == "moved" {
			return errors.New("injected")
		}
		return nil
	}
	l, err := r.Commit(ctx, CommitOptions{Author: worker, Message: "job", Plan: files(map[string]string{"b.md": "b"})})
	if err != nil || l.IndexErr == nil {
		t.Fatalf("err %v, index error %v", err, l.IndexErr)
	}
	if got := gitOut(t, dir, "rev-parse", "HEAD"); got != l.Commit {
		t.Error("the commit was not kept")
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "index.lock")); !os.IsNotExist(err) {
		t.Error("index.lock left behind")
	}
	if err := ResetIndexToHead(ctx, dir, l.Commit); err != nil {
		t.Fatal(err)
	}
	if got := gitOut(t, dir, "ls-files", "-s", "b.md"); !strings.Contains(got, "b.md") {
		t.Errorf("index after the reset: %q", got)
	}
}

// A worker killed after its commit moved the branch, before it put git's
// index in place, leaves the branch at the commit and git's index at its
// parent: git status shows the commit's files undone and staged, and a
// person's git commit in that state (one made before the job ran again)
// commits the index as the kill left it, the job's files undone on the
// branch. The next start keeps the killed worker's index.lock and
// FinishCommit, taking it over, brings the index in step; a worker
// killed before the branch moved leaves nothing for it to do.
func TestRepoCommitKilledBeforeItsIndexIsFinishedByTheNextStart(t *testing.T) {
	for _, point := range []string{"move", "moved"} {
		t.Run(point, func(t *testing.T) {
			ctx := context.Background()
			dir, r := committedRepo(t)
			parent := gitOut(t, dir, "rev-parse", "HEAD")
			write(t, dir, "mine.txt", "the person's")
			gitOut(t, dir, "add", "--", "mine.txt")
			killedAt(t, r, point, func() {
				_, _ = r.Commit(ctx, CommitOptions{Author: worker, Message: "job", Plan: files(map[string]string{"b.md": "b", "a.md": "a, the job's"})})
			})
			write(t, dir, "b.md", "b")
			write(t, dir, "a.md", "a, the job's")
			write(t, dir, ".git/index.lock", LockMarker+" session=dead pid=1\n")

			r2 := openRepo(t, dir)
			if _, err := r2.RemoveStaleLocks(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(dir, ".git", "index.lock")); err != nil {
				t.Fatalf("the start removed the lock of the killed commit before its repair: %v", err)
			}
			did, err := r2.FinishCommit(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(dir, ".git", "index.lock")); !os.IsNotExist(err) {
				t.Errorf("index.lock after the repair: %v", err)
			}
			if _, err := os.Stat(filepath.Join(dir, ".git", "kk-commit")); !os.IsNotExist(err) {
				t.Errorf("the commit record after the repair: %v", err)
			}
			status := gitOut(t, dir, "status", "--porcelain")
			if point == "move" {
				if did != "" || gitOut(t, dir, "rev-parse", "HEAD") != parent {
					t.Errorf("a commit killed before the branch moved: FinishCommit %q, HEAD %s", did, gitOut(t, dir, "rev-parse", "HEAD"))
				}
				// The job's files, not committed: the job writes and
				// commits them again when it runs again.
				if !strings.Contains(status, "A  mine.txt") || !strings.Contains(status, "?? b.md") || strings.Contains(status, "D") {
					t.Errorf("git status:\n%s", status)
				}
				return
			}
			if did == "" {
				t.Error("FinishCommit did nothing")
			}
			if status != "A  mine.txt" {
				t.Errorf("git status after FinishCommit:\n%s\nwant only the person's staged mine.txt", status)
			}
			fsck(t, dir)
		})
	}
}

// A record of a killed commit that cannot be read is dropped, and the
// killed worker's index.lock the start kept for its repair with it: no
// later commit waits for that lock.
func TestRepoDropsAnUnreadableCommitRecordAndItsLock(t *testing.T) {
	ctx := context.Background()
	dir, _ := committedRepo(t)
	write(t, dir, ".git/kk-commit", "garbage\n")
	write(t, dir, ".git/index.lock", LockMarker+" session=dead pid=1\n")
	r := openRepo(t, dir)
	if _, err := r.RemoveStaleLocks(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.FinishCommit(ctx); err == nil || !strings.Contains(err.Error(), "not a record of a commit") {
		t.Errorf("FinishCommit of an unreadable record: %v", err)
	}
	for _, f := range []string{"kk-commit", "index.lock"} {
		if _, err := os.Stat(filepath.Join(dir, ".git", f)); !os.IsNotExist(err) {
			t.Errorf("%s left: %v", f, err)
		}
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := r.Commit(wctx, CommitOptions{Author: worker, Message: "job", Plan: files(map[string]string{"b.md": "b"}), Wait: wctx}); err != nil {
		t.Errorf("a commit after: %v", err)
	}
}

// A worker that was killed leaves its index.lock (marked) and its copy of
// the index; the next one removes both. A lock without the mark is a git
// command's, and stays.
func TestRepoRemovesOnlyItsOwnStaleLocks(t *testing.T) {
	dir := gitRepo(t)
	ctx := context.Background()
	write(t, dir, "a.md", "a")
	if _, err := CommitPaths(ctx, dir, worker, "init", []string{"a.md"}); err != nil {
		t.Fatal(err)
	}
	write(t, dir, ".git/index.lock", LockMarker+" session=dead pid=1\n")
	write(t, dir, ".git/index.kk-dead", "x")
	r := openRepo(t, dir)
	removed, err := r.RemoveStaleLocks()
	if err != nil || len(removed) != 2 {
		t.Fatalf("removed %v, %v", removed, err)
	}
	commitJob(t, r, "after", files(map[string]string{"b.md": "b"}))
	write(t, dir, ".git/index.lock", "")
	if removed, err := r.RemoveStaleLocks(); err != nil || len(removed) != 0 {
		t.Fatalf("removed %v, %v", removed, err)
	}
	if r.HeldLock() != filepath.Join(r.GitDir, "index.lock") {
		t.Errorf("HeldLock = %q", r.HeldLock())
	}
}

// Where .gitattributes or core.autocrlf convert content on its way in,
// the blob is what git add makes (git hash-object --path): a CRLF file
// under "text eol=lf" is committed with LF and git status stays clean;
// the ident attribute's $Id$ is collapsed.
func TestRepoCommitFollowsAttributes(t *testing.T) {
	dir := gitRepo(t)
	ctx := context.Background()
	write(t, dir, ".gitattributes", "*.md text eol=lf\n*.txt ident\n")
	if _, err := CommitPaths(ctx, dir, worker, "init", []string{".gitattributes"}); err != nil {
		t.Fatal(err)
	}
	r := openRepo(t, dir)
	crlf := "line one\r\nline two\r\n"
	write(t, dir, "n.md", crlf)
	write(t, dir, "lf.md", "plain\n")
	write(t, dir, "v.txt", "$Id$\n")
	commitJob(t, r, "job", files(map[string]string{"n.md": crlf, "lf.md": "plain\n", "v.txt": "$Id$\n"}))
	if got := gitOut(t, dir, "cat-file", "-p", "HEAD:n.md"); got != "line one\nline two" {
		t.Errorf("HEAD:n.md = %q", got)
	}
	if st := gitOut(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("status: %q", st)
	}
	fsck(t, dir)
	// .gitattributes changed while the checker runs: it is asked again.
	time.Sleep(10 * time.Millisecond)
	write(t, dir, ".gitattributes", "*.md text eol=lf\n*.txt ident\n*.cfg text eol=lf\n")
	write(t, dir, "a.cfg", crlf)
	commitJob(t, r, "job", files(map[string]string{".gitattributes": "*.md text eol=lf\n*.txt ident\n*.cfg text eol=lf\n", "a.cfg": crlf}))
	if got := gitOut(t, dir, "cat-file", "-p", "HEAD:a.cfg"); got != "line one\nline two" {
		t.Errorf("HEAD:a.cfg after .gitattributes changed = %q", got)
	}
	// core.autocrlf without attributes.
	dir2 := gitRepo(t)
	gitOut(t, dir2, "config", "core.autocrlf", "input")
	write(t, dir2, "x.md", "x\n")
	if _, err := CommitPaths(ctx, dir2, worker, "init", []string{"x.md"}); err != nil {
		t.Fatal(err)
	}
	r2 := openRepo(t, dir2)
	write(t, dir2, "y.md", crlf)
	commitJob(t, r2, "job", files(map[string]string{"y.md": crlf}))
	if got := gitOut(t, dir2, "cat-file", "-p", "HEAD:y.md"); got != "line one\nline two" {
		t.Errorf("HEAD:y.md under autocrlf = %q", got)
	}
	if st := gitOut(t, dir2, "status", "--porcelain"); st != "" {
		t.Errorf("status under autocrlf: %q", st)
	}
}

// The branch a Repo was opened on is the only one it commits to: with
// another branch checked out, a commit is refused and nothing moves.
func TestRepoCommitsOnlyToItsBranch(t *testing.T) {
	dir := gitRepo(t)
	ctx := context.Background()
	write(t, dir, "a.md", "a")
	if _, err := CommitPaths(ctx, dir, worker, "init", []string{"a.md"}); err != nil {
		t.Fatal(err)
	}
	gitOut(t, dir, "branch", "-M", "main")
	r := openRepo(t, dir)
	gitOut(t, dir, "switch", "-q", "-c", "other")
	head := gitOut(t, dir, "rev-parse", "HEAD")
	_, err := r.Commit(ctx, CommitOptions{Author: worker, Message: "job", Plan: files(map[string]string{"b.md": "b"})})
	if !errors.Is(err, ErrNotPinned) || !strings.Contains(err.Error(), "other") {
		t.Fatalf("err = %v", err)
	}
	if gitOut(t, dir, "rev-parse", "main") != head || gitOut(t, dir, "rev-parse", "other") != head {
		t.Error("a branch moved")
	}
	if ok, b := r.OnBranch(ctx); ok || b != "other" {
		t.Errorf("OnBranch = %v %q", ok, b)
	}
	gitOut(t, dir, "switch", "-q", "main")
	commitJob(t, r, "job", files(map[string]string{"b.md": "b"}))
	if _, err := OpenRepo(ctx, dir); err != nil {
		t.Fatal(err)
	}
	gitOut(t, dir, "switch", "-q", "--detach")
	if _, err := OpenRepo(ctx, dir); err == nil || !strings.Contains(err.Error(), "detached") {
		t.Errorf("a detached HEAD: %v", err)
	}
}

// index.lock is taken in one step with kk's mark in it (a second name of
// the session's marker file), so that a kill can never leave an empty
// lock no later start could tell from a git command's; its time is the
// moment it was taken. The marker file goes with the Repo, and a dead
// session's with the next start.
func TestRepoIndexLockIsNeverEmpty(t *testing.T) {
	ctx := context.Background()
	dir, r := committedRepo(t)
	lock := filepath.Join(dir, ".git", "index.lock")
	for range 2 {
		unlock, err := r.lockIndex(ctx, func(string) {})
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(lock)
		if err != nil || !bytes.HasPrefix(data, []byte(LockMarker)) || !bytes.Contains(data, []byte("session="+r.session+" ")) {
			t.Fatalf("index.lock holds %q (%v)", data, err)
		}
		if fi, err := os.Stat(lock); err != nil || time.Since(fi.ModTime()) > time.Second {
			t.Errorf("index.lock's time: %v", err)
		}
		if r.HeldLock() != lock {
			t.Error("the lock is not seen")
		}
		// A second taker waits for it.
		wctx, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
		if _, err := r.lockIndex(wctx, func(string) {}); !errors.Is(err, ErrInterrupted) {
			t.Errorf("second lock: %v", err)
		}
		cancel()
		unlock()
		if _, err := os.Stat(lock); !os.IsNotExist(err) {
			t.Fatal("index.lock left")
		}
		time.Sleep(5 * time.Millisecond)
	}
	mark := r.lockMark()
	if _, err := os.Stat(mark); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if _, err := os.Stat(mark); !os.IsNotExist(err) {
		t.Error("the marker file stayed after Close")
	}
	// A dead session's marker file goes at the next start.
	dead := filepath.Join(dir, ".git", "index.kk-dead.mark")
	write(t, dir, ".git/index.kk-dead.mark", LockMarker+" session=dead pid=1\n")
	r2 := openRepo(t, dir)
	if _, err := r2.RemoveStaleLocks(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Error("a dead session's marker file stayed")
	}
}

// committedRepo is a repository with one commit (a.md) and the Repo of it.
func committedRepo(t *testing.T) (string, *Repo) {
	t.Helper()
	dir := gitRepo(t)
	write(t, dir, "a.md", "a")
	if _, err := CommitPaths(context.Background(), dir, worker, "init", []string{"a.md"}); err != nil {
		t.Fatal(err)
	}
	return dir, openRepo(t, dir)
}
