package gitx

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// RebaseAside replays the commits of branch (refs/heads/ left out) that
// upstream lacks onto upstream in aside, a linked work tree of the
// repository of dir kept for that alone, and returns the commit the
// branch was at (from) and the commit it should move to (to): from
// itself when upstream holds nothing the branch lacks, upstream's tip
// when the branch holds nothing upstream lacks. The branch is not moved
// and dir's work tree, git index and HEAD are not touched: a person
// working in it meets no stash, no detached HEAD and no file reset for
// the length of a rebase (Repo.MoveTo then moves the branch).
//
// strategy is as Rebase's. The work tree aside is created when missing
// and reused when it is there (only the files the commits change are
// checked out again), and set right first whatever a killed rebase left
// in it (a rebase halfway, git's lock files): it is kk's alone, for the
// caller holds the lock that makes it the repository's only worker. A
// failed rebase is aborted there and returned as an error.
func RebaseAside(ctx context.Context, dir, aside, branch, upstream, strategy string) (from, to string, err error) {
	out, err := Read(ctx, dir, "rev-parse", "refs/heads/"+branch+"^{commit}", upstream+"^{commit}")
	tips := strings.Fields(string(out))
	if err != nil || len(tips) != 2 {
		return "", "", fmt.Errorf("reading the tips of %s and %s: %v", branch, upstream, err)
	}
	from, onto := tips[0], tips[1]
	if isAncestor(ctx, dir, onto, from) {
		return from, from, nil
	}
	if isAncestor(ctx, dir, from, onto) {
		return from, onto, nil
	}
	if err := readyAside(ctx, dir, aside, from); err != nil {
		return from, "", fmt.Errorf("preparing kk's work tree for the rebase (%s): %w", aside, err)
	}
	args := []string{"--literal-pathspecs", "-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null", "rebase", "-q"}
	if strategy != "" {
		args = append(args, "--strategy-option="+strategy)
	}
	if _, err := runInput(ctx, aside, nil, nil, true, append(args, onto)); err != nil {
		if _, aerr := runInput(context.WithoutCancel(ctx), aside, nil, nil, true, []string{"rebase", "--abort"}); aerr != nil {
			err = fmt.Errorf("%w (its abort, in kk's work tree %s, failed too: %v; the next tick sets it right)", err, aside, aerr)
		}
		return from, "", err
	}
	out, err = Read(ctx, aside, "rev-parse", "HEAD")
	if err != nil {
		return from, "", fmt.Errorf("reading the rebase's result: %w", err)
	}
	return from, strings.TrimSpace(string(out)), nil
}

// isAncestor reports whether commit a is an ancestor of commit b (or b).
func isAncestor(ctx context.Context, dir, a, b string) bool {
	_, err := Read(ctx, dir, "merge-base", "--is-ancestor", a, b)
	return err == nil
}

// readyAside makes aside a linked work tree of dir's repository with a
// detached HEAD at commit and nothing else in it: reused when it is one,
// else (missing, damaged, or what a killed rebase left it in cannot be
// undone) removed and added again.
func readyAside(ctx context.Context, dir, aside, commit string) error {
	quiet := []string{"-c", "core.hooksPath=/dev/null"}
	if reuseAside(ctx, aside, commit) == nil {
		return nil
	}
	if err := os.RemoveAll(aside); err != nil {
		return err
	}
	if _, err := runInput(ctx, dir, nil, nil, true, []string{"worktree", "prune"}); err != nil {
		return err
	}
	_, err := runInput(ctx, dir, nil, nil, true, append(quiet, "worktree", "add", "-q", "-f", "--detach", aside, commit))
	return err
}

// reuseAside sets aside, when it is a linked work tree, to commit: what a
// killed rebase left is removed (the rebase's state, git's index.lock and
// HEAD.lock of that work tree), then a forced checkout and a clean.
func reuseAside(ctx context.Context, aside, commit string) error {
	if _, err := os.Stat(filepath.Join(aside, ".git")); err != nil {
		return err
	}
	out, err := Read(ctx, aside, "rev-parse", "--absolute-git-dir")
	if err != nil {
		return err
	}
	gitDir := strings.TrimSpace(string(out))
	if filepath.Clean(gitDir) == filepath.Clean(filepath.Join(aside, ".git")) {
		return errors.New("not a linked work tree")
	}
	for _, p := range []string{"rebase-merge", "rebase-apply", "index.lock", "HEAD.lock", "ORIG_HEAD.lock"} {
		if err := os.RemoveAll(filepath.Join(gitDir, p)); err != nil {
			return err
		}
	}
	for _, args := range [][]string{
		{"-c", "core.hooksPath=/dev/null", "checkout", "-q", "-f", "--detach", commit},
		{"clean", "-q", "-f", "-f", "-d", "-x"},
	} {
		if _, err := runInput(ctx, aside, nil, nil, true, args); err != nil {
			return err
		}
	}
	return nil
}

// MoveTo moves the served branch, checked out in the work tree, from
// commit from to commit to, and brings the work tree and git's index
// with it, in git's lock order as Commit does: index.lock taken (waited
// for as long as wait lasts), HEAD checked to be the branch at from (a
// commit of the person's made since is never moved away: git commit
// takes index.lock first, and one that read HEAD before fails its own
// compare and swap), git read-tree -m -u from to on a copy of git's
// index, the branch moved (compare and swap), the copy put in place.
//
// git read-tree -m -u is the two-way checkout a switch of branches
// makes: it changes only the files that differ between the two commits,
// carries every change of the work tree and of git's index to any other
// file over (staged changes stay staged, as git reset --keep would not
// keep them), and refuses, changing nothing, when a file it must change
// holds a change not committed or an untracked file is in its way.
func (r *Repo) MoveTo(ctx context.Context, from, to string, wait context.Context, onWait func(string)) error {
	if from == to {
		return nil
	}
	if wait == nil {
		wait = context.Background()
	}
	if onWait == nil {
		onWait = func(string) {}
	}
	defer onWait("")
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tip = ""
	unlock, err := r.lockIndex(wait, onWait)
	if err != nil {
		return err
	}
	defer unlock()
	if ok, other := r.OnBranch(ctx); !ok {
		return fmt.Errorf("%w: %s is checked out, kk serves %s", ErrNotPinned, other, r.Branch)
	}
	head, err := r.head()
	if err != nil {
		return err
	}
	if head != from {
		return fmt.Errorf("%s moved meanwhile (from %s to %s, a commit of another git command); it is shared at the next tick", r.Branch, short(from), short(head))
	}
	tmp := r.tmpIndex()
	defer func() { _ = os.Remove(tmp) }()
	if err := os.Remove(tmp + ".lock"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := copyFile(r.indexPath(), tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("copying git's index: %w", err)
	}
	readTree := func(a, b string) error {
		_, err := r.git(ctx, nil, []string{"GIT_INDEX_FILE=" + tmp}, "-c", "core.hooksPath=/dev/null", "read-tree", "-m", "-u", a, b)
		return err
	}
	if err := readTree(from, to); err != nil {
		return fmt.Errorf("bringing the work tree to %s (git read-tree -m -u; nothing was changed): %w", short(to), err)
	}
	if err := r.moveBranch(from, to, wait, onWait); err != nil {
		// Missed though index.lock is held: a writer that moves the
		// branch without it. The work tree goes back.
		if berr := readTree(to, from); berr != nil {
			return fmt.Errorf("moving %s to %s: %w (and bringing the work tree back to %s failed: %v; run git status)", r.Branch, short(to), err, short(from), berr)
		}
		return fmt.Errorf("moving %s to %s: %w", r.Branch, short(to), err)
	}
	r.tip, r.born = to, true
	if l := r.placeIndex(tmp, to, from); l.IndexErr != nil {
		return l.IndexErr
	}
	return nil
}

// short is a commit name's first 12 characters.
func short(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}
