package gitx

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/kk-project/kk/internal/atomicfile"
)

// Repo is the repository of the work tree a long-running worker (kk
// serve) commits to, opened once: its folders, its object format, the
// branch it serves, and the git processes it keeps running.
//
// A commit is made the way git commit makes one, in git's lock order:
// the objects are written (by this process: see objects.go), index.lock
// is taken, the new index is prepared by git update-index (in a copy of
// the index, index.lock held), the branch is moved by git update-ref
// (compare and swap, one git update-ref --stdin kept running, with
// start, prepare and commit), and only then is the new index put in
// place and index.lock let go. A person's git commit, which takes
// index.lock first too, can therefore never commit a tree without the
// job's files, and a commit landing between two steps is never lost: a
// compare and swap that misses rebuilds the commit on the new branch tip.
type Repo struct {
	// Top is the work tree's root.
	Top string
	// GitDir is this work tree's git folder (HEAD, the index); CommonDir
	// holds what all work trees share (objects, refs, packed-refs).
	GitDir    string
	CommonDir string
	// Branch is the branch the worker commits to: the one checked out
	// when the repository was opened (refs/heads/ left out).
	Branch string

	objs     objectStore
	autocrlf bool
	session  string // marks the lock files this Repo creates

	mu    sync.Mutex
	cat   *catFile
	attrs *attrChecker
	refs  *refUpdater
	// born says the branch had a commit when the Repo was opened, or has
	// had one since: a branch that then does not resolve was deleted
	// under the Repo (gone), and is waited for, never committed to
	// afresh as if it were new.
	born bool
	gone atomic.Bool
	// tip is the commit this Repo last moved the branch to: the next
	// commit is built on it without asking git, the compare and swap
	// telling when someone moved the branch since ("" asks git).
	tip string
	// fault, when a test sets it, is called at named points of a commit
	// ("index", "move", "moved"); an error it returns fails the step
	// there. It is per Repo, so tests that set it can run in parallel.
	fault func(point string) error
}

// ErrInterrupted means a commit gave up waiting (for a lock another git
// process holds) because its wait context ended: nothing was committed.
var ErrInterrupted = errors.New("gitx: stopped while waiting")

// ErrNotPinned means the work tree no longer has the repository's pinned
// branch checked out: nothing was committed.
var ErrNotPinned = errors.New("gitx: the work tree is not on the branch served")

// LockMarker starts the content of the lock files a Repo creates
// (index.lock), so that one a killed worker left behind can be told from
// a live git command's.
const LockMarker = "kk serve lock"

// OpenRepo opens the repository of the work tree dir is in, pinned to
// the branch checked out there. A detached HEAD is refused: a worker
// commits to a branch.
func OpenRepo(ctx context.Context, dir string) (*Repo, error) {
	out, err := Read(ctx, dir, "rev-parse", "--show-toplevel", "--absolute-git-dir", "--git-common-dir", "--git-path", "objects", "--show-object-format")
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != 5 {
		return nil, fmt.Errorf("git rev-parse: unexpected %q", out)
	}
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return filepath.Clean(p)
		}
		return filepath.Join(dir, p)
	}
	r := &Repo{Top: lines[0], GitDir: lines[1], CommonDir: abs(lines[2])}
	switch lines[4] {
	case "sha1":
		r.objs = objectStore{dir: abs(lines[3]), algo: algoSHA1}
	case "sha256":
		r.objs = objectStore{dir: abs(lines[3]), algo: algoSHA256}
	default:
		return nil, fmt.Errorf("gitx: object format %q is not one kk writes", lines[4])
	}
	// Without -q, a detached HEAD is git's "is not a symbolic ref" (exit
	// 128, as any failure): any other failure is git's to tell (it
	// could not read HEAD for a moment), not a detached HEAD.
	ref, err := Read(ctx, dir, "symbolic-ref", "HEAD")
	if err != nil && !strings.Contains(err.Error(), "is not a symbolic ref") {
		return nil, fmt.Errorf("reading which branch HEAD names: %w", err)
	}
	name, ok := strings.CutPrefix(strings.TrimSpace(string(ref)), "refs/heads/")
	if err != nil || !ok || name == "" {
		name, ok = ReturnBranch(ctx, dir, r.GitDir)
		if !ok {
			return nil, errors.New("HEAD is detached: check out the branch to serve (git switch <branch>)")
		}
	}
	r.Branch = name
	_, err = Read(ctx, dir, "rev-parse", "-q", "--verify", "refs/heads/"+name+"^{commit}")
	r.born = err == nil
	if v, err := Read(ctx, dir, "config", "--get", "core.autocrlf"); err == nil {
		switch strings.ToLower(strings.TrimSpace(string(v))) {
		case "true", "input", "yes", "on", "1":
			r.autocrlf = true
		}
	}
	var tok [6]byte
	_, _ = rand.Read(tok[:])
	r.session = hex.EncodeToString(tok[:])
	return r, nil
}

// Pin makes branch, which must exist, the branch the repository serves
// in place of the one checked out when it was opened: kk serve
// restarted while a person had another branch checked out, its queue
// holding jobs accepted for branch.
func (r *Repo) Pin(ctx context.Context, branch string) error {
	if _, err := Read(ctx, r.Top, "rev-parse", "-q", "--verify", "refs/heads/"+branch+"^{commit}"); err != nil {
		return fmt.Errorf("the branch %s does not exist: %w", branch, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Branch, r.born, r.tip = branch, true, ""
	return nil
}

// ReturnBranch is the branch a person's git operation in progress in the
// work tree (git folder gitDir) detached HEAD from and checks out again
// when it ends: a rebase (or git am) stopped halfway, a bisect. ok is
// false when HEAD is detached otherwise, or the branch does not exist.
func ReturnBranch(ctx context.Context, dir, gitDir string) (branch string, ok bool) {
	for _, f := range []string{filepath.Join("rebase-merge", "head-name"), filepath.Join("rebase-apply", "head-name"), "BISECT_START"} {
		data, err := os.ReadFile(filepath.Join(gitDir, f))
		if err != nil {
			continue
		}
		// A rebase names the ref; a bisect, the branch's short name (or
		// the commit it started from, on a detached HEAD).
		name := strings.TrimPrefix(strings.TrimSpace(string(data)), "refs/heads/")
		if name == "" || name == "detached HEAD" {
			return "", false
		}
		if _, err := Read(ctx, dir, "check-ref-format", "--branch", name); err != nil {
			return "", false
		}
		if _, err := Read(ctx, dir, "rev-parse", "-q", "--verify", "refs/heads/"+name+"^{commit}"); err != nil {
			return "", false
		}
		return name, true
	}
	return "", false
}

// Close ends the git processes the Repo keeps running.
func (r *Repo) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	_ = os.Remove(r.lockMark())
	if r.cat != nil {
		r.cat.close()
		r.cat = nil
	}
	if r.attrs != nil {
		r.attrs.close()
		r.attrs = nil
	}
	if r.refs != nil {
		r.refs.close()
		r.refs = nil
	}
}

// ObjectFormat is the repository's hash: "sha1" or "sha256".
func (r *Repo) ObjectFormat() string { return r.objs.algo.name }

func (r *Repo) indexPath() string { return filepath.Join(r.GitDir, "index") }
func (r *Repo) lockPath() string  { return r.indexPath() + ".lock" }
func (r *Repo) tmpIndex() string  { return filepath.Join(r.GitDir, "index.kk-"+r.session) }
func (r *Repo) lockMark() string  { return r.tmpIndex() + ".mark" }

// RemoveStaleLocks removes what a killed worker of this work tree left in
// its git folder: an index.lock it had taken (it starts with LockMarker)
// and its copies of the index. The caller holds the lock that makes it
// the work tree's only worker (kk serve's), so that no worker whose
// locks these are is alive. A lock without the marker is a git command's
// and is left alone. It returns the files removed.
//
// The index.lock of a worker killed in a move of the branch or a commit
// (its record there) stays, for FinishMove and FinishCommit to take
// over: git's index is then never free between the kill and the repair,
// when a git commit of a person's would read it as the kill left it
// (behind the branch, or ahead of it) and commit from it.
func (r *Repo) RemoveStaleLocks() ([]string, error) {
	var removed []string
	data, err := os.ReadFile(r.lockPath())
	_, moving := os.Stat(r.moveRecord())
	_, committing := os.Stat(r.commitRecord())
	switch {
	case err == nil && r.staleLock(data) && (moving == nil || committing == nil):
	case err == nil && r.staleLock(data):
		if err := os.Remove(r.lockPath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return removed, err
		}
		removed = append(removed, r.lockPath())
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	tmps, _ := filepath.Glob(filepath.Join(r.GitDir, "index.kk-*"))
	for _, p := range tmps {
		if p == r.tmpIndex() || strings.HasPrefix(p, r.tmpIndex()+".") {
			continue
		}
		if err := os.Remove(p); err == nil {
			removed = append(removed, p)
		}
	}
	return removed, nil
}

// staleLock reports whether data, an index.lock's, is the lock of
// another session of kk's (a killed one, when the caller holds the lock
// that makes it the work tree's only worker).
func (r *Repo) staleLock(data []byte) bool {
	return bytes.HasPrefix(data, []byte(LockMarker)) && !bytes.Contains(data, []byte("session="+r.session+" "))
}

// takeOverLock takes git's index.lock for the repair of what a killed
// worker left: a lock that worker left (see staleLock; the caller holds
// the lock that makes it the work tree's only worker) is kept as it is
// and removed when the repair ends, so that git's index is never free in
// between; without one, the lock is taken as lockIndex takes it.
func (r *Repo) takeOverLock(wait context.Context) (func(), error) {
	path := r.lockPath()
	if data, err := os.ReadFile(path); err == nil && r.staleLock(data) {
		if held, err := os.Lstat(path); err == nil {
			return func() {
				// Still the killed worker's file: not one a git command
				// took after a person removed it by hand.
				if fi, err := os.Lstat(path); err == nil && os.SameFile(fi, held) {
					_ = os.Remove(path)
				}
			}, nil
		}
	}
	return r.lockIndex(wait, func(string) {})
}

// HeldLock returns the path of a git lock file that would stop a commit
// now (index.lock, or the served branch's), "" when there is none.
func (r *Repo) HeldLock() string {
	for _, p := range []string{r.lockPath(), filepath.Join(r.CommonDir, "refs", "heads", filepath.FromSlash(r.Branch)+".lock")} {
		if _, err := os.Lstat(p); err == nil {
			return p
		}
	}
	return ""
}

// BranchGone reports whether the served branch, which had commits, no
// longer exists (deleted by another git command, HEAD still naming it):
// a commit found it so, and it is not back. Cheap while no commit did.
func (r *Repo) BranchGone(ctx context.Context) bool {
	if !r.gone.Load() {
		return false
	}
	if _, err := Read(ctx, r.Top, "rev-parse", "-q", "--verify", "refs/heads/"+r.Branch+"^{commit}"); err == nil {
		r.gone.Store(false)
		return false
	}
	return true
}

// goneError marks the served branch gone and says so.
func (r *Repo) goneError() error {
	r.gone.Store(true)
	return fmt.Errorf("%w: the branch %s no longer exists (deleted by another git command); kk serve commits to it once it is there again", ErrNotPinned, r.Branch)
}

// OnBranch reports whether the work tree still has the pinned branch
// checked out, and the name of what it has.
func (r *Repo) OnBranch(ctx context.Context) (bool, string) {
	if b, ok := HeadBranch(r.Top); ok {
		return b == r.Branch, b
	}
	out, err := Read(ctx, r.Top, "symbolic-ref", "-q", "--short", "HEAD")
	if b := strings.TrimSpace(string(out)); err == nil && b != "" {
		return b == r.Branch, b
	}
	return false, "a detached HEAD"
}

func (r *Repo) catFile() (*catFile, error) {
	if r.cat == nil {
		c, err := startCatFile(r.Top)
		if err != nil {
			return nil, err
		}
		r.cat = c
	}
	return r.cat, nil
}

// get reads an object through the kept cat-file; a cat-file that died is
// started again once. One a signal kk did not send ended twice is
// ErrKilled.
func (r *Repo) get(name string) (id, typ string, body []byte, err error) {
	for try := 0; ; try++ {
		c, err := r.catFile()
		if err != nil {
			return "", "", nil, err
		}
		id, typ, body, err = c.get(name)
		if err == nil {
			return id, typ, body, nil
		}
		err = r.dropCatFile(err)
		if try > 0 {
			return id, typ, body, err
		}
	}
}

// dropCatFile ends the kept cat-file after err, a failure to talk to it,
// so that the next read starts another; err is returned, as ErrKilled
// when a signal kk did not send ended the process (kk never signals the
// cat-file it keeps: it closes its input).
func (r *Repo) dropCatFile(err error) error {
	c := r.cat
	if c == nil {
		return err
	}
	c.close()
	r.cat = nil
	if stateSignalled(c.cmd.ProcessState) {
		return fmt.Errorf("git cat-file: %w (%w)", err, ErrKilled)
	}
	return err
}

// ForgetTip makes the next commit ask git where the branch is instead of
// building on the commit this Repo made last: the caller moved the
// branch by other means (a rebase).
func (r *Repo) ForgetTip() {
	r.mu.Lock()
	r.tip = ""
	r.mu.Unlock()
}

// Head returns the commit the served branch is at, "" when it has none
// yet.
func (r *Repo) Head() (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.head()
}

func (r *Repo) head() (string, error) {
	id, typ, _, err := r.get("refs/heads/" + r.Branch)
	switch {
	case err != nil:
		return "", err
	case typ == "missing":
		return "", nil
	case typ != "commit":
		return "", fmt.Errorf("gitx: refs/heads/%s names a %s", r.Branch, typ)
	}
	return id, nil
}

// Blob returns the content of the object name names ("<commit>:<path>",
// or an id), and false when there is none.
func (r *Repo) Blob(name string) ([]byte, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, typ, body, err := r.get(name)
	if err != nil || typ == "missing" {
		return nil, false, err
	}
	if typ != "blob" {
		return nil, false, fmt.Errorf("gitx: %s is a %s", name, typ)
	}
	return body, true, nil
}

// Files lists the files of commit under folder (a repository path, ""
// for all) with their blob ids.
func (r *Repo) Files(ctx context.Context, commit, folder string) (map[string]string, error) {
	out := map[string]string{}
	if commit == "" {
		return out, nil
	}
	args := []string{"ls-tree", "-r", "-z", "--full-tree", commit}
	if folder != "" {
		args = append(args, "--", folder)
	}
	raw, err := literal(ctx, r.Top, []string{"GIT_OPTIONAL_LOCKS=0"}, args...)
	if err != nil {
		return nil, err
	}
	for _, line := range splitNUL(raw) {
		meta, path, ok := strings.Cut(line, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 3 || f[1] != "blob" {
			continue
		}
		out[path] = f[2]
	}
	return out, nil
}

// Changed lists the files that differ between commits from and to under
// folder, with their blob ids in to ("" for a file to does not have).
func (r *Repo) Changed(ctx context.Context, from, to, folder string) (map[string]string, error) {
	if from == "" {
		return r.Files(ctx, to, folder)
	}
	args := []string{"diff-tree", "-r", "-z", "--no-renames", "--no-commit-id", from, to}
	if folder != "" {
		args = append(args, "--", folder)
	}
	raw, err := literal(ctx, r.Top, []string{"GIT_OPTIONAL_LOCKS=0"}, args...)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	fields := splitNUL(raw)
	for i := 0; i+1 < len(fields); i += 2 {
		// ":<mode> <mode> <id> <id> <status>" then the path.
		f := strings.Fields(fields[i])
		if len(f) != 5 {
			continue
		}
		if f[4] == "D" || f[1] == "160000" {
			out[fields[i+1]] = ""
		} else {
			out[fields[i+1]] = f[3]
		}
	}
	return out, nil
}

// Changes is what a commit does: the files it writes (repository path →
// content) and the paths it removes.
type Changes struct {
	Files   map[string][]byte
	Removed []string
	// TipOnly says the changes are right only when the head they were
	// planned on is the branch's tip: a plan that found the branch moved
	// since (and left the check to the compare and swap) is made again
	// on the new tip, whatever CommitOptions.Scope says.
	TipOnly bool
}

// CommitOptions describe one commit.
type CommitOptions struct {
	Author  Author
	Message string
	// Plan returns the changes to commit on head (the commit the branch
	// is at; "" when it has none yet). Commit calls it again with the new
	// tip when another writer moved the branch in the meantime. It may
	// read the repository through the Repo.
	Plan func(head string) (Changes, error)
	// Wait ends the waits for locks other git processes hold; Commit then
	// returns ErrInterrupted, having committed nothing. nil waits for
	// ever.
	Wait context.Context
	// OnWait is told what the commit is waiting for ("" once it waits no
	// more).
	OnWait func(what string)
	// SkipEmpty makes no commit when Plan changes nothing (Landed is
	// then empty).
	SkipEmpty bool
	// Scope, when set, is the folder (a repository path) Plan reads the
	// repository under, and that holds every change it returns: when
	// another writer moves the branch and leaves Scope's tree as it was,
	// the changes planned stay right, and Commit builds them on the new
	// tip at once, index.lock still held, instead of planning again. A
	// plan takes long enough for a writer that commits without a pause
	// to move the branch during every one, which would hold the commit
	// for as long as that writer runs. "" plans again at every move.
	Scope string
}

// Landed is a commit that moved the branch.
type Landed struct {
	Commit string
	Parent string
	// IndexErr is a failure to put git's index in place after the branch
	// moved: the commit stands, and git status shows its files as
	// changed until the index is brought in step (ResetIndexToHead).
	IndexErr error
}

// quickRaces is how often one commit is rebuilt at once because another
// writer moved the branch first; after that each rebuild waits a random
// while first, up to racePause (see Commit).
const (
	quickRaces = 50
	racePause  = 200 * time.Millisecond
)

// quickMoves bounds how often one attempt builds its changes again on a
// new tip without planning again (CommitOptions.Scope), index.lock held.
const quickMoves = 20

// maxKills bounds how often one commit is attempted again because a git
// command it ran was ended by a signal kk did not send (ErrKilled).
const maxKills = 3

// Commit makes one commit on the served branch from the changes Plan
// returns, in git's lock order (see Repo), and puts git's index in step
// with it for the paths it changed; the rest of the index (what a person
// staged) and the work tree are left alone. Locks other git processes
// hold are waited for, as long as o.Wait lasts, and reported to
// o.OnWait. An error means the branch did not move: whatever fails after
// it moved is reported in Landed.IndexErr.
func (r *Repo) Commit(ctx context.Context, o CommitOptions) (Landed, error) {
	if o.Author.Name == "" || o.Author.Email == "" {
		return Landed{}, errors.New("commit author needs a name and an email")
	}
	if strings.TrimSpace(o.Message) == "" {
		return Landed{}, errors.New("commit message is empty")
	}
	if o.Wait == nil {
		o.Wait = context.Background()
	}
	onWait := func(what string) {
		if o.OnWait != nil {
			o.OnWait(what)
		}
	}
	defer onWait("")
	r.mu.Lock()
	defer r.mu.Unlock()
	races, kills := 0, 0
	for delay := 5 * time.Millisecond; ; {
		landed, retry, err := r.commitOnce(ctx, o, onWait)
		switch {
		case err == nil:
			return landed, nil
		case retry == raced:
			// Another writer moved the branch between kk's read of it and
			// its update: the commit is built again on the new tip. A
			// writer that commits without a pause can win every quick
			// try (two loops of git commands did, in the fault tests under
			// load): past quickRaces, each try waits a random while first,
			// which puts it in a gap of that writer's, and the job waits
			// for a busy branch as it waits for a held lock (as long as
			// o.Wait lasts; /healthz says why) instead of failing.
			if races++; races > quickRaces {
				onWait(fmt.Sprintf("the branch %s moved %d times while kk committed; trying again", r.Branch, races))
				select {
				case <-o.Wait.Done():
					return Landed{}, fmt.Errorf("%w: the branch %s moved %d times while kk committed (%v)", ErrInterrupted, r.Branch, races, err)
				case <-time.After(time.Duration(mrand.Int64N(int64(min(time.Duration(races-quickRaces)*5*time.Millisecond, racePause))) + 1)):
				}
			}
			continue
		case errors.Is(err, ErrKilled) && kills < maxKills:
			// A git command of the attempt was ended from outside
			// before the branch moved: the attempt runs again.
			kills++
			continue
		case retry == held:
			onWait(err.Error())
			select {
			case <-o.Wait.Done():
				return Landed{}, fmt.Errorf("%w (%v)", ErrInterrupted, err)
			case <-time.After(delay):
			}
			delay = min(2*delay, 500*time.Millisecond)
			continue
		}
		return Landed{}, err
	}
}

// retryKind says why a commit attempt should run again.
type retryKind int

const (
	noRetry retryKind = iota
	raced             // another writer moved the branch first
	held              // another git process holds a lock
)

// commitOnce makes one attempt; under r.mu.
func (r *Repo) commitOnce(ctx context.Context, o CommitOptions, onWait func(string)) (Landed, retryKind, error) {
	unlock, err := r.lockIndex(o.Wait, onWait)
	if err != nil {
		return Landed{}, noRetry, err
	}
	defer unlock()
	// What an attempt before this one was held by stays said (/healthz,
	// a job's waiting_for) until this one is held too or the commit ends
	// (Commit): cleared as each attempt started, a branch's lock held
	// for minutes read "ok", and a job's "processing" without a reason,
	// for part of every try. lockIndex clears its own once it has the lock.
	if ok, other := r.OnBranch(ctx); !ok {
		return Landed{}, noRetry, fmt.Errorf("%w: %s is checked out, kk serves %s", ErrNotPinned, other, r.Branch)
	}
	head := r.tip
	if head == "" || o.SkipEmpty {
		// Nothing to commit is only known on the branch's true tip.
		if head, err = r.head(); err != nil {
			return Landed{}, noRetry, err
		}
		if head == "" && r.born {
			return Landed{}, noRetry, r.goneError()
		}
	}
	// Plan may read the repository (Blob, Files, ReadBlobs), which takes
	// r.mu: it runs without it, index.lock still held.
	r.mu.Unlock()
	changes, err := o.Plan(head)
	r.mu.Lock()
	if err != nil {
		return Landed{}, noRetry, err
	}
	if o.SkipEmpty && len(changes.Files) == 0 && len(changes.Removed) == 0 {
		return Landed{}, noRetry, nil
	}
	// git update-index starts (and reads the index) while the objects
	// are written; it gets the commit's entries once they are known.
	tmp := r.tmpIndex()
	defer func() { _ = os.Remove(tmp) }()
	iu, err := r.startIndexUpdate(ctx, tmp)
	if err != nil {
		return Landed{}, noRetry, err
	}
	entries, info, err := r.writeBlobs(ctx, changes)
	var commit string
	if err == nil {
		commit, err = r.commitOn(head, entries, o.Author, o.Message)
	}
	if err != nil {
		iu.abandon()
		return Landed{}, noRetry, err
	}
	if err := iu.finish(info, o.Wait, onWait); err != nil {
		return Landed{}, noRetry, err
	}
	r.refreshStat(ctx, tmp, changes)
	if err := r.inject("index"); err != nil {
		return Landed{}, noRetry, err
	}
	for moves := 1; ; moves++ {
		if err := r.recordCommit(head, commit); err != nil {
			return Landed{}, noRetry, err
		}
		err := r.moveBranch(head, commit, o.Wait, onWait)
		if err == nil {
			break
		}
		r.tip = ""
		now, herr := r.head()
		if herr == nil && now == commit {
			// The branch moved although the update reported a failure
			// (its process died after the commit): the commit stands.
			r.tip, r.born = commit, true
			return r.placeCommitIndex(tmp, commit, head), noRetry, nil
		}
		_ = os.Remove(r.commitRecord())
		var race *raceError
		switch {
		case herr == nil && now == "" && r.born:
			return Landed{}, noRetry, r.goneError()
		case errors.As(err, &race):
			if herr != nil || now == "" || moves >= quickMoves || !r.keepsScope(head, now, o.Scope, changes) {
				return Landed{}, raced, err
			}
			// The same changes on the new tip: git's index is the one
			// prepared (index.lock held throughout, and a writer that
			// moves the branch without it leaves it alone), and only the
			// trees and the commit are new.
			if commit, err = r.commitOn(now, entries, o.Author, o.Message); err != nil {
				return Landed{}, noRetry, err
			}
			head = now
			continue
		case lockHeld(err):
			return Landed{}, held, err
		}
		return Landed{}, noRetry, err
	}
	r.tip, r.born = commit, true
	r.gone.Store(false)
	return r.placeCommitIndex(tmp, commit, head), noRetry, nil
}

// commitRecord is the file, in the work tree's git folder, that holds a
// commit's parent and the commit from just before it moves the branch
// until git's index is in place: a kill in between leaves the branch at
// the commit and git's index at its parent, which FinishCommit sets
// right at the next start, before git's index is free again.
func (r *Repo) commitRecord() string { return filepath.Join(r.GitDir, "kk-commit") }

// recordCommit writes the commit record of a commit on parent (none for
// a first commit, whose index has nothing to bring in step). It is not
// synced: it speaks of a process killed, not of a machine that stopped.
func (r *Repo) recordCommit(parent, commit string) error {
	if parent == "" {
		return nil
	}
	if err := os.WriteFile(r.commitRecord(), []byte(parent+" "+commit+"\n"), 0o644); err != nil {
		return fmt.Errorf("recording the commit: %w", err)
	}
	return nil
}

// placeCommitIndex is placeIndex for a commit, which then drops the
// commit record (kept when the index could not be put in place).
func (r *Repo) placeCommitIndex(tmp, commit, parent string) Landed {
	l := r.placeIndex(tmp, commit, parent)
	if l.IndexErr == nil {
		_ = os.Remove(r.commitRecord())
	}
	return l
}

// FinishCommit brings git's index in step with a commit that a killed
// Commit made, and says what it did ("" when there was nothing): the
// branch moved, git's index not yet put in place (see commitRecord). The
// caller holds the lock that makes it the work tree's only worker, as
// for RemoveStaleLocks (run first, which leaves the killed worker's
// index.lock for this to take over, so that no git commit of a person's
// is made from git's index as the kill left it). Only the entries of the
// commit's files that are still as its parent holds them, and that the
// branch (the commit, or a commit made on it since) holds as the commit
// does, are brought in step. A branch that does not hold the commit (the
// kill came before the branch moved) is left to the job, which commits
// again.
func (r *Repo) FinishCommit(ctx context.Context) (string, error) {
	return r.repairRecorded(ctx, r.commitRecord(), "commit", func(parent, commit, head string, env []string) (string, error) {
		if head == "" || head != commit && !isAncestor(ctx, r.Top, commit, head) {
			return "", nil
		}
		n, err := r.bringInStep(ctx, env, parent, commit, head)
		if err != nil {
			return "", fmt.Errorf("bringing git's index to %s, the commit of a killed kk serve: %w", short(commit), err)
		}
		return fmt.Sprintf("git's index brought to %s, the commit of a killed kk serve (%d files)", short(commit), n) + since(r.Branch, head, commit), nil
	})
}

// refreshStat records in the prepared index tmp the stat data of the
// commit's files whose bytes in the work tree are the commit's, as git
// commit leaves them (git add --refresh, on those paths only: a file
// the next job wrote meanwhile stays marked changed, as it is).
// update-index --index-info writes entries with none, and git's
// plumbing, which trusts the index (git diff-index --quiet HEAD, a
// release script's "is the tree clean?"; git diff-files; git
// sparse-checkout, which then refused to leave the files out), named
// every file of each job as changed until a porcelain command refreshed
// the index. A failure leaves the entries as update-index wrote them,
// correct but for their stat data.
func (r *Repo) refreshStat(ctx context.Context, tmp string, ch Changes) {
	if len(ch.Files) == 0 {
		return
	}
	paths := make([]string, 0, len(ch.Files))
	for p := range ch.Files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	args := append([]string{"--literal-pathspecs", "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "add", "--refresh", "--"}, paths...)
	_, _ = runInput(ctx, r.Top, []string{"GIT_INDEX_FILE=" + tmp}, nil, false, args)
}

// placeIndex puts the prepared index in place of git's, the branch
// having moved.
func (r *Repo) placeIndex(tmp, commit, parent string) Landed {
	l := Landed{Commit: commit, Parent: parent}
	if err := r.inject("moved"); err != nil {
		l.IndexErr = err
		return l
	}
	if err := os.Rename(tmp, r.indexPath()); err != nil {
		l.IndexErr = fmt.Errorf("putting git's index in place: %w", err)
	}
	return l
}

// inject runs the Repo's fault hook, if a test set one, at a named point
// of a commit.
func (r *Repo) inject(point string) error {
	if r.fault == nil {
		return nil
	}
	return r.fault(point)
}

// lockIndex takes index.lock as git does (created exclusively), writing
// LockMarker into it. A lock another process holds is waited for until
// wait ends.
func (r *Repo) lockIndex(wait context.Context, onWait func(string)) (func(), error) {
	path := r.lockPath()
	marker := fmt.Sprintf("%s session=%s pid=%d\n", LockMarker, r.session, os.Getpid())
	since := time.Now()
	reported := false
	taken := func() {
		if reported {
			onWait("")
		}
	}
	for delay := 2 * time.Millisecond; ; delay = min(2*delay, 250*time.Millisecond) {
		// The lock is made a second name of a file that holds the marker
		// already (made once a session), in one step that fails when the
		// lock exists, as git's own creation of it does: a lock created
		// and then written could be left empty by a kill between the two,
		// which no later start could tell from a git command's, and every
		// job would wait for it (1 of 8 runs of 30 kills).
		err := r.linkLock(path, marker)
		if err == nil {
			// Its time is the lock's, not the marker file's: how long a
			// lock has been held is told by it (Ready).
			now := time.Now()
			_ = os.Chtimes(path, now, now)
			taken()
			return func() { _ = os.Remove(path) }, nil
		}
		if !errors.Is(err, fs.ErrExist) && !errors.Is(err, errNoLink) {
			return nil, err
		}
		var f *os.File
		if errors.Is(err, errNoLink) {
			f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		}
		if err == nil {
			_, werr := f.WriteString(marker)
			if cerr := f.Close(); werr == nil {
				werr = cerr
			}
			if werr != nil {
				_ = os.Remove(path)
				return nil, werr
			}
			taken()
			return func() { _ = os.Remove(path) }, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		if time.Since(since) > 100*time.Millisecond {
			onWait(fmt.Sprintf("waiting for %s, held by another git process since %s (if none is running, remove the file)", path, since.UTC().Format(time.RFC3339)))
			reported = true
		}
		select {
		case <-wait.Done():
			return nil, fmt.Errorf("%w for %s, held by another git process", ErrInterrupted, path)
		case <-time.After(delay):
		}
	}
}

// errNoLink is a file system where the lock cannot be a hard link.
var errNoLink = errors.New("gitx: no hard link for the lock")

// linkLock makes path a hard link to the session's marker file (written
// once): fs.ErrExist when path exists, errNoLink when no link can be made.
func (r *Repo) linkLock(path, marker string) error {
	mark := r.lockMark()
	err := os.Link(mark, path)
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Stat(mark); errors.Is(serr, fs.ErrNotExist) {
			if werr := atomicfile.Write(mark, []byte(marker), 0o444); werr != nil {
				return werr
			}
			err = os.Link(mark, path)
		}
	}
	switch {
	case err == nil, errors.Is(err, fs.ErrExist):
		return err
	case errors.Is(err, syscall.EPERM), errors.Is(err, syscall.ENOTSUP), errors.Is(err, syscall.EMLINK):
		return errNoLink
	}
	return err
}

// keepsScope reports whether the commit's changes, planned on head, are
// right on now too: every one is under scope, and scope's tree is the
// same in both commits (see CommitOptions.Scope).
func (r *Repo) keepsScope(head, now, scope string, c Changes) bool {
	if scope == "" || head == "" || c.TipOnly {
		return false
	}
	scope = strings.Trim(scope, "/") + "/"
	for p := range c.Files {
		if !strings.HasPrefix(p, scope) {
			return false
		}
	}
	for _, p := range c.Removed {
		if !strings.HasPrefix(p, scope) {
			return false
		}
	}
	reader := treeReader{get: r.get, algo: r.objs.algo}
	was, err := reader.pathTree(head, scope)
	if err != nil {
		return false
	}
	is, err := reader.pathTree(now, scope)
	return err == nil && bytes.Equal(was, is)
}

// writeBlobs writes the blobs of changes and returns the tree entries
// they set (nil for a path removed) and the index entries (git
// update-index -z --index-info input).
func (r *Repo) writeBlobs(ctx context.Context, c Changes) (map[string]*treeEntry, []byte, error) {
	entries := map[string]*treeEntry{}
	var info bytes.Buffer
	written := make([]string, 0, len(c.Files))
	for p := range c.Files {
		if p == "" || p != filepath.ToSlash(filepath.Clean(p)) || strings.HasPrefix(p, "../") || strings.HasPrefix(p, "/") {
			return nil, nil, fmt.Errorf("gitx: %q is not a clean repository path", p)
		}
		written = append(written, p)
	}
	slices.Sort(written)
	convert, err := r.converts(written, c.Files)
	if err != nil {
		return nil, nil, err
	}
	// The blobs are written at once, each in its own goroutine.
	ids := make([][]byte, len(written))
	errs := make([]error, len(written))
	var wg sync.WaitGroup
	for i, p := range written {
		wg.Go(func() { ids[i], errs[i] = r.blob(ctx, p, c.Files[p], convert[p]) })
	}
	wg.Wait()
	for i, p := range written {
		if errs[i] != nil {
			return nil, nil, fmt.Errorf("writing the blob of %s: %w", p, errs[i])
		}
		mode := "100644"
		if fi, err := os.Lstat(filepath.Join(r.Top, filepath.FromSlash(p))); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			mode = "100755"
		}
		entries[p] = &treeEntry{mode: mode, id: ids[i]}
		fmt.Fprintf(&info, "%s %s\t%s\x00", mode, hex.EncodeToString(ids[i]), p)
	}
	for _, p := range cleanPaths(c.Removed) {
		if _, ok := c.Files[p]; ok {
			continue
		}
		entries[p] = nil
		fmt.Fprintf(&info, "0 %s\t%s\x00", r.objs.algo.zeroID(), p)
	}
	return entries, info.Bytes(), nil
}

// commitOn writes the trees and the commit of entries (writeBlobs) on
// head and returns the commit's id.
func (r *Repo) commitOn(head string, entries map[string]*treeEntry, author Author, message string) (string, error) {
	reader := treeReader{get: r.get, algo: r.objs.algo}
	var root []byte
	var err error
	if head != "" {
		if root, err = reader.commitTree(head); err != nil {
			return "", err
		}
	}
	newRoot, empty, err := rewriteTree(r.objs, reader, root, "", entries)
	if err != nil {
		return "", err
	}
	if empty {
		if newRoot, err = r.objs.write("tree", nil); err != nil {
			return "", err
		}
	}
	now := time.Now()
	sig := fmt.Sprintf("%s <%s> %d %s", author.Name, author.Email, now.Unix(), now.Format("-0700"))
	var b strings.Builder
	fmt.Fprintf(&b, "tree %s\n", hex.EncodeToString(newRoot))
	if head != "" {
		fmt.Fprintf(&b, "parent %s\n", head)
	}
	fmt.Fprintf(&b, "author %s\ncommitter %s\n\n%s", sig, sig, message)
	if !strings.HasSuffix(message, "\n") {
		b.WriteByte('\n')
	}
	cid, err := r.objs.write("commit", []byte(b.String()))
	if err != nil {
		return "", err
	}
	id := hex.EncodeToString(cid)
	objects.put(id, cached{tree: newRoot})
	return id, nil
}

// blob writes the blob of path's content: by git hash-object --path
// where git converts the content on its way into the repository (see
// converts), so that the blob is what git add would have made; otherwise
// by this process.
func (r *Repo) blob(ctx context.Context, path string, data []byte, convert bool) ([]byte, error) {
	if !convert {
		return r.objs.write("blob", data)
	}
	out, err := r.git(ctx, data, nil, "hash-object", "-w", "--path="+path, "--stdin")
	if err != nil {
		return nil, err
	}
	return hex.DecodeString(strings.TrimSpace(string(out)))
}

// converts reports which of paths git converts on their way in, their
// contents being files': .gitattributes' filter, ident or
// working-tree-encoding, or, for content with a CR, text, eol or crlf
// (or core.autocrlf). One git check-attr is kept running and asked for
// all the paths at once; it is started again when a file it may have
// read attributes from changed.
func (r *Repo) converts(paths []string, files map[string][]byte) (map[string]bool, error) {
	out := make(map[string]bool, len(paths))
	if len(paths) == 0 {
		return out, nil
	}
	if r.attrs != nil && r.attrs.stale(r, paths) {
		r.attrs.close()
		r.attrs = nil
	}
	if r.attrs == nil {
		a, err := startAttrChecker(r.Top)
		if err != nil {
			return nil, err
		}
		a.stale(r, paths) // records what it reads
		r.attrs = a
	}
	values, err := r.attrs.get(paths)
	if err != nil {
		a := r.attrs
		a.close()
		r.attrs = nil
		if stateSignalled(a.cmd.ProcessState) {
			// kk never signals the git it keeps (it closes its input):
			// a signal from outside ended it, and the next one is
			// started afresh.
			return nil, fmt.Errorf("%w (%w)", err, ErrKilled)
		}
		return nil, err
	}
	for _, p := range paths {
		v := values[p]
		set := func(attr string) bool { return v[attr] != "unspecified" && v[attr] != "unset" && v[attr] != "" }
		switch {
		case set("filter") || set("ident") || set("working-tree-encoding"):
			out[p] = true
		case v["text"] == "unset" || !bytes.Contains(files[p], []byte{'\r'}):
		default:
			out[p] = r.autocrlf || set("text") || set("eol") || set("crlf")
		}
	}
	return out, nil
}

// indexUpdate is a git update-index --index-info writing the commit's
// index into tmp, a copy of git's index (index.lock held meanwhile).
type indexUpdate struct {
	ctx    context.Context
	cmd    *exec.Cmd
	in     io.WriteCloser
	stderr *bytes.Buffer
}

// startIndexUpdate copies git's index to tmp and starts git update-index
// on it, which reads it and then waits for the entries.
func (r *Repo) startIndexUpdate(ctx context.Context, tmp string) (*indexUpdate, error) {
	if _, err := r.indexCopy(); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "git", "-c", "core.quotepath=off", "update-index", "-z", "--index-info")
	cmd.Dir = r.Top
	cmd.Env = append(os.Environ(), "LC_ALL=C", "GIT_TERMINAL_PROMPT=0", "GIT_INDEX_FILE="+tmp)
	ownGroup(cmd)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &indexUpdate{ctx: ctx, cmd: cmd, in: in, stderr: &stderr}, nil
}

// finish gives git update-index the entries (update-index -z --index-info
// input) and waits for it to write the index. git runs the
// post-index-change hook once it has: a person's hook that takes its
// time is waited for as a held lock is (reported to onWait after
// hookReport, naming the hook), until wait ends; git and its hook are
// then ended, hookGrace later, and the error is ErrInterrupted.
func (u *indexUpdate) finish(info []byte, wait context.Context, onWait func(string)) error {
	_, werr := u.in.Write(info)
	cerr := u.in.Close()
	if wait == nil {
		wait = context.Background()
	}
	done := make(chan error, 1)
	go func() { done <- u.cmd.Wait() }()
	start := time.Now()
	report := time.NewTimer(hookReport)
	defer report.Stop()
	stop := wait.Done()
	var grace <-chan time.Time
	var err error
wait:
	for {
		select {
		case err = <-done:
			break wait
		case <-report.C:
			onWait(fmt.Sprintf("waiting for git update-index, which has not ended for %s: git's post-index-change hook (%s) has not ended; kk waits for it", time.Since(start).Round(time.Second), hookPath(u.cmd.Dir, "post-index-change")))
			report.Reset(time.Second)
		case <-stop:
			stop = nil
			t := time.NewTimer(hookGrace)
			defer t.Stop()
			grace = t.C
		case <-grace:
			_ = terminate(u.cmd)
			ended := <-done
			return fmt.Errorf("%w: git update-index had not ended for %s (git's post-index-change hook %s had not ended); it was ended (%v)", ErrInterrupted, time.Since(start).Round(time.Millisecond), hookPath(u.cmd.Dir, "post-index-change"), ended)
		}
	}
	if err != nil {
		msg := strings.TrimSpace(u.stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return gitError(u.ctx, []string{"update-index", "--index-info"}, msg, err)
	}
	if err := errors.Join(werr, cerr); err != nil {
		return fmt.Errorf("git update-index --index-info: %w", err)
	}
	return nil
}

// abandon ends an update whose commit was not made.
func (u *indexUpdate) abandon() {
	_ = u.in.Close()
	_ = u.cmd.Wait()
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

// git runs one git command in the work tree with stdin, in a process
// group of its own. When ctx ends, the group gets SIGTERM (terminate):
// what git started (a clean filter that hangs, its children) ends too,
// and the wait for its output ends 10 s later whatever holds it.
func (r *Repo) git(ctx context.Context, stdin []byte, env []string, args ...string) ([]byte, error) {
	defer begin(ctx, args)()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-c", "core.quotepath=off"}, args...)...)
	cmd.Dir = r.Top
	cmd.Env = append(append(os.Environ(), "LC_ALL=C", "GIT_TERMINAL_PROMPT=0"), env...)
	ownGroup(cmd)
	cmd.Cancel = func() error { return terminate(cmd) }
	cmd.WaitDelay = 10 * time.Second
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, gitError(ctx, args, msg, err)
	}
	return stdout.Bytes(), nil
}

// raceError is a compare and swap of the branch that missed: another
// writer moved it first.
type raceError struct{ msg string }

func (e *raceError) Error() string { return e.msg }

// moveBranch moves the served branch from old to next through HEAD (so
// that both reflogs get their line, as git commit writes them): HEAD is
// the branch, index.lock being held since it was checked.
func (r *Repo) moveBranch(old, next string, wait context.Context, onWait func(string)) error {
	if err := r.inject("move"); err != nil {
		return err
	}
	if old == "" {
		old = r.objs.algo.zeroID()
	}
	for try := 0; ; try++ {
		if r.refs == nil {
			u, err := startRefUpdater(r.Top)
			if err != nil {
				return err
			}
			r.refs = u
		}
		err := r.refs.update("HEAD", next, old, wait, onWait)
		if err == nil {
			return nil
		}
		r.refs.close()
		r.refs = nil
		var dead *deadError
		if errors.As(err, &dead) && try == 0 && !dead.started {
			continue // a process that died before this update: once more
		}
		return err
	}
}

// refUpdater is a running git update-ref --stdin, which moves refs in
// transactions (start, update, prepare, commit). A transaction that
// fails ends the process.
type refUpdater struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *bytes.Buffer
	// stopped is set when kk ended the process (update's wait ended);
	// waited once it was waited for.
	stopped, waited bool
}

// deadError is a git update-ref that ended; started tells whether this
// transaction had started.
type deadError struct {
	msg     string
	started bool
}

func (e *deadError) Error() string { return e.msg }

// Unwrap is the errno of the machine's failure git reported, if any
// (machineErrno): git update-ref that could not write a lock, a ref or
// a reflog on a full disk.
func (e *deadError) Unwrap() error {
	if n := machineErrno(e.msg); n != 0 {
		return n
	}
	return nil
}

func startRefUpdater(dir string) (*refUpdater, error) {
	var stderr bytes.Buffer
	cmd, in, out, err := startKept(dir, &stderr, nil, "update-ref", "-m", "kk serve: commit", "--stdin")
	if err != nil {
		return nil, err
	}
	return &refUpdater{cmd: cmd, in: in, out: bufio.NewReader(out), stderr: &stderr}, nil
}

func (u *refUpdater) close() {
	_ = u.in.Close()
	if !u.waited {
		_ = u.cmd.Wait()
		u.waited = true
	}
}

// update moves ref from old to next in one transaction. The whole
// transaction is sent at once (nothing happens between its prepare and
// its commit): git stops at the prepare when the compare and swap
// misses or a lock is held, and answers each step.
//
// git runs the reference-transaction hook at each step, and a person's
// hook may take its time, or never end (a network that never answers):
// git's answers are waited for as a held lock is, reported to onWait
// after hookReport (naming the hook), and until wait ends; git and its
// hook are then ended, hookGrace later (a commit under way when the
// server stops lands), by SIGTERM to their process group (git removes
// the ref locks it holds), and the error is ErrInterrupted. The branch may
// have moved meanwhile (the hook ran after the commit): the caller
// reads it.
func (u *refUpdater) update(ref, next, old string, wait context.Context, onWait func(string)) error {
	if _, err := fmt.Fprintf(u.in, "start\nupdate %s %s %s\nprepare\ncommit\n", ref, next, old); err != nil {
		return u.died(false)
	}
	if wait == nil {
		wait = context.Background()
	}
	type answer struct {
		step int
		line string
		err  error
	}
	answers := make(chan answer, 3)
	go func() {
		defer close(answers)
		for i := range 3 {
			line, err := u.out.ReadString('\n')
			answers <- answer{i, line, err}
			if err != nil {
				return
			}
		}
	}()
	want := [...]string{"start: ok", "prepare: ok", "commit: ok"}
	start := time.Now()
	report := time.NewTimer(hookReport)
	defer report.Stop()
	reported := false
	stop := wait.Done()
	var grace <-chan time.Time
	for got := 0; got < len(want); {
		select {
		case a := <-answers:
			got++
			if a.err != nil {
				return u.died(a.step > 0)
			}
			if strings.TrimSpace(a.line) != want[a.step] {
				return fmt.Errorf("git update-ref: %q, want %q", strings.TrimSpace(a.line), want[a.step])
			}
		case <-report.C:
			reported = true
			onWait(fmt.Sprintf("waiting for git update-ref, which has not answered for %s: git's reference-transaction hook (%s) has not ended; kk waits for it (git's locks on the branch are held meanwhile)", time.Since(start).Round(time.Second), u.hookPath()))
			report.Reset(time.Second)
		case <-stop:
			// A commit under way when the server stops lands: git is given
			// hookGrace to answer.
			stop = nil
			t := time.NewTimer(hookGrace)
			defer t.Stop()
			grace = t.C
		case <-grace:
			u.stopped = true
			_ = terminate(u.cmd)
			for range answers { // until git's output ends
			}
			_ = u.in.Close()
			_ = u.cmd.Wait()
			u.waited = true
			return fmt.Errorf("%w: git update-ref had not answered for %s (git's reference-transaction hook %s had not ended); it was ended", ErrInterrupted, time.Since(start).Round(time.Millisecond), u.hookPath())
		}
	}
	if reported {
		onWait("")
	}
	return nil
}

// hookReport is how long git update-ref may take to answer before the
// commit reports that it waits for it (its reference-transaction hook);
// hookGrace how long it may take still once the server stops.
var (
	hookReport = time.Second
	hookGrace  = 10 * time.Second
)

// hookPath is where git looks for the reference-transaction hook
// (core.hooksPath honoured).
func (u *refUpdater) hookPath() string { return hookPath(u.cmd.Dir, "reference-transaction") }

// hookPath is where git, run in dir, looks for the hook name
// (core.hooksPath honoured).
func hookPath(dir, name string) string {
	out, err := Read(context.Background(), dir, "rev-parse", "--git-path", "hooks/"+name)
	if err != nil {
		return name
	}
	p := strings.TrimSpace(string(out))
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	return p
}

// died waits for the process and reports what it said: a compare and
// swap that missed is a *raceError, a held lock keeps git's words (see
// lockHeld).
func (u *refUpdater) died(started bool) error {
	_ = u.in.Close()
	werr := u.cmd.Wait()
	u.waited = true
	msg := strings.TrimSpace(u.stderr.String())
	if signalled(werr) && !u.stopped {
		// Ended by a signal kk did not send: nothing moved that git's
		// locks did not roll back, and the commit runs again.
		if msg == "" {
			msg = "git update-ref ended"
		}
		return fmt.Errorf("git update-ref: %s (%w)", msg, ErrKilled)
	}
	switch {
	case strings.Contains(msg, "but expected") || strings.Contains(msg, "reference already exists"):
		return &raceError{msg: "git update-ref: " + msg}
	case msg == "":
		msg = "git update-ref ended"
	}
	return &deadError{msg: "git update-ref: " + msg, started: started}
}

// attrChecker is a running git check-attr --stdin for the attributes
// that change content on its way into the repository. It reads each
// attributes file once; seen records what each file was when it could
// have, so that a change starts a new one.
type attrChecker struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	seen map[string]string // attributes file -> its size and mtime ("" when absent)
}

var convertAttrs = []string{"text", "eol", "crlf", "filter", "ident", "working-tree-encoding"}

func startAttrChecker(dir string) (*attrChecker, error) {
	cmd, in, out, err := startKept(dir, nil, []string{"GIT_FLUSH=1", "GIT_OPTIONAL_LOCKS=0"}, append([]string{"check-attr", "--stdin", "-z"}, convertAttrs...)...)
	if err != nil {
		return nil, err
	}
	return &attrChecker{cmd: cmd, in: in, out: bufio.NewReader(out), seen: map[string]string{}}, nil
}

func (a *attrChecker) close() {
	_ = a.in.Close()
	_ = a.cmd.Wait()
}

// stale reports whether an attributes file that paths' attributes come
// from changed since this checker may have read it (the .gitattributes
// of each of their folders, and the repository's info/attributes), and
// records the ones it had not seen.
func (a *attrChecker) stale(r *Repo, paths []string) bool {
	files := map[string]bool{filepath.Join(r.CommonDir, "info", "attributes"): true}
	for _, p := range paths {
		for d := path.Dir(p); ; d = path.Dir(d) {
			if d == "." {
				files[filepath.Join(r.Top, ".gitattributes")] = true
				break
			}
			files[filepath.Join(r.Top, filepath.FromSlash(d), ".gitattributes")] = true
		}
	}
	changed := false
	for f := range files {
		stamp := ""
		if fi, err := os.Stat(f); err == nil {
			stamp = fmt.Sprintf("%d/%d", fi.Size(), fi.ModTime().UnixNano())
		}
		if old, ok := a.seen[f]; ok && old != stamp {
			changed = true
		}
		a.seen[f] = stamp
	}
	return changed
}

// get returns each path's values of convertAttrs: "set", "unset",
// "unspecified" or a value. The paths are written at once, then the
// answers read.
func (a *attrChecker) get(paths []string) (map[string]map[string]string, error) {
	var b bytes.Buffer
	for _, p := range paths {
		b.WriteString(p)
		b.WriteByte(0)
	}
	werr := make(chan error, 1)
	go func() { _, err := a.in.Write(b.Bytes()); werr <- err }()
	out := make(map[string]map[string]string, len(paths))
	for range paths {
		var path string
		v := make(map[string]string, len(convertAttrs))
		for range convertAttrs {
			var f [3]string
			for i := range f {
				s, err := a.out.ReadString(0)
				if err != nil {
					<-werr //nolint:errcheck // the writer goroutine ends; err says more than its error
					return nil, fmt.Errorf("git check-attr: %w", err)
				}
				f[i] = strings.TrimSuffix(s, "\x00")
			}
			path = f[0]
			v[f[1]] = f[2]
		}
		out[path] = v
	}
	if err := <-werr; err != nil {
		return nil, err
	}
	return out, nil
}

// ReadBlobs reads the blobs ids (hex) through the kept cat-file, the
// names written by one goroutine while the contents are read, and hands
// each to fn in order.
func (r *Repo) ReadBlobs(ids []string, fn func(i int, data []byte) error) error {
	if len(ids) == 0 {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c, err := r.catFile()
	if err != nil {
		return err
	}
	werr := make(chan error, 1)
	go func() {
		w := bufio.NewWriterSize(c.in, 64<<10)
		for _, id := range ids {
			if _, err := w.WriteString(id + "\n"); err != nil {
				werr <- err
				return
			}
		}
		werr <- w.Flush()
	}()
	var ferr error
	for i := range ids {
		line, err := c.out.ReadString('\n')
		if err != nil {
			err = r.dropCatFile(err)
			<-werr //nolint:errcheck // the writer goroutine ends; err says more than its error
			return err
		}
		f := strings.Fields(line)
		if len(f) != 3 {
			// "<id> missing": the object is not there.
			if ferr == nil {
				ferr = fmt.Errorf("git cat-file: %s", strings.TrimSpace(line))
			}
			continue
		}
		size, err := strconv.Atoi(f[2])
		if err != nil {
			err = r.dropCatFile(err)
			<-werr //nolint:errcheck // the writer goroutine ends; err says more than its error
			return err
		}
		body := make([]byte, size+1)
		if _, err := io.ReadFull(c.out, body); err != nil {
			err = r.dropCatFile(err)
			<-werr //nolint:errcheck // the writer goroutine ends; err says more than its error
			return err
		}
		if ferr == nil {
			ferr = fn(i, body[:size])
		}
	}
	if err := <-werr; err != nil {
		return err
	}
	return ferr
}
