package gitx

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kk-project/kk/internal/atomicfile"
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
// strategy is as Rebase's. keep lists the folders (relative to the top of
// dir's work tree, with forward slashes) the work tree aside checks out:
// it is sparse (core.sparseCheckout, set on each of its commands, its
// patterns in its own git folder, the repository's configuration left
// alone), so that a knowledge base in a large repository does not cost a
// second checkout of all of it; the rest of the tree is replayed in git's
// index alone. nil checks out everything. The work tree aside is created when missing
// and reused when it is there (only the files the commits change are
// checked out again), and set right first whatever a killed rebase left
// in it (a rebase halfway, git's lock files): it is kk's alone, for the
// caller holds the lock that makes it the repository's only worker. A
// failed rebase is aborted there and returned as an error.
func RebaseAside(ctx context.Context, dir, aside, branch, upstream, strategy string, keep []string) (from, to string, err error) {
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
	sparse := sparseFlags(keep)
	if err := readyAside(ctx, dir, aside, from, keep); err != nil {
		return from, "", fmt.Errorf("preparing kk's work tree for the rebase (%s): %w", aside, err)
	}
	// maintenance.auto=false: as Fetch's, no git maintenance run --auto
	// at the rebase's end (kk serve runs git gc --auto itself).
	args := append(slices.Clip(sparse), "--literal-pathspecs", "-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null", "-c", "maintenance.auto=false", "rebase", "-q")
	if strategy != "" {
		args = append(args, "--strategy-option="+strategy)
	}
	if _, err := runInput(ctx, aside, nil, nil, true, append(args, onto)); err != nil {
		// Bounded as AbortRebase's: its checkout runs the person's
		// filters, which may hang too.
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abortWait)
		_, aerr := runInput(actx, aside, nil, nil, true, append(slices.Clip(sparse), "rebase", "--abort"))
		cancel()
		if aerr != nil {
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

// sparseFlags are the options of every git command run in kk's work
// tree: sparse when keep names folders.
func sparseFlags(keep []string) []string {
	if len(keep) == 0 {
		return nil
	}
	return []string{"-c", "core.sparseCheckout=true", "-c", "core.sparseCheckoutCone=false"}
}

// readyAside makes aside a linked work tree of dir's repository with a
// detached HEAD at commit and nothing else in it, sparse to keep: reused
// when it is one, else (missing, damaged, or what a killed rebase left
// it in cannot be undone) removed and added again.
func readyAside(ctx context.Context, dir, aside, commit string, keep []string) error {
	err := reuseAside(ctx, aside, commit, keep)
	if err == nil || errors.Is(err, errLockHeld) {
		return err
	}
	if err := os.RemoveAll(aside); err != nil {
		return err
	}
	if _, err := runInput(ctx, dir, nil, nil, true, []string{"worktree", "prune"}); err != nil {
		return err
	}
	if _, err := runInput(ctx, dir, nil, nil, true, []string{"-c", "core.hooksPath=/dev/null", "worktree", "add", "-q", "-f", "--detach", "--no-checkout", aside, commit}); err != nil {
		return err
	}
	return reuseAside(ctx, aside, commit, keep)
}

// reuseAside sets aside, when it is a linked work tree, to commit: what a
// killed rebase left is removed (the rebase's state, the lock files of
// that work tree's git folder), its sparse patterns written, then a
// forced checkout and a clean.
func reuseAside(ctx context.Context, aside, commit string, keep []string) error {
	if _, err := os.Stat(filepath.Join(aside, ".git")); err != nil {
		return err
	}
	// Its git folder and the repository's common one, in one git
	// process (git before 2.31 gives the common one relative to aside).
	out, err := Read(ctx, aside, "rev-parse", "--absolute-git-dir", "--git-common-dir")
	if err != nil {
		return err
	}
	gitDir, common, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	if filepath.Clean(gitDir) == filepath.Clean(filepath.Join(aside, ".git")) {
		return errors.New("not a linked work tree")
	}
	if common = strings.TrimSpace(common); common != "" && !filepath.IsAbs(common) {
		common = filepath.Join(aside, common)
	}
	if err := removeKilledRebasesLock(aside, gitDir, common, time.Now()); err != nil {
		return err
	}
	if err := removeLocks(gitDir); err != nil {
		return err
	}
	for _, p := range []string{"rebase-merge", "rebase-apply"} {
		if err := os.RemoveAll(filepath.Join(gitDir, p)); err != nil {
			return err
		}
	}
	patterns := filepath.Join(gitDir, "info", "sparse-checkout")
	if len(keep) > 0 {
		var b strings.Builder
		b.WriteString("/.gitattributes\n")
		for _, k := range keep {
			b.WriteString("/" + strings.Trim(k, "/") + "/\n")
		}
		if err := os.MkdirAll(filepath.Dir(patterns), 0o755); err != nil {
			return err
		}
		if err := atomicfile.Write(patterns, []byte(b.String()), 0o644); err != nil {
			return err
		}
	} else if err := os.Remove(patterns); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	sparse := sparseFlags(keep)
	for _, args := range [][]string{
		append(slices.Clip(sparse), "-c", "core.hooksPath=/dev/null", "checkout", "-q", "-f", "--detach", commit),
		append(slices.Clip(sparse), "clean", "-q", "-f", "-f", "-d", "-x"),
	} {
		if _, err := runInput(ctx, aside, nil, nil, true, args); err != nil {
			return err
		}
	}
	return nil
}

// staleLockAge is how old git's packed-refs.lock must be, beside a rebase
// of kk's killed in its work tree, to be that rebase's: git holds it for
// the moment it deletes a ref, and a git waiting for it gives up after
// core.packedRefsTimeout, a second by default.
const staleLockAge = time.Second

// errLockHeld marks a replay that waits for a lock of git's: kk's work
// tree is kept as it is (not made again) so that the next one asks again.
var errLockHeld = errors.New("a lock of git's is held")

// removeKilledRebasesLock removes the repository's packed-refs.lock when
// a rebase of kk's was killed in aside (whose git folder is gitDir;
// common, the repository's common git folder, holds the lock) and
// the lock is older than staleLockAge at now. git rebase takes that lock
// of the whole repository whenever it deletes one of its own refs
// (REBASE_HEAD, CHERRY_PICK_HEAD); git removes its locks when a signal
// ends it, but a SIGTERM that lands while it creates one (the kill of kk
// serve, whose git commands get SIGTERM when it dies) leaves it, and
// every later deletion of a ref in the repository (a person's git
// branch -d, git's own rebase) then fails on it. A younger lock is an
// error, the killed rebase's state left, so that the next replay asks
// again.
func removeKilledRebasesLock(aside, gitDir, common string, now time.Time) error {
	if _, err := os.Stat(filepath.Join(gitDir, "rebase-merge")); err != nil || common == "" {
		return nil
	}
	lock := filepath.Join(common, "packed-refs.lock")
	st, err := os.Stat(lock)
	if err != nil {
		return nil
	}
	if age := now.Sub(st.ModTime()); age < staleLockAge {
		// Too young to tell from a git command that holds it now: the
		// killed rebase's state stays, so that the next replay asks
		// again.
		return fmt.Errorf("%w: %s (for %v; a git command deleting a ref, or the rebase of kk's killed in %s): the replay waits for it", errLockHeld, lock, age.Round(time.Millisecond), aside)
	}
	if err := os.Remove(lock); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing the packed-refs.lock a killed rebase of kk's left: %w", err)
	}
	return nil
}

// TidyAside removes the lock files a killed kk serve's git commands left
// in the git folder of aside, kk's own work tree (index.lock, HEAD.lock,
// CHERRY_PICK_HEAD.lock, rebase-merge/done.lock: git removes its locks
// when a signal ends it, but not one the signal lands in the creation
// of): called at kk serve's start, when no git command of kk's can run
// there. Nothing there, nothing to do. The state of a killed rebase is
// left for the next replay (RebaseAside), which needs it.
func TidyAside(ctx context.Context, aside string) error {
	if _, err := os.Stat(filepath.Join(aside, ".git")); err != nil {
		return nil
	}
	out, err := Read(ctx, aside, "rev-parse", "--absolute-git-dir")
	if err != nil {
		return nil // not a work tree git can read: the next replay makes it again
	}
	return removeLocks(strings.TrimSpace(string(out)))
}

// removeLocks removes every lock file under gitDir, the git folder of
// kk's own work tree.
func removeLocks(gitDir string) error {
	return filepath.WalkDir(gitDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".lock") {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		return nil
	})
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
	tmp, err := r.indexCopy()
	defer func() { _ = os.Remove(tmp) }()
	if err != nil {
		return err
	}
	readTree := func(a, b string) error {
		_, err := r.git(ctx, nil, []string{"GIT_INDEX_FILE=" + tmp}, "-c", "core.hooksPath=/dev/null", "read-tree", "-m", "-u", a, b)
		return err
	}
	// The two commits, recorded before the work tree changes: a kill
	// between its change and the branch's leaves the work tree at to and
	// the branch at from, which FinishMove sets right at the next start.
	if err := atomicfile.Write(r.moveRecord(), []byte(from+" "+to+"\n"), 0o644); err != nil {
		return fmt.Errorf("recording the move: %w", err)
	}
	if err := readTree(from, to); err != nil {
		_ = os.Remove(r.moveRecord())
		return fmt.Errorf("bringing the work tree to %s (git read-tree -m -u; nothing was changed): %w", short(to), err)
	}
	if err := r.inject("tree"); err != nil {
		return err // the record stays, for FinishMove
	}
	if err := r.moveBranch(from, to, wait, onWait); err != nil {
		// Missed though index.lock is held: a writer that moves the
		// branch without it. The work tree goes back.
		if berr := readTree(to, from); berr != nil {
			return fmt.Errorf("moving %s to %s: %w (and bringing the work tree back to %s failed: %v; run git status)", r.Branch, short(to), err, short(from), berr)
		}
		_ = os.Remove(r.moveRecord())
		return fmt.Errorf("moving %s to %s: %w", r.Branch, short(to), err)
	}
	r.tip, r.born = to, true
	l := r.placeIndex(tmp, to, from)
	if l.IndexErr != nil {
		return l.IndexErr // the record stays, for FinishMove
	}
	_ = os.Remove(r.moveRecord())
	return nil
}

// indexCopy copies git's index to the session's own copy (r.mu and
// index.lock held) and returns the copy's path. A lock on the copy is one
// a git command of this session left, killed (SIGKILL runs no clean-up),
// and git would refuse every later commit of the session on it: it is
// removed first.
func (r *Repo) indexCopy() (string, error) {
	tmp := r.tmpIndex()
	if err := os.Remove(tmp + ".lock"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return tmp, fmt.Errorf("removing the lock a killed git command left on git's index copy: %w", err)
	}
	if err := copyFile(r.indexPath(), tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return tmp, fmt.Errorf("copying git's index: %w", err)
	}
	return tmp, nil
}

// moveRecord is the file, in the work tree's git folder, that holds the
// two commits of a MoveTo while it runs.
func (r *Repo) moveRecord() string { return filepath.Join(r.GitDir, "kk-move") }

// FinishMove sets right what a MoveTo killed halfway left, and says what
// it did ("" when there was nothing). The caller holds the lock that
// makes it the work tree's only worker, as for RemoveStaleLocks (run
// first, which leaves the killed worker's index.lock for this to take
// over). With the branch moved (killed before git's index was put in
// place), git's index is brought to the new commit for the files the
// move changed. With the branch not moved, each file the move changed
// whose bytes in the work tree are the new commit's (git read-tree wrote
// them) is put back as the old commit holds it, and a file it added is
// removed: the work tree is as before the move, and the next tick moves
// again. A file that holds anything else is a person's and is left
// alone.
//
// A person's git may have committed between the kill and this (a lock
// removed by hand, or a kk serve before this one that removed it): git
// commit reads the index before it locks it. A branch past the new
// commit (a commit on top of the moved branch, made from git's index as
// the kill left it) is set right as a moved one, and one past the old commit as one not moved, each only
// for the files the person's commits left as that end holds them and
// whose entries in git's index are as the kill left them. (Before, such
// a branch was left as it was: a colleague's file the move brought in
// stayed out of git's index, deleted and untracked in git status, or,
// the branch not moved, untracked in the work tree, in the way of every
// later move.) A branch at a commit that holds neither end (a person's
// reset) is left as it is.
func (r *Repo) FinishMove(ctx context.Context) (string, error) {
	return r.repairRecorded(ctx, r.moveRecord(), "move", func(from, to, head string, env []string) (string, error) {
		switch {
		case head == to || isAncestor(ctx, r.Top, to, head):
			// The entries of the files the move changed, as to holds
			// them (git reset of those paths: the work tree is left as
			// it is, at to already).
			if _, err := r.bringInStep(ctx, env, from, to, head); err != nil {
				return "", fmt.Errorf("bringing git's index to %s, where a killed kk serve moved %s: %w", short(to), r.Branch, err)
			}
			return "git's index brought to " + short(to) + ", where a killed kk serve had moved " + r.Branch + since(r.Branch, head, to), nil
		case head == from || isAncestor(ctx, r.Top, from, head):
			back, gone, err := r.movedFiles(ctx, from, to, head)
			if err != nil {
				return "", err
			}
			if len(back) > 0 {
				args := append([]string{"--literal-pathspecs", "-c", "core.hooksPath=/dev/null", "checkout", "-q", from, "--"}, back...)
				if _, err := r.git(ctx, nil, env, args...); err != nil {
					return "", fmt.Errorf("putting back the files a killed kk serve's move changed: %w", err)
				}
			}
			for _, p := range gone {
				if err := os.Remove(filepath.Join(r.Top, filepath.FromSlash(p))); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return "", err
				}
			}
			return fmt.Sprintf("%d files a killed kk serve's move of %s had written put back as %s holds them", len(back)+len(gone), r.Branch, short(from)) + since(r.Branch, head, from), nil
		}
		return fmt.Sprintf("%s is at %s, neither end of the move a killed kk serve left (%s to %s): left as it is", r.Branch, short(head), short(from), short(to)), nil
	})
}

// since says, for a repair's report, that branch is at head, past end.
func since(branch, head, end string) string {
	if head == end {
		return ""
	}
	return fmt.Sprintf(" (%s is at %s since, a commit made on it)", branch, short(head))
}

// repairRecorded sets right what a worker killed between the two commits
// of the record at path (a move's, a commit's: what names them) left:
// with git's index taken over (takeOverLock), repair gets the two
// commits, the branch's head, and env naming a copy of git's index
// (GIT_INDEX_FILE), which is put in place when repair succeeds. The
// record is removed then, and repair's report returned; "" when there is
// no record.
func (r *Repo) repairRecorded(ctx context.Context, path, what string, repair func(a, b, head string, env []string) (string, error)) (string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tip = ""
	unlock, err := r.takeOverLock(ctx)
	if err != nil {
		return "", err
	}
	defer unlock()
	a, b, ok := strings.Cut(strings.TrimSpace(string(data)), " ")
	if !ok {
		// Dropped, and the killed worker's lock, which the start kept
		// for this, with it.
		_ = os.Remove(path)
		return "", fmt.Errorf("%s: not a record of a %s: %q", path, what, data)
	}
	head, err := r.head()
	if err != nil {
		return "", err
	}
	tmp, err := r.indexCopy()
	defer func() { _ = os.Remove(tmp) }()
	if err != nil {
		return "", err
	}
	did, err := repair(a, b, head, []string{"GIT_INDEX_FILE=" + tmp})
	if err != nil {
		return "", err
	}
	if l := r.placeIndex(tmp, head, head); l.IndexErr != nil {
		return "", l.IndexErr
	}
	_ = os.Remove(path)
	return did, nil
}

// bringInStep resets, in git's index named by env, the entries of the
// files commits a and b differ in that staleEntries finds still as a
// holds them while head holds them as b does, and returns how many.
func (r *Repo) bringInStep(ctx context.Context, env []string, a, b, head string) (int, error) {
	paths, err := r.staleEntries(ctx, env, a, b, head)
	if err != nil || len(paths) == 0 {
		return 0, err
	}
	args := append([]string{"--literal-pathspecs", "-c", "core.hooksPath=/dev/null", "reset", "-q", head, "--"}, paths...)
	_, err = r.git(ctx, nil, env, args...)
	return len(paths), err
}

// moveChange is a file a move from one commit to another changes, with
// its blob at each end (the zero id where that end has none).
type moveChange struct{ path, fromBlob, toBlob string }

// moveChanges lists the files commits from and to differ in.
func (r *Repo) moveChanges(ctx context.Context, from, to string) ([]moveChange, error) {
	out, err := r.git(ctx, nil, nil, "diff-tree", "-r", "-z", "--no-renames", from, to)
	if err != nil {
		return nil, err
	}
	var changes []moveChange
	fields := strings.Split(string(out), "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		meta := strings.Fields(strings.TrimPrefix(fields[i], ":"))
		if len(meta) != 5 {
			continue
		}
		changes = append(changes, moveChange{path: fields[i+1], fromBlob: meta[2], toBlob: meta[3]})
	}
	return changes, nil
}

// blobsAt returns the blob of each of paths that commit holds (those it
// does not hold are missing), or, with commit "", of each that git's
// index (GIT_INDEX_FILE in env) holds at stage 0.
func (r *Repo) blobsAt(ctx context.Context, env []string, commit string, paths []string) (map[string]string, error) {
	blobs := map[string]string{}
	if len(paths) == 0 {
		return blobs, nil
	}
	args := []string{"--literal-pathspecs", "ls-tree", "-r", "-z", commit, "--"}
	if commit == "" {
		args = []string{"--literal-pathspecs", "ls-files", "-s", "-z", "--"}
	}
	out, err := r.git(ctx, nil, env, append(args, paths...)...)
	if err != nil {
		return nil, err
	}
	for _, rec := range strings.Split(string(out), "\x00") {
		meta, path, ok := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		switch {
		case !ok || len(f) != 3:
		case commit != "": // mode type blob
			blobs[path] = f[2]
		case f[2] == "0": // mode blob stage
			blobs[path] = f[1]
		}
	}
	return blobs, nil
}

// staleEntries lists the files the move from from to to changed whose
// entries in git's index (GIT_INDEX_FILE in env) are still as from holds
// them (none, where from has none), as a move killed before it put git's
// index in place leaves them, and that head, to or a commit made on it,
// holds as to does.
func (r *Repo) staleEntries(ctx context.Context, env []string, from, to, head string) ([]string, error) {
	changes, err := r.moveChanges(ctx, from, to)
	if err != nil {
		return nil, err
	}
	paths := make([]string, len(changes))
	for i, c := range changes {
		paths[i] = c.path
	}
	index, err := r.blobsAt(ctx, env, "", paths)
	if err != nil {
		return nil, err
	}
	at := index // head's blobs: to's, when head is to
	if head != to {
		if at, err = r.blobsAt(ctx, nil, head, paths); err != nil {
			return nil, err
		}
	}
	zero := r.objs.algo.zeroID()
	blob := func(m map[string]string, p string) string {
		if b, ok := m[p]; ok {
			return b
		}
		return zero
	}
	var stale []string
	for _, c := range changes {
		if blob(index, c.path) == c.fromBlob && (head == to || blob(at, c.path) == c.toBlob) {
			stale = append(stale, c.path)
		}
	}
	return stale, nil
}

// movedFiles lists the files between commits from and to whose bytes in
// the work tree are to's (or that are missing where to has none) and
// that head, from or a commit made on it, holds as from does: back, to
// check out as from holds them, and gone, files only to has.
func (r *Repo) movedFiles(ctx context.Context, from, to, head string) (back, gone []string, err error) {
	changes, err := r.moveChanges(ctx, from, to)
	if err != nil {
		return nil, nil, err
	}
	if head != from {
		paths := make([]string, len(changes))
		for i, c := range changes {
			paths[i] = c.path
		}
		at, err := r.blobsAt(ctx, nil, head, paths)
		if err != nil {
			return nil, nil, err
		}
		zero := r.objs.algo.zeroID()
		changes = slices.DeleteFunc(changes, func(c moveChange) bool {
			b, ok := at[c.path]
			if !ok {
				b = zero
			}
			return b != c.fromBlob // the person's commit changed it
		})
	}
	zero := r.objs.algo.zeroID()
	var present []moveChange
	for _, c := range changes {
		fi, err := os.Lstat(filepath.Join(r.Top, filepath.FromSlash(c.path)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if c.toBlob == zero {
				back = append(back, c.path) // removed by the move
			}
		case err != nil:
			return nil, nil, err
		case fi.Mode().IsRegular() || fi.Mode()&fs.ModeSymlink != 0:
			present = append(present, c)
		}
	}
	if len(present) == 0 {
		return back, gone, nil
	}
	var paths strings.Builder
	for _, c := range present {
		paths.WriteString(c.path + "\n")
	}
	hashes, err := r.git(ctx, []byte(paths.String()), nil, "hash-object", "--stdin-paths")
	if err != nil {
		return nil, nil, err
	}
	got := strings.Fields(string(hashes))
	if len(got) != len(present) {
		return nil, nil, fmt.Errorf("git hash-object: %d names for %d files", len(got), len(present))
	}
	for i, c := range present {
		if got[i] != c.toBlob {
			continue // not what the move wrote: the person's
		}
		if c.fromBlob == zero {
			gone = append(gone, c.path)
		} else {
			back = append(back, c.path)
		}
	}
	return back, gone, nil
}

// short is a commit name's first 12 characters.
func short(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}
