package serve

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/store"
)

// divergeFromOrigin gives k's repository an origin a colleague pushed a
// file to (colleague.txt) and a job of s's own not yet shared, so that
// the next --push-every tick has commits to replay onto origin's.
func divergeFromOrigin(t *testing.T, s *server, k *store.KB) {
	t.Helper()
	colleaguePushes(t, withOrigin(t, k, "colleague"), "colleague.txt", "theirs\n")
	if j := s.post(t, httpapi.PostRequest{Title: "Local note", Content: "to share\n"}); j.Status != "done" {
		t.Fatalf("post: %+v", j)
	}
}

// colleaguePushes writes name (data) in the colleague's clone, commits
// it and pushes it to origin's branch of the clone's.
func colleaguePushes(t *testing.T, clone, name, data string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(clone, name), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"add", name}, {"-c", "user.name=c", "-c", "user.email=c@example.com", "commit", "-qm", "colleague: " + name}, {"push", "-q", "origin", "HEAD"}} {
		if out, err := gitx.Run(ctx, clone, args...); err != nil {
			t.Fatalf("%v: %v %s", args, err, out)
		}
	}
}

// shares runs a --push-every tick of s, which must share: what names the
// tick in the failure.
func shares(t *testing.T, s *server, k *store.KB, what string) {
	t.Helper()
	s.Backend.Share(ctx)
	if p := s.Backend.SharingProblem(); p != "" {
		t.Fatalf("%s failed: %s", what, p)
	}
	if got, want := git(t, k, "rev-parse", "origin/main"), git(t, k, "rev-parse", "HEAD"); got != want {
		t.Errorf("origin at %s, HEAD at %s: %s did not share", got, want, what)
	}
}

// The --push-every tick replays the branch's commits onto origin's in a
// work tree of kk's own, never in the person's: there git rebase
// --autostash stashed the person's changes, detached their HEAD for the
// length of the rebase and reset their files, so that a save of theirs
// in that instant failed the rebase ("cannot rebase: You have unstaged
// changes") or its autostash's pop, and their work ended in git stash
// list (TestServeSoakKill9 with KK_SOAK_PUSH_PERSON=1). The person's work
// tree now sees one git command, git reset --keep, which moves the
// branch and changes only the files the rebase changed, keeping every
// change of theirs (staged or not) and refusing, changing nothing, when
// one is in its way.
//
// A smudge filter of the repository's configuration stands in for the
// person: run by the replay's checkout of the notes, it notes what the
// person's HEAD is in that instant and saves an edit of theirs.
func TestShareRebasesOutsideThePersonsWorkTree(t *testing.T) {
	s := start(t, newRepo(t, 0), nil)
	k := s.KB
	mine := filepath.Join(k.Root, "mine.txt")
	if err := os.WriteFile(mine, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, k, "add", "mine.txt")
	git(t, k, "-c", "user.name=p", "-c", "user.email=p@example.com", "commit", "-qm", "mine")
	divergeFromOrigin(t, s, k)
	// The person's change, not committed, before the tick.
	if err := os.WriteFile(mine, []byte("mine\nbefore\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	probe := filepath.Join(t.TempDir(), "probe")
	script := `unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_PREFIX; ` +
		`if [ ! -e "$0" ]; then (git -C "$1" symbolic-ref -q HEAD || echo detached) > "$0"; echo mid-tick >> "$1/mine.txt"; fi; cat`
	git(t, k, "config", "filter.probe.smudge", "sh -c '"+script+"' "+probe+" "+k.Root)
	if err := os.WriteFile(filepath.Join(k.Root, ".git", "info", "attributes"), []byte("*.md filter=probe\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	shares(t, s, k, "the tick")
	if got, err := os.ReadFile(probe); err != nil || strings.TrimSpace(string(got)) != "refs/heads/main" {
		t.Errorf("the person's HEAD during the rebase (%v): %q, want refs/heads/main", err, got)
	}
	if got, err := os.ReadFile(mine); err != nil || string(got) != "mine\nbefore\nmid-tick\n" {
		t.Errorf("the person's mine.txt after the tick (%v): %q", err, got)
	}
	if got, err := os.ReadFile(filepath.Join(k.Root, "colleague.txt")); err != nil || string(got) != "theirs\n" {
		t.Errorf("the colleague's file in the work tree (%v): %q", err, got)
	}
	if out := git(t, k, "stash", "list"); out != "" {
		t.Errorf("a stash is left: %s", out)
	}
	if out := git(t, k, "status", "--porcelain", "--untracked-files=no"); out != "M mine.txt" {
		t.Errorf("git status after the tick:\n%s\nwant only the person's mine.txt", out)
	}
	// kk's work tree checks out the knowledge base's folder alone (a
	// knowledge base in a large repository costs no second checkout of
	// all of it).
	aside := filepath.Join(k.Root, ".git", "kk-share")
	if _, err := os.Stat(filepath.Join(aside, ".ai", "kenkeep", "ENTRY.md")); err != nil {
		t.Errorf("kk's work tree lacks the knowledge base: %v", err)
	}
	for _, name := range []string{"mine.txt", "colleague.txt"} {
		if _, err := os.Stat(filepath.Join(aside, name)); err == nil {
			t.Errorf("kk's work tree checked out %s, outside the knowledge base", name)
		}
	}
}

// What a kk serve killed in the middle of a tick leaves in its own work
// tree (a rebase stopped halfway, git's index.lock there) does not hold
// the next tick: that work tree is kk's alone, set right again.
func TestShareAfterATickKilledInItsWorkTree(t *testing.T) {
	s := start(t, newRepo(t, 0), nil)
	k := s.KB
	divergeFromOrigin(t, s, k)
	s.Backend.Share(ctx)
	if p := s.Backend.SharingProblem(); p != "" {
		t.Fatalf("the first tick failed: %s", p)
	}
	aside := filepath.Join(k.Root, ".git", "kk-share")
	if _, err := os.Stat(aside); err != nil {
		t.Fatalf("the tick's work tree: %v", err)
	}
	asideGit := strings.TrimSpace(func() string {
		out, err := gitx.Read(ctx, aside, "rev-parse", "--absolute-git-dir")
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}())
	// Another round to replay, then what the kill left: a rebase in
	// progress in kk's work tree and its index.lock.
	if err := os.WriteFile(filepath.Join(aside, "left.txt"), []byte("left\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(asideGit, "rebase-merge"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(asideGit, "rebase-merge", "onto"), []byte(git(t, k, "rev-parse", "HEAD")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(asideGit, "index.lock"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "again")
	git(t, k, "clone", "-q", git(t, k, "remote", "get-url", "origin"), other)
	colleaguePushes(t, other, "again.txt", "again\n")
	if j := s.post(t, httpapi.PostRequest{Title: "Second local note", Content: "to share too\n"}); j.Status != "done" {
		t.Fatalf("post: %+v", j)
	}

	shares(t, s, k, "the tick after the kill")
	if _, err := os.Stat(filepath.Join(k.Root, "again.txt")); err != nil {
		t.Errorf("origin's again.txt is not in the work tree: %v", err)
	}
	if out := git(t, k, "status", "--porcelain"); out != "" {
		t.Errorf("git status after the tick:\n%s", out)
	}
}

// A commit the person makes while the tick replays the branch (found by
// TestServeSoakKill9: git checkout -B moved the branch over it, and the
// commit was left out of the branch) is never moved away: the branch is
// checked under index.lock before it moves, that tick shares nothing,
// and the next one shares the person's commit with the rest.
func TestShareKeepsACommitThePersonMadeDuringTheReplay(t *testing.T) {
	s := start(t, newRepo(t, 0), nil)
	k := s.KB
	divergeFromOrigin(t, s, k)
	done := filepath.Join(t.TempDir(), "done")
	script := `unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_PREFIX; ` +
		`if [ ! -e "$0" ]; then echo person > "$1/person.txt" && git -C "$1" add person.txt && ` +
		`git -C "$1" -c core.hooksPath=/dev/null -c user.name=p -c user.email=p@example.com commit -qm person && touch "$0"; fi; cat`
	git(t, k, "config", "filter.probe.smudge", "sh -c '"+script+"' "+done+" "+k.Root)
	if err := os.WriteFile(filepath.Join(k.Root, ".git", "info", "attributes"), []byte("*.md filter=probe\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	s.Backend.Share(ctx)
	if _, err := os.Stat(done); err != nil {
		t.Fatalf("the person's commit during the replay was not made: %v", err)
	}
	if got := git(t, k, "log", "-1", "--format=%s", "HEAD"); got != "person" {
		t.Errorf("the branch's tip after the tick is %q, want the person's commit", got)
	}
	shares(t, s, k, "the next tick")
	if got := git(t, k, "show", "origin/main:person.txt"); got != "person" {
		t.Errorf("origin's person.txt: %q", got)
	}
	if out := git(t, k, "status", "--porcelain"); out != "" {
		t.Errorf("git status after the ticks:\n%s", out)
	}
}

// A kk serve of a linked work tree replays in a work tree of its own
// beside it (in that work tree's git folder), and moves only its branch.
func TestShareFromALinkedWorkTree(t *testing.T) {
	k := newRepo(t, 0)
	wt := filepath.Join(t.TempDir(), "served")
	git(t, k, "worktree", "add", "-q", "-b", "served", wt)
	main := git(t, k, "rev-parse", "main")
	lk := store.New(wt)
	s := start(t, lk, nil)
	origin := filepath.Join(t.TempDir(), "origin.git")
	git(t, lk, "init", "-q", "--bare", origin)
	git(t, lk, "remote", "add", "origin", origin)
	git(t, lk, "push", "-q", "origin", "served")
	clone := filepath.Join(t.TempDir(), "colleague")
	git(t, lk, "clone", "-q", "-b", "served", origin, clone)
	colleaguePushes(t, clone, "colleague.txt", "theirs\n")
	if j := s.post(t, httpapi.PostRequest{Title: "Local note", Content: "to share\n"}); j.Status != "done" {
		t.Fatalf("post: %+v", j)
	}

	s.Backend.Share(ctx)
	if p := s.Backend.SharingProblem(); p != "" {
		t.Fatalf("the tick failed: %s", p)
	}
	if got, want := git(t, lk, "rev-parse", "origin/served"), git(t, lk, "rev-parse", "HEAD"); got != want {
		t.Errorf("origin at %s, HEAD at %s: the tick did not share", got, want)
	}
	if got := git(t, k, "rev-parse", "main"); got != main {
		t.Errorf("main moved from %s to %s", main, got)
	}
	if out := git(t, lk, "status", "--porcelain"); out != "" {
		t.Errorf("git status of the served work tree:\n%s", out)
	}
	if list := git(t, k, "worktree", "list"); !strings.Contains(list, filepath.Join("worktrees", "served", "kk-share")) {
		t.Errorf("kk's work tree is not beside the served one's git folder:\n%s", list)
	}
}
