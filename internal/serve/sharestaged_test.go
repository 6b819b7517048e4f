package serve

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/httpapi"
)

// A person's staged change survives the --push-every tick's rebase as
// staged: the rebase's --autostash gave it back with git stash apply,
// which puts back the work tree alone, so a change the person had
// staged came back unstaged, and a version staged with git add and then
// edited further (git add -p's partial staging) was gone from the index
// for good. Found by TestServeSoakKill9's person beside a colleague's
// pushes.
func TestShareKeepsPersonsStagedChange(t *testing.T) {
	s := start(t, newRepo(t, 0), nil)
	k := s.KB
	j := s.post(t, httpapi.PostRequest{Title: "Staged note", Content: "first line\n", Tags: []string{"staged"}})
	if j.Status != "done" {
		t.Fatalf("post: %+v", j)
	}
	// A colleague pushes a file of their own.
	colleaguePushes(t, withOrigin(t, k, "colleague"), "colleague.txt", "theirs\n")
	// A job of this server to share, so that the tick rebases.
	if j2 := s.post(t, httpapi.PostRequest{Title: "Local note", Content: "to share\n"}); j2.Status != "done" {
		t.Fatalf("post: %+v", j2)
	}

	// The person stages an edit of the note, edits it further, and
	// stages a file of their own.
	rel := filepath.ToSlash(filepath.Join(".ai", "kenkeep", "nodes", filepath.FromSlash(j.Path)))
	mine := k.NodePath(j.Path)
	data, err := os.ReadFile(mine)
	if err != nil {
		t.Fatal(err)
	}
	staged := strings.Replace(string(data), "first line\n", "first line\nstaged line\n", 1)
	worktree := staged + "a line not staged\n"
	if err := os.WriteFile(mine, []byte(staged), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(k.Root, "added.txt"), []byte("new file, staged\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, k, "add", "--", rel, "added.txt")
	if err := os.WriteFile(mine, []byte(worktree), 0o644); err != nil {
		t.Fatal(err)
	}
	before := git(t, k, "status", "--porcelain", "--", rel, "added.txt")

	s.Backend.Share(ctx)
	if p := s.Backend.SharingProblem(); p != "" {
		t.Fatalf("the tick failed: %s", p)
	}
	if got, want := git(t, k, "rev-parse", "origin/main"), git(t, k, "rev-parse", "HEAD"); got != want {
		t.Errorf("origin at %s, HEAD at %s: the tick did not share", got, want)
	}
	if got := git(t, k, "show", ":"+rel); got+"\n" != staged {
		t.Errorf("git's index holds for the person's note:\n%s\nwant what they staged:\n%s", got, staged)
	}
	if got, err := os.ReadFile(mine); err != nil || string(got) != worktree {
		t.Errorf("the person's note in the work tree (%v):\n%s", err, got)
	}
	if got := git(t, k, "show", ":added.txt"); got != "new file, staged" {
		t.Errorf("git's index holds %q for the person's added.txt", got)
	}
	// (The generated files of the work tree are made again from its
	// leaves, the person's edit included.)
	if after := git(t, k, "status", "--porcelain", "--", rel, "added.txt"); after != before {
		t.Errorf("git status of the person's files before the tick:\n%s\nafter:\n%s", before, after)
	}
	if out := git(t, k, "stash", "list"); out != "" {
		t.Errorf("a stash is left: %s", out)
	}
}

// A kk serve killed during the --push-every tick's rebase leaves it in
// progress, the person's changes in its autostash: the next start aborts
// it, which gives the stash back unstaged, and puts the person's staged
// changes back in the git index as they were staged.
func TestStartPutsBackStagedChangesOfAKilledRebase(t *testing.T) {
	k := newRepo(t, 0)
	person := []string{"-c", "user.name=p", "-c", "user.email=p@example.com"}
	write := func(dir, name, data string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(k.Root, "shared.txt", "base\n")
	write(k.Root, "mine.txt", "mine\n")
	git(t, k, "add", "shared.txt", "mine.txt")
	git(t, k, append(person, "commit", "-qm", "base")...)
	other := withOrigin(t, k, "colleague")
	write(other, "shared.txt", "theirs\n")
	git(t, k, append([]string{"-C", other}, append(person, "commit", "-qam", "colleague")...)...)
	git(t, k, "-C", other, "push", "-q", "origin", "main")
	// A local commit the rebase stops on (a conflict stands in for the
	// instant of the kill), and the person's staged change.
	write(k.Root, "shared.txt", "ours\n")
	git(t, k, append(person, "commit", "-qam", "ours")...)
	write(k.Root, "mine.txt", "mine\nstaged\n")
	git(t, k, "add", "mine.txt")
	write(k.Root, "mine.txt", "mine\nstaged\nnot staged\n")
	git(t, k, "fetch", "-q", "origin")
	// What the tick writes before its rebase, then the rebase.
	entries, err := gitx.StagedEntries(ctx, k.Root)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(k.StateDir(), rebaseStaged), entries, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(k.StateDir(), rebaseMarker), []byte("origin/main\n"+git(t, k, "rev-parse", "origin/main")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := gitx.Run(ctx, k.Root, "-c", "user.name=kk", "-c", "user.email=kk@example.com", "rebase", "-q", "--autostash", "origin/main"); err == nil {
		t.Fatal("the rebase did not stop")
	}
	if !gitx.RebaseInProgress(filepath.Join(k.Root, ".git")) {
		t.Fatal("no rebase in progress")
	}

	start(t, k, nil)
	if gitx.RebaseInProgress(filepath.Join(k.Root, ".git")) {
		t.Fatal("the start left the rebase in progress")
	}
	if got := git(t, k, "show", ":mine.txt"); got != "mine\nstaged" {
		t.Errorf("git's index holds %q for the person's mine.txt, want what they staged", got)
	}
	if got, err := os.ReadFile(filepath.Join(k.Root, "mine.txt")); err != nil || string(got) != "mine\nstaged\nnot staged\n" {
		t.Errorf("the person's mine.txt in the work tree (%v): %q", err, got)
	}
	for _, name := range []string{rebaseMarker, rebaseStaged} {
		if _, err := os.Stat(filepath.Join(k.StateDir(), name)); err == nil {
			t.Errorf(".state/%s is left", name)
		}
	}
}

// The marker of a tick's rebase a killed kk serve left (killed before
// its git rebase started) beside a rebase of the person's stopped at a
// conflict: the start left the marker's rebase to abort, and aborted the
// person's, their resolution with it. It now aborts only the rebase onto
// the commit its marker names.
func TestStartLeavesAPersonsRebaseAlone(t *testing.T) {
	k := newRepo(t, 0)
	person := []string{"-c", "user.name=p", "-c", "user.email=p@example.com"}
	write := func(name, data string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(k.Root, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("f.txt", "base\n")
	git(t, k, "add", "f.txt")
	git(t, k, append(person, "commit", "-qm", "base")...)
	git(t, k, "branch", "other")
	write("f.txt", "main\n")
	git(t, k, append(person, "commit", "-qam", "main")...)
	tip := git(t, k, "rev-parse", "HEAD")
	git(t, k, "checkout", "-q", "other")
	write("f.txt", "other\n")
	git(t, k, append(person, "commit", "-qam", "other")...)
	git(t, k, "checkout", "-q", "main")
	// kk's marker, onto a commit of its own, then the person's rebase.
	if err := os.WriteFile(filepath.Join(k.StateDir(), rebaseMarker), []byte("refs/remotes/origin/main\n"+tip+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := gitx.Run(ctx, k.Root, append(person, "rebase", "-q", "other")...); err == nil {
		t.Fatal("the person's rebase did not stop")
	}
	write("f.txt", "resolved\n")
	git(t, k, "add", "f.txt")

	start(t, k, nil)
	gitDir := filepath.Join(k.Root, ".git")
	if got, want := gitx.RebaseOnto(gitDir), git(t, k, "rev-parse", "other"); got != want {
		t.Fatalf("the person's rebase is no longer in progress (onto %q)", got)
	}
	if got := git(t, k, "show", ":f.txt"); got != "resolved" {
		t.Errorf("the person's resolution is gone from the index: %q", got)
	}
	if _, err := os.Stat(filepath.Join(k.StateDir(), rebaseMarker)); err == nil {
		t.Error("the marker is left")
	}
}

// A kk serve killed between recording the person's staged changes and
// writing its rebase's marker (the rebase never started) left
// .state/serve.rebasing.staged for good: the start read the marker
// alone. It now removes the record, and leaves the git index as it is
// (the person may have staged anew since). Found by TestServeSoakKill9.
func TestStartRemovesTheStagedRecordOfARebaseNeverStarted(t *testing.T) {
	k := newRepo(t, 0)
	if err := os.WriteFile(filepath.Join(k.Root, "mine.txt"), []byte("staged\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, k, "add", "mine.txt")
	entries, err := gitx.StagedEntries(ctx, k.Root)
	if err != nil {
		t.Fatal(err)
	}
	record := filepath.Join(k.StateDir(), rebaseStaged)
	if err := os.WriteFile(record, entries, 0o644); err != nil {
		t.Fatal(err)
	}
	// The person stages anew before the restart.
	if err := os.WriteFile(filepath.Join(k.Root, "mine.txt"), []byte("staged anew\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, k, "add", "mine.txt")

	start(t, k, nil)
	if _, err := os.Stat(record); err == nil {
		t.Error(".state/serve.rebasing.staged is left")
	}
	if got := git(t, k, "show", ":mine.txt"); got != "staged anew" {
		t.Errorf("git's index holds %q for mine.txt, want what the person staged last", got)
	}
}
