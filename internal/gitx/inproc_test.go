package gitx

import (
	"context"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// copyRepo copies a repository folder (work tree and .git) to a new one.
func copyRepo(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	if out, err := exec.Command("cp", "-a", src+"/.", dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	return dst
}

// indexRepo is a repository with nested files committed, an index with
// a cache tree and an untracked cache, and a resolve-undo record.
func indexRepo(t *testing.T) string {
	t.Helper()
	dir := gitRepo(t)
	for _, p := range []string{"a.md", "b/c.md", "b/d/e.md", "b/d/f.md", "z.md", "b-x.md", "b/d.md.x"} {
		write(t, dir, p, "content of "+p+"\n")
	}
	gitOut(t, dir, "add", "-A")
	gitOut(t, dir, "commit", "-qm", "one")
	gitOut(t, dir, "update-index", "--untracked-cache")
	gitOut(t, dir, "status", "--porcelain")
	return dir
}

// blobID writes content as a blob and returns its id.
func blobID(t *testing.T, dir, content string) string {
	t.Helper()
	cmd := exec.Command("git", "hash-object", "-w", "--stdin")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(content)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// The in-process index update leaves the index git update-index
// --index-info leaves: the same entries, a valid checksum (git refuses
// an index whose checksum is wrong), and git status agrees.
func TestUpdateIndexMatchesGit(t *testing.T) {
	base := indexRepo(t)
	ours, theirs := copyRepo(t, base), copyRepo(t, base)
	info := ""
	for _, c := range [][2]string{{"b/d/g.md", "new\n"}, {"a.md", "changed\n"}, {"b/d0.md", "sorts after b/d/\n"}, {"0.md", "first\n"}, {"b/d/e.md", ""}} {
		if c[1] == "" {
			info += "0 " + strings.Repeat("0", 40) + "\t" + c[0] + "\n"
			for _, d := range []string{ours, theirs} {
				if err := os.Remove(filepath.Join(d, c[0])); err != nil {
					t.Fatal(err)
				}
			}
			continue
		}
		for _, d := range []string{ours, theirs} {
			write(t, d, c[0], c[1])
		}
		info += "100644 " + blobID(t, ours, c[1]) + "\t" + c[0] + "\n"
		blobID(t, theirs, c[1])
	}
	changes, err := parseIndexInfo([]byte(info))
	if err != nil {
		t.Fatal(err)
	}
	if err := updateIndex(context.Background(), filepath.Join(ours, ".git"), changes); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "update-index", "--index-info")
	cmd.Dir = theirs
	cmd.Stdin = strings.NewReader(info)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git update-index: %v\n%s", err, out)
	}
	for _, args := range [][]string{{"ls-files", "-s"}, {"status", "--porcelain"}, {"diff", "--cached", "--name-status"}} {
		if got, want := gitOut(t, ours, args...), gitOut(t, theirs, args...); got != want {
			t.Errorf("git %s:\nin-process:\n%s\ngit update-index:\n%s", strings.Join(args, " "), got, want)
		}
	}
	if _, err := os.Stat(filepath.Join(ours, ".git", "index.lock")); err == nil {
		t.Error("index.lock left behind")
	}
	gitOut(t, ours, "commit", "-qm", "two")
	if out := gitOut(t, ours, "status", "--porcelain"); out != "" {
		t.Errorf("after a commit of the updated index, git status says:\n%s", out)
	}
}

// What the in-process update does not handle goes to git: an index of
// version 4, a split index, a file where the index has a folder. (A lock
// some git command holds is waited for: TestHeldLocksAreWaitedFor.)
func TestUpdateIndexDefersToGit(t *testing.T) {
	id, _ := hex.DecodeString(strings.Repeat("ab", 20))
	add := []indexChange{{path: "n.md", mode: 0o100644, id: id}}
	cases := []struct {
		name    string
		prepare func(dir string)
		changes []indexChange
	}{
		{"version 4", func(dir string) { gitOut(t, dir, "update-index", "--index-version", "4") }, add},
		{"split index", func(dir string) { gitOut(t, dir, "update-index", "--split-index") }, add},
		{"file over a folder", func(string) {}, []indexChange{{path: "b/d", mode: 0o100644, id: id}}},
		{"folder over a file", func(string) {}, []indexChange{{path: "a.md/x", mode: 0o100644, id: id}}},
	}
	base := indexRepo(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := copyRepo(t, base)
			c.prepare(dir)
			before, _ := os.ReadFile(filepath.Join(dir, ".git", "index"))
			if err := updateIndex(context.Background(), filepath.Join(dir, ".git"), c.changes); !errors.Is(err, errSlowPath) {
				t.Fatalf("err = %v, want the slow path", err)
			}
			after, _ := os.ReadFile(filepath.Join(dir, ".git", "index"))
			if string(before) != string(after) {
				t.Error("the index changed")
			}
		})
	}
}

// The branch moves by compare and swap, with reflog lines as git
// writes them; a branch whose only record is packed-refs moves too.
func TestUpdateHead(t *testing.T) {
	ctx := context.Background()
	dir := indexRepo(t)
	gitDir := filepath.Join(dir, ".git")
	head := gitOut(t, dir, "rev-parse", "HEAD")
	gitOut(t, dir, "commit", "-q", "--allow-empty", "-m", "two")
	next := gitOut(t, dir, "rev-parse", "HEAD")
	gitOut(t, dir, "update-ref", "HEAD", head)

	if err := updateHead(ctx, gitDir, dir, next, next, worker, "commit: x"); err == nil || !strings.Contains(err.Error(), "expected") {
		t.Fatalf("a stale expected id: err = %v", err)
	}
	if got := gitOut(t, dir, "rev-parse", "HEAD"); got != head {
		t.Fatal("a failed compare and swap moved the branch")
	}
	if err := updateHead(ctx, gitDir, dir, next, head, worker, "commit: two again"); err != nil {
		t.Fatal(err)
	}
	if got := gitOut(t, dir, "rev-parse", "HEAD"); got != next {
		t.Fatalf("HEAD is %s, want %s", got, next)
	}
	branch := gitOut(t, dir, "symbolic-ref", "--short", "HEAD")
	for _, ref := range []string{"HEAD", branch} {
		log := gitOut(t, dir, "reflog", "-1", "--format=%H %gs %gn", ref)
		if log != next+" commit: two again "+worker.Name {
			t.Errorf("reflog of %s: %q", ref, log)
		}
	}
	gitOut(t, dir, "pack-refs", "--all")
	if _, err := os.Stat(filepath.Join(gitDir, "refs", "heads", branch)); err == nil {
		t.Fatal("pack-refs left the loose ref")
	}
	if err := updateHead(ctx, gitDir, dir, head, next, worker, "commit: back"); err != nil {
		t.Fatal(err)
	}
	if got := gitOut(t, dir, "rev-parse", "HEAD"); got != head {
		t.Fatalf("from packed-refs: HEAD is %s, want %s", got, head)
	}
	if out, err := Run(ctx, dir, "fsck", "--no-dangling"); err != nil {
		t.Fatalf("git fsck: %v\n%s", err, out)
	}

	defer func(d time.Duration) { LockWait = d }(LockWait)
	LockWait = 50 * time.Millisecond
	write(t, dir, ".git/refs/heads/"+branch+".lock", "")
	if err := updateHead(ctx, gitDir, dir, next, head, worker, "m"); !lockHeld(err) || errors.Is(err, errSlowPath) {
		t.Errorf("a lock held throughout: err = %v, want the lock named", err)
	}
	if err := os.Remove(filepath.Join(gitDir, "refs", "heads", branch+".lock")); err != nil {
		t.Fatal(err)
	}
	write(t, dir, ".git/hooks/reference-transaction", "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(gitDir, "hooks", "reference-transaction"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := updateHead(ctx, gitDir, dir, next, head, worker, "m"); !errors.Is(err, errSlowPath) {
		t.Errorf("a reference-transaction hook: err = %v, want the slow path", err)
	}
	if err := os.Remove(filepath.Join(gitDir, "hooks", "reference-transaction")); err != nil {
		t.Fatal(err)
	}
	gitOut(t, dir, "checkout", "-q", "--detach")
	if err := updateHead(ctx, gitDir, dir, next, head, worker, "m"); !errors.Is(err, errSlowPath) {
		t.Errorf("a detached HEAD: err = %v, want the slow path", err)
	}
}

// A lock file another git process holds for a moment (a person's git
// status takes index.lock) is waited for, by the in-process updates and by
// the git commands kk runs alike, instead of failing the commit; a lock
// held for longer than LockWait is reported, naming the file, and nothing
// changes.
func TestHeldLocksAreWaitedFor(t *testing.T) {
	defer func(d time.Duration) { LockWait = d }(LockWait)
	ctx := context.Background()
	id, _ := hex.DecodeString(strings.Repeat("ab", 20))
	add := []indexChange{{path: "n.md", mode: 0o100644, id: id}}
	base := indexRepo(t)
	// held takes lock (relative to dir) and lets it go after d, as a short
	// git command would.
	held := func(dir, lock string, d time.Duration) {
		write(t, dir, lock, "")
		time.AfterFunc(d, func() { _ = os.Remove(filepath.Join(dir, filepath.FromSlash(lock))) })
	}

	LockWait = 5 * time.Second
	dir := copyRepo(t, base)
	held(dir, ".git/index.lock", 150*time.Millisecond)
	if err := updateIndex(ctx, filepath.Join(dir, ".git"), add); err != nil {
		t.Fatalf("index.lock held for a moment: %v", err)
	}
	if !strings.Contains(gitOut(t, dir, "ls-files", "-s", "n.md"), hex.EncodeToString(id)) {
		t.Fatal("the index was not updated after the lock went")
	}

	head := gitOut(t, dir, "rev-parse", "HEAD")
	tree := gitOut(t, dir, "rev-parse", "HEAD^{tree}")
	next := gitOut(t, dir, "commit-tree", "-p", head, "-m", "next", tree)
	held(dir, ".git/refs/heads/main.lock", 150*time.Millisecond)
	if err := updateHead(ctx, filepath.Join(dir, ".git"), dir, next, head, worker, "m"); err != nil {
		t.Fatalf("the branch's lock held for a moment: %v", err)
	}
	third := gitOut(t, dir, "commit-tree", "-p", next, "-m", "third", tree)
	held(dir, ".git/refs/heads/main.lock", 150*time.Millisecond)
	if _, err := Run(ctx, dir, "update-ref", "HEAD", third, next); err != nil {
		t.Fatalf("git update-ref while the branch's lock is held for a moment: %v", err)
	}
	if got := gitOut(t, dir, "rev-parse", "HEAD"); got != third {
		t.Fatalf("HEAD is %s, want %s", got, third)
	}

	LockWait = 100 * time.Millisecond
	dir = copyRepo(t, base)
	write(t, dir, ".git/index.lock", "")
	before, _ := os.ReadFile(filepath.Join(dir, ".git", "index"))
	err := updateIndex(ctx, filepath.Join(dir, ".git"), add)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, ".git", "index")+".lock") {
		t.Fatalf("index.lock held throughout: err = %v, want it named", err)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, ".git", "index")); string(before) != string(after) {
		t.Error("the index changed")
	}
	if _, err := Run(ctx, dir, "update-index", "--add", "--cacheinfo", "100644,"+hex.EncodeToString(id)+",n.md"); !lockHeld(err) {
		t.Fatalf("git update-index while index.lock is held throughout: err = %v, want git's lock message", err)
	}
}
