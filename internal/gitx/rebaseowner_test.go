package gitx

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Rebase aborts only its own rebase. A person's rebase in progress (here
// stopped at a conflict; in the soak, started between kk serve's check
// for one and its own git rebase) makes git refuse kk's ("there is
// already a rebase-merge directory"), and Rebase then ran git rebase
// --abort on the person's: their rebase was thrown away, or, caught
// while git was still setting it up, left in a state neither git rebase
// --continue ("No rebase in progress?") nor --abort could end, with
// every kk serve job held behind it. Found by TestServeSoakKill9.
func TestRebaseLeavesAPersonsRebaseAlone(t *testing.T) {
	ctx := context.Background()
	dir := gitRepo(t)
	gitOut(t, dir, "checkout", "-q", "-b", "main")
	commit(t, dir, map[string]string{"f.txt": "base\n"}, "base")
	gitOut(t, dir, "branch", "upstream")
	gitOut(t, dir, "branch", "other")
	commit(t, dir, map[string]string{"f.txt": "main\n"}, "main")
	gitOut(t, dir, "checkout", "-q", "other")
	commit(t, dir, map[string]string{"f.txt": "other\n"}, "other")
	gitOut(t, dir, "checkout", "-q", "upstream")
	commit(t, dir, map[string]string{"f.txt": "upstream\n"}, "upstream")
	gitOut(t, dir, "checkout", "-q", "main")
	// The person's rebase of main onto other stops at a conflict.
	if _, err := Run(ctx, dir, "rebase", "-q", "other"); err == nil {
		t.Fatal("the person's rebase did not stop")
	}
	gitDir := filepath.Join(dir, ".git")
	other := gitOut(t, dir, "rev-parse", "other")
	if got := RebaseOnto(gitDir); got != other {
		t.Fatalf("RebaseOnto = %q, want the person's onto %s", got, other)
	}

	err := Rebase(ctx, dir, "upstream", "theirs")
	if err == nil {
		t.Fatal("kk's rebase beside the person's gave no error")
	}
	if !strings.Contains(err.Error(), "kk did not start") {
		t.Errorf("the error does not say the rebase in progress is not kk's: %v", err)
	}
	if got := RebaseOnto(gitDir); got != other {
		t.Fatalf("the person's rebase is no longer in progress (onto %q)", got)
	}
	// The person ends it as they mean to.
	write(t, dir, "f.txt", "resolved\n")
	gitOut(t, dir, "add", "f.txt")
	if out, err := RunWith(ctx, dir, []string{"GIT_EDITOR=true"}, nil, "rebase", "--continue"); err != nil {
		t.Fatalf("git rebase --continue: %v %s", err, out)
	}
	if got := gitOut(t, dir, "log", "--format=%s"); got != "main\nother\nbase" {
		t.Errorf("history after the person's rebase:\n%s", got)
	}

	// kk's own rebase that fails is aborted as before.
	if err := Rebase(ctx, dir, "upstream", ""); err == nil {
		t.Fatal("a conflicting rebase gave no error")
	}
	if RebaseInProgress(gitDir) {
		t.Error("kk's own failed rebase was left in progress")
	}
}

// git rebase --autostash stashes the work tree's changes into its state
// folder, resets the work tree, and only then checks that the work tree
// is clean: a write in that instant (in kk serve's soak, a person's git
// stash pop beside the --push-every tick; here, a smudge filter that
// writes another file as the reset checks a.txt out) fails the check,
// and git exits with the person's changes in .git/rebase-merge/autostash
// alone: gone from the work tree, in no stash list, and the folder left
// a rebase neither git rebase --continue nor --abort can end ("could not
// read head-name"), holding every kk serve job. Rebase now gives the
// changes back and removes the folder.
func TestRebaseGivenUpBeforeItBeganGivesTheChangesBack(t *testing.T) {
	ctx := context.Background()
	dir := gitRepo(t)
	gitOut(t, dir, "checkout", "-q", "-b", "main")
	commit(t, dir, map[string]string{"a.txt": "a\n", "b.txt": "b\n"}, "base")
	gitOut(t, dir, "branch", "upstream")
	commit(t, dir, map[string]string{"c.txt": "c\n"}, "local")
	gitOut(t, dir, "checkout", "-q", "upstream")
	commit(t, dir, map[string]string{"u.txt": "u\n"}, "upstream")
	gitOut(t, dir, "checkout", "-q", "main")
	poke := filepath.Join(t.TempDir(), "poke")
	write(t, filepath.Dir(poke), "poke", "#!/bin/sh\necho 'written while git reset the work tree' >> "+filepath.Join(dir, "b.txt")+"\ncat\n")
	if err := os.Chmod(poke, 0o755); err != nil {
		t.Fatal(err)
	}
	gitOut(t, dir, "config", "filter.poke.smudge", poke)
	write(t, dir, ".git/info/attributes", "a.txt filter=poke\n")
	write(t, dir, "a.txt", "a\nthe person's edit\n")
	head := gitOut(t, dir, "rev-parse", "HEAD")

	if err := Rebase(ctx, dir, "upstream", "theirs"); err == nil {
		t.Fatal("the rebase did not fail")
	}
	if RebaseInProgress(filepath.Join(dir, ".git")) {
		t.Fatal("a rebase is left in progress")
	}
	if data, err := os.ReadFile(filepath.Join(dir, "a.txt")); err != nil || string(data) != "a\nthe person's edit\n" {
		t.Errorf("a.txt after the rebase (%v): %q, want the person's edit", err, data)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "b.txt")); err != nil || !strings.HasPrefix(string(data), "b\nwritten while git reset the work tree\n") {
		t.Errorf("b.txt after the rebase (%v): %q", err, data)
	}
	if got := gitOut(t, dir, "rev-parse", "HEAD"); got != head {
		t.Errorf("HEAD moved: %s, was %s", got, head)
	}
	if got := gitOut(t, dir, "stash", "list"); got != "" {
		t.Errorf("a stash is left: %s", got)
	}
}
