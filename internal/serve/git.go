package serve

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/jobqueue"
	"github.com/kk-project/kk/internal/lock"
	"github.com/kk-project/kk/internal/service"
	"github.com/kk-project/kk/internal/store"
)

// LockFile is kk serve's own lock, under .ai/kenkeep/.state/ and the work
// tree's git folder (store.KB.Locks): the one server of a work tree holds
// it while it runs. It is what tells that the server which left a git
// lock file behind is dead (see Open).
const LockFile = "serve.lock"

// ErrServing means another kk serve holds the work tree.
var ErrServing = errors.New("another kk serve is serving this knowledge base")

// Open makes the backend the work tree's server: it takes kk serve's own
// lock (a second server of the same work tree is refused, naming the
// first), opens the repository pinned to the branch checked out now (the
// only branch it will commit to), and removes the git lock files a server
// killed before left (index.lock with kk's mark, its copy of the index,
// its scratch work tree): their owner is dead, since the lock was free.
// Locks a live git command holds are not touched; jobs wait for them.
// stop ends the waits for such locks (the server is stopping): the job
// waiting is then resumed by the next start.
func (b *Backend) Open(stop context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.repo != nil {
		return nil
	}
	return b.openLocked(stop)
}

// finishMoveWait bounds the start's wait for git's index.lock to set
// right a move of the branch or a commit a killed kk serve left
// (gitx.FinishMove, gitx.FinishCommit).
const finishMoveWait = 10 * time.Second

func (b *Backend) openLocked(stop context.Context) error {
	l, err := b.k.Locks(LockFile).Acquire(stop, b.lockWait, "kk serve")
	if held, ok := errors.AsType[*lock.HeldError](err); ok {
		who := "another process"
		if h := held.Holder; h != nil {
			who = fmt.Sprintf("pid %d on %s, since %s", h.PID, h.Host, h.Since.UTC().Format(time.RFC3339))
		}
		return fmt.Errorf("%w (%s; waited %s; lock %s)", ErrServing, who, b.lockWait, held.Path)
	}
	if err != nil {
		return err
	}
	b.abortLeftRebase(stop)
	r, err := gitx.OpenRepo(stop, b.k.Root)
	if err != nil {
		_ = l.Release()
		if top, gitDir, ok := gitx.WorkTreeGitDir(b.k.Root); ok {
			if herr := headProblem(stop, top, gitDir, ""); herr != nil {
				return fmt.Errorf("kk serve needs its root in a git work tree on a branch: %w (%v)", herr, err)
			}
		}
		return fmt.Errorf("kk serve needs its root in a git work tree on a branch: %w", err)
	}
	removed, err := r.RemoveStaleLocks()
	if err != nil {
		r.Close()
		_ = l.Release()
		return fmt.Errorf("removing the git locks a killed kk serve left: %w", err)
	}
	for _, p := range removed {
		b.log.Warn("removed a git lock file a killed kk serve left", "path", p)
	}
	if err := gitx.TidyAside(stop, asideDir(r)); err != nil {
		b.log.Warn("removing the lock files a killed kk serve left in its own work tree failed; the next --push-every tick tries again", "error", err)
	}
	// A --push-every tick's move of the branch a kill cut in two (tried
	// again by each tick when this one cannot: a lock held meanwhile).
	fctx, cancel := context.WithTimeout(stop, finishMoveWait)
	if did, err := r.FinishMove(fctx); err != nil {
		b.log.Warn("setting right the move of the branch a killed kk serve left failed; the next --push-every tick tries again", "error", err)
	} else if did != "" {
		b.log.Warn("set right the move of the branch a killed kk serve left", "what", did)
	}
	// A job's commit a kill cut in two (else set right when the job
	// runs again: gitx.ResetIndexToHead).
	if did, err := r.FinishCommit(fctx); err != nil {
		b.log.Warn("bringing git's index in step with the commit a killed kk serve made failed; the job brings it in step when it runs again", "error", err)
	} else if did != "" {
		b.log.Warn("set right the commit a killed kk serve made", "what", did)
	}
	cancel()
	b.repo, b.held, b.stop = r, l, stop
	b.maintCtx, b.maintCancel = context.WithCancel(stop)
	b.top = r.Top
	b.prefix = ""
	if rel := store.RelTo(r.Top, b.k.Root); rel != "." {
		b.prefix = rel + "/"
	}
	b.log.Info("kk serve commits to the branch checked out at start", "branch", r.Branch, "object_format", r.ObjectFormat())
	return nil
}

// servedBranchFile, under .state/, names the branch kk serve serves,
// written at each start: the branch the jobs in its queue were accepted
// for.
const servedBranchFile = "serve.branch"

// KeepQueuedBranch is called once the queue is open, pending saying
// whether it holds jobs not finished. Those were accepted for the branch
// the last kk serve served: when a person has another branch checked
// out at this start (a checkout and back, in the instant a service
// manager restarts a killed server), kk serve serves that branch still,
// and holds the jobs until it is checked out again, instead of serving
// the other one, its jobs then held for ever once the person was back.
// It then records the branch served.
func (b *Backend) KeepQueuedBranch(ctx context.Context, pending bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.repo == nil {
		return
	}
	path := filepath.Join(b.k.StateDir(), servedBranchFile)
	if data, err := os.ReadFile(path); err == nil && pending {
		if was := strings.TrimSpace(string(data)); was != "" && was != b.repo.Branch {
			checkedOut := b.repo.Branch
			if err := b.repo.Pin(ctx, was); err != nil {
				b.log.Warn("the jobs queued were accepted for another branch, which cannot be served", "branch", was, "error", err)
			} else {
				b.log.Warn("kk serve serves the branch its queued jobs were accepted for, not the one checked out; the jobs wait until it is checked out again", "branch", was, "checked_out", checkedOut)
			}
		}
	}
	if err := atomicfile.Write(path, []byte(b.repo.Branch+"\n"), 0o644); err != nil {
		b.log.Warn("recording the branch served", "file", path, "error", err)
	}
}

// Close lets go of the repository's git processes and of kk serve's lock,
// once a run of git gc --auto under way has ended (it is ended).
func (b *Backend) Close() error {
	b.mu.Lock()
	if b.maintCancel != nil {
		b.maintCancel()
	}
	b.mu.Unlock()
	b.maint.Wait()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.repo != nil {
		b.repo.Close()
		b.repo = nil
	}
	if b.held != nil {
		_ = b.held.Release()
		b.held = nil
	}
	b.view = nil
	if b.watch != nil {
		_ = b.watch.Close() // the handle's syncs walk from now on
		b.watch = nil
	}
	return nil
}

// gitRepo returns the repository, opened (without a stop) when the
// backend was not: a test that runs jobs without a server.
func (b *Backend) gitRepo() (*gitx.Repo, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.repo == nil {
		if err := b.openLocked(context.Background()); err != nil {
			return nil, err
		}
	}
	return b.repo, nil
}

// Branch is the branch kk serve commits to ("" before Open).
func (b *Backend) Branch() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.repo == nil {
		return ""
	}
	return b.repo.Branch
}

// heldLockAge is how long a git lock file must have been there before
// the worker stops taking jobs for it: a person's git status takes
// index.lock for a moment, and a job waits for that inside its commit.
const heldLockAge = time.Second

// Ready tells the queue whether a job can be taken now
// (jobqueue.Options.Ready): not while the work tree has another branch
// checked out than the one served, nor while a git lock file has been
// held for a while (a person's git commit with its editor open, or a
// lock a crashed git left: kk cannot tell, and waits).
func (b *Backend) Ready(ctx context.Context) error {
	r, err := b.gitRepo()
	if err != nil {
		return err
	}
	if err := b.gone(); err != nil {
		return err
	}
	if err := headProblem(ctx, r.Top, r.GitDir, r.Branch); err != nil {
		return err
	}
	if ok, other := r.OnBranch(ctx); !ok {
		return fmt.Errorf("the work tree has %s checked out; kk serve serves the branch %s (checked out when it started) and holds the jobs until %s is checked out again", other, r.Branch, r.Branch)
	}
	if r.BranchGone(ctx) {
		return fmt.Errorf("the branch %s, which kk serve serves, no longer exists (deleted by another git command); the jobs wait until it is there again", r.Branch)
	}
	if err := personsOperation(r.GitDir); err != nil {
		return err
	}
	if p := r.HeldLock(); p != "" {
		if fi, err := os.Lstat(p); err == nil && time.Since(fi.ModTime()) > heldLockAge {
			return fmt.Errorf("waiting for %s, held by another git process since %s (if no git command is running, remove the file)", p, fi.ModTime().UTC().Format(time.RFC3339))
		}
	}
	return nil
}

// headProblem reports, as an error that says how to mend it, a HEAD file
// (in the work tree's git folder gitDir) that names no commit and no
// branch (junk, empty, missing: git then takes the work tree for no
// repository, and every git command fails), or that points at a branch
// that does not exist or at a ref that is not a branch; nil for a HEAD
// on an existing branch, and for a detached HEAD (a commit's name),
// which OnBranch and the person's operations in progress tell about.
// served is the branch kk serve serves, "" at a start (only a HEAD git
// cannot read is told then).
func headProblem(ctx context.Context, top, gitDir, served string) error {
	path := filepath.Join(gitDir, "HEAD")
	mend := fmt.Sprintf("put back the branch kk serve serves: echo 'ref: refs/heads/%s' > %s", served, path)
	if served == "" {
		mend = fmt.Sprintf("put back the branch to serve: echo 'ref: refs/heads/<branch>' > %s", path)
	}
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return nil // the symbolic link HEAD of old gits: git reads it
	}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("git's HEAD file %s is missing: git takes the work tree for no repository, and kk serve holds the jobs; %s", path, mend)
	case err != nil:
		return fmt.Errorf("git's HEAD file %s cannot be read (%v): kk serve holds the jobs until it can", path, err)
	}
	content := strings.TrimSpace(string(data))
	if content == "" {
		return fmt.Errorf("git's HEAD file %s is empty: git takes the work tree for no repository, and kk serve holds the jobs; %s", path, mend)
	}
	target, symbolic := strings.CutPrefix(content, "ref:")
	if !symbolic {
		if objectName.MatchString(content) {
			return nil // detached
		}
		return fmt.Errorf("git's HEAD file %s holds %s, neither a branch nor a commit: git takes the work tree for no repository, and kk serve holds the jobs; %s", path, quoteShort(content), mend)
	}
	target = strings.TrimSpace(target)
	if !strings.HasPrefix(target, "refs/") || strings.ContainsAny(target, " \t\n") {
		return fmt.Errorf("git's HEAD file %s names %s, which is not a ref (a ref's name starts with refs/): git takes the work tree for no repository, and kk serve holds the jobs; %s", path, quoteShort(target), mend)
	}
	name, branch := strings.CutPrefix(target, "refs/heads/")
	switch {
	case served == "":
		return nil // a start: OpenRepo tells
	case !branch:
		return fmt.Errorf("git's HEAD file %s points at %s, which is not a branch; kk serve serves the branch %s and holds the jobs until it is checked out again: git switch %s", path, target, served, served)
	case name == served:
		return nil // the served branch; Ready tells when it is gone
	}
	if _, err := gitx.Read(ctx, top, "rev-parse", "-q", "--verify", target+"^{commit}"); err == nil {
		return nil // another branch, checked out: OnBranch tells
	}
	return fmt.Errorf("git's HEAD file %s points at the branch %s, which does not exist (no commit has it: a checkout of a branch never made, or one deleted); kk serve serves the branch %s and holds the jobs until it is checked out again: git switch %s", path, name, served, served)
}

// objectName is a commit's full name (SHA-1 or SHA-256).
var objectName = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)

// quoteShort quotes s for a message, cut to its first 80 bytes.
func quoteShort(s string) string {
	if len(s) > 80 {
		return fmt.Sprintf("%q…", s[:80])
	}
	return fmt.Sprintf("%q", s)
}

// personsOperation reports, as an error that says how to end it, a git
// operation of the person's that stopped halfway in the work tree whose
// git folder is gitDir (a merge or a cherry-pick at a conflict, git am at
// a patch that does not apply, a bisect), nil when there is none. The
// branch is still checked out, but it is the person's until the
// operation ends: a job committed then would move the branch under them
// (a merge's first parent, the commit a cherry-pick or an am builds on),
// and write the index files from leaves with conflict markers; the
// --push-every tick's rebase would put their staged resolution in a stash
// and end the merge. A rebase in progress is a detached HEAD, held as
// such; git's own rebase-merge and rebase-apply folders are checked too.
func personsOperation(gitDir string) error {
	exists := func(name string) bool {
		_, err := os.Lstat(filepath.Join(gitDir, name))
		return err == nil
	}
	var what, end string
	switch {
	case exists(filepath.Join("rebase-apply", "applying")):
		what, end = "git am", "git am --continue, --skip or --abort"
	case exists("rebase-merge"), exists("rebase-apply"):
		what, end = "a rebase", "git rebase --continue, --skip or --abort"
	case exists("MERGE_HEAD"):
		what, end = "a merge", "git commit, or git merge --abort"
	case exists("CHERRY_PICK_HEAD"):
		what, end = "a cherry-pick", "git cherry-pick --continue, --skip or --abort"
	case exists("REVERT_HEAD"):
		what, end = "a revert", "git revert --continue, --skip or --abort"
	case exists(filepath.Join("sequencer", "todo")):
		what, end = "a cherry-pick or revert of several commits", "git cherry-pick (or revert) --continue, --quit or --abort"
	case exists("BISECT_START"):
		what, end = "a bisect", "git bisect reset"
	default:
		return nil
	}
	return fmt.Errorf("%s is in progress in the work tree (%s); kk serve holds the jobs until it ends (%s)", what, gitDir, end)
}

// Waiting says what the job in progress waits for (jobqueue.Options.Waiting),
// else that the knowledge base's folder is gone, or that HEAD's file is
// spoiled (headProblem), with no job waiting,
// else a git command of a job that has run for more than slowGit.
func (b *Backend) Waiting() string {
	b.waitMu.Lock()
	why := b.waitingFor
	b.waitMu.Unlock()
	if why == "" {
		if err := b.gone(); err != nil {
			why = err.Error()
		}
	}
	if why == "" {
		why = b.headSpoiled()
	}
	if why == "" {
		if args, since := b.gits.Oldest(); args != "" && time.Since(since) > slowGit {
			why = fmt.Sprintf("a job waits for git %s, running since %s (%s): a filter of .gitattributes (git-lfs), a hook or a stalled file system that does not end holds the jobs; kk serve's stop ends it %v later, and the job runs again at the next start",
				args, since.UTC().Format(time.RFC3339), time.Since(since).Round(time.Second), stopGrace)
		}
	}
	return why
}

// headSpoiled is headProblem's message for the served work tree, with no
// job waiting ("" when HEAD is well, or the repository is not open): a
// HEAD on the served branch is told by its file alone, without git.
func (b *Backend) headSpoiled() string {
	b.mu.Lock()
	r := b.repo
	b.mu.Unlock()
	if r == nil {
		return ""
	}
	if name, ok := gitx.HeadBranch(r.Top); ok && name == r.Branch {
		return ""
	}
	if err := headProblem(context.Background(), r.Top, r.GitDir, r.Branch); err != nil {
		return err.Error()
	}
	return ""
}

// slowGit is how long a job's git command runs before /healthz names it:
// they take milliseconds.
const slowGit = 2 * time.Second

// untilStop returns ctx for a job's steps: its git commands are tracked
// (/healthz names one that does not end), and it ends stopGrace after the
// server's stop, so that a git command that never ends (a clean filter
// of .gitattributes, a stalled file system) does not hold the stop for
// ever. interrupted turns an error of a step the stop ended so into
// jobqueue.ErrInterrupted (the next start resumes the job); release
// lets go of ctx.
func (b *Backend) untilStop(ctx context.Context) (_ context.Context, interrupted func(error) error, release func()) {
	gctx, cancel := context.WithCancel(ctx)
	stop := b.stopCtx()
	var mu sync.Mutex
	var grace *time.Timer
	fired := false
	unhook := context.AfterFunc(stop, func() {
		mu.Lock()
		defer mu.Unlock()
		grace = time.AfterFunc(stopGrace, func() {
			mu.Lock()
			fired = true
			mu.Unlock()
			cancel()
		})
	})
	interrupted = func(err error) error {
		mu.Lock()
		defer mu.Unlock()
		if err == nil || !fired || errors.Is(err, jobqueue.ErrInterrupted) {
			return err
		}
		return fmt.Errorf("%w: the job's step had not ended %v after the stop and was ended: %v", jobqueue.ErrInterrupted, stopGrace, err)
	}
	release = func() {
		unhook()
		mu.Lock()
		if grace != nil {
			grace.Stop()
		}
		mu.Unlock()
		cancel()
	}
	return b.gits.Track(gctx), interrupted, release
}

// Unavailable reports that the backend cannot answer now (gone), for the
// web page served beside it.
func (b *Backend) Unavailable() error { return b.gone() }

// gone reports, as an error matching service.ErrUnavailable, that the
// work tree or the knowledge base's folder is no longer where kk serve
// started (removed, or moved away, while it runs): the jobs wait, reads
// answer 503, and nothing is made at the old place. nil while they are
// there.
func (b *Backend) gone() error {
	top, _ := b.prefixNow()
	for _, d := range []string{top, b.k.Dir} {
		if d == "" {
			continue
		}
		if _, err := os.Stat(d); errors.Is(err, fs.ErrNotExist) {
			return &goneError{fmt.Sprintf("the folder %s is gone (removed or moved away while kk serve ran); the jobs wait until it is back (or stop kk serve and start it where the repository is now)", d)}
		}
	}
	return nil
}

// goneError is gone's error: its message, matching service.ErrUnavailable.
type goneError struct{ msg string }

func (e *goneError) Error() string { return e.msg }
func (e *goneError) Unwrap() error { return service.ErrUnavailable }

// setWaiting records what the job in progress waits for (a commit's
// OnWait). A new reason is logged whole (a git error with git's every
// line of advice), once: /healthz gives it on one line.
func (b *Backend) setWaiting(what string) {
	b.waitMu.Lock()
	b.waitingFor = what
	logIt := what != "" && what != b.waitLogged
	if logIt {
		b.waitLogged = what
	}
	b.waitMu.Unlock()
	if logIt {
		b.log.Warn("the job's commit waits", "for", what)
	}
}

// waitEnded forgets the reason last logged: the commit that waited for
// it is over, and the next one to wait for it logs it again.
func (b *Backend) waitEnded() {
	b.waitMu.Lock()
	b.waitLogged = ""
	b.waitMu.Unlock()
}

// stopCtx is what ends the waits of a job's commit: the server's stop.
func (b *Backend) stopCtx() context.Context {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stop == nil {
		return context.Background()
	}
	return b.stop
}

// commitError turns a commit's failure into the queue's kind of error: a
// wait the stop ended leaves the job for the next start; the served
// branch not checked out, and git commands that signals from outside
// kept ending (gitx.ErrKilled, after the commit's own tries), are the
// environment's (the job is queued again and waits); anything else fails
// the job.
func commitError(err error) error {
	switch {
	case errors.Is(err, gitx.ErrInterrupted):
		return fmt.Errorf("%w: %v", jobqueue.ErrInterrupted, err)
	case errors.Is(err, gitx.ErrNotPinned), errors.Is(err, gitx.ErrKilled):
		return fmt.Errorf("%w: %v", jobqueue.ErrHeld, err)
	}
	return fmt.Errorf("committing: %w", err)
}

// hookRefused says, for a commit the person's reference-transaction
// hook refused (git update-ref: "ref updates aborted by hook"; a policy
// hook, or a broken one), which hook refused and what it said, in place
// of git's words: the job fails (a hook may judge the commit it is
// shown, and a job it refuses would hold every job after it), its files
// put back, and its client is told what to fix.
func hookRefused(r *gitx.Repo, err error) error {
	if err == nil || errors.Is(err, jobqueue.ErrHeld) || errors.Is(err, jobqueue.ErrInterrupted) {
		return err
	}
	msg := err.Error()
	if !strings.Contains(msg, "aborted by hook") && !strings.Contains(msg, "aborted by the reference-transaction hook") {
		return err
	}
	var said []string
	for _, l := range strings.Split(msg, "\n") {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(l, "committing: "), "git update-ref: "))
		if l != "" && !strings.HasPrefix(l, "fatal:") && !strings.Contains(l, "aborted by") {
			said = append(said, l)
		}
	}
	hook := "reference-transaction"
	if out, err := gitx.Read(context.Background(), r.Top, "rev-parse", "--git-path", "hooks/reference-transaction"); err == nil {
		hook = strings.TrimSpace(string(out))
		if !filepath.IsAbs(hook) {
			hook = filepath.Join(r.Top, hook)
		}
	}
	what := "it said nothing"
	if len(said) > 0 {
		what = "it said: " + strings.Join(said, "; ")
	}
	return refusal{fmt.Errorf("committing: git's reference-transaction hook %s refused to move the branch %s (%s); fix the hook, or remove it, then send the request again", hook, r.Branch, what)}
}

// refusal is a commit's failure that is an answer about the job, not a
// failure of git's: a person's hook that refused it, a note holding a
// person's changes (personsChange). Trying the job again would get the
// same answer: it fails at once (gitFailure).
type refusal struct{ err error }

func (e refusal) Error() string { return e.err.Error() }
func (e refusal) Unwrap() error { return e.err }

// gitTries is how many times a job whose commit git fails for no reason
// kk can name (gitFailure) is tried before it fails
// (jobqueue.Options.MaxRetries).
const gitTries = 6

// gitFailure marks a job's commit that failed with err, when git failed
// partway for a reason kk does not know to be lasting (a git process of
// the person's that held a file a moment, a git killed, a read that
// failed once), as one that may pass (jobqueue.Retry): its files are put
// back, it is queued again, first, and runs again after the queue's
// back-off (50 ms, doubling), /healthz saying why and which try failed.
// The queue counts the tries in the job's record, so a restart between
// two goes on counting (before, the count lived in the running server,
// and a server restarted between tries tried the job for ever); the
// gitTries-th failure in a row fails it, with git's words, its files put
// back. A failure that is the environment's already (ErrHeld: a lock, a
// full disk, a damaged index, waited for as long as it lasts), a stop
// (ErrInterrupted) and a refusal (an answer about the job) are returned
// as they are.
func gitFailure(err error) error {
	var r refusal
	if err == nil || errors.Is(err, jobqueue.ErrHeld) || errors.Is(err, jobqueue.ErrInterrupted) || errors.As(err, &r) {
		return err
	}
	return jobqueue.Retry(fmt.Errorf("git failed during the job's commit: %w", err))
}

// indexDamage are git's words for an index it cannot read (read-cache.c):
// cut short, its checksum or signature wrong, a version or an entry
// format it does not know.
var indexDamage = []string{
	"index file smaller than expected",
	"index file corrupt",
	"bad index file sha1 signature",
	"bad index version",
	"unknown index entry format",
	"unable to map index file",
}

// indexDamaged marks a failure of git to read the work tree's index (a
// crash or a full disk while another git command wrote it, a disk's
// fault) as the environment's (jobqueue.ErrHeld: the job is put back and
// waits, /healthz saying which file and how to rebuild it): every job's
// commit starts from that index, so each would fail in turn, losing every
// post accepted meanwhile, while /healthz said ok. A git kk keeps running
// (check-attr) that died on the index says nothing kk reads, so a failure
// that does not name the damage has the index read once more (git
// ls-files) to tell. kk never rebuilds it itself: what the person staged
// is theirs.
func indexDamaged(ctx context.Context, r *gitx.Repo, err error) error {
	if err == nil || errors.Is(err, jobqueue.ErrHeld) || errors.Is(err, jobqueue.ErrInterrupted) {
		return err
	}
	damage := func(msg string) string {
		for _, d := range indexDamage {
			if strings.Contains(msg, d) {
				return d
			}
		}
		return ""
	}
	d := damage(err.Error())
	if d == "" && ctx.Err() == nil {
		if _, rerr := gitx.Read(ctx, r.Top, "ls-files", "--cached", "-z", "--", ".ai/kenkeep/ENTRY.md"); rerr != nil {
			d = damage(rerr.Error())
		}
	}
	if d == "" {
		return err
	}
	index := filepath.Join(r.GitDir, "index")
	return fmt.Errorf("%w: the git index %s is damaged (git: %s); rebuild it from the branch's tip, keeping the work tree's files: rm %s && git reset; the job waits and runs once it can be read (%v)", jobqueue.ErrHeld, index, d, index, err)
}

// cleanFilterFailed is git's word for a required clean filter that
// failed (convert.c): "<path>: clean filter '<name>' failed".
var cleanFilterFailed = regexp.MustCompile(`([^\s:]+): clean filter '([^']*)' failed`)

// filterFailed marks a commit's failure because a required clean filter
// failed (.gitattributes filter=NAME with filter.NAME.required: its
// program missing or broken, git-crypt locked, git-lfs not installed) as
// the environment's (jobqueue.ErrHeld: the job is put back and waits,
// /healthz naming the filter and the file): git cannot write the files it
// covers, so every job whose commit meets it would fail in turn, losing
// every post accepted meanwhile, while /healthz said ok.
func filterFailed(err error) error {
	if err == nil || errors.Is(err, jobqueue.ErrHeld) || errors.Is(err, jobqueue.ErrInterrupted) {
		return err
	}
	m := cleanFilterFailed.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	return fmt.Errorf("%w: git's clean filter '%s' (filter.%s.clean, required) failed on %s; make it run (its program installed, the tool unlocked) or take the filter off the file in .gitattributes: the job waits and runs once it does (%v)", jobqueue.ErrHeld, m[2], m[2], m[1], err)
}

// dubiousOwnership is git's refusal of a repository another user owns
// (setup.c): "detected dubious ownership in repository at '<dir>'".
var dubiousOwnership = regexp.MustCompile(`detected dubious ownership in repository at '([^']*)'`)

// untrusted marks a commit's failure because git stopped trusting the
// repository under the running server (its owner changed: a chown -R, kk
// serve's service user changed; git's safe.directory check) as the
// environment's (jobqueue.ErrHeld: the job is put back and waits,
// /healthz naming the repository and the ways out): git refuses every
// command there, so every job would fail in turn, losing every post
// accepted meanwhile, while /healthz said ok.
func untrusted(err error) error {
	if err == nil || errors.Is(err, jobqueue.ErrHeld) || errors.Is(err, jobqueue.ErrInterrupted) {
		return err
	}
	m := dubiousOwnership.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	return fmt.Errorf("%w: git refuses the repository %s, which another user than kk serve's now owns (its safe.directory check); give it back to kk serve's user, or, if you trust it, tell git so: git config --global --add safe.directory %s; the job waits and runs once git works in it", jobqueue.ErrHeld, m[1], m[1])
}

// gitConfigBad are git's words for a configuration file it cannot read
// (config.c): a line it cannot parse, a value of the wrong kind, a file
// it may not open.
var gitConfigBad = regexp.MustCompile(`(bad config line \d+ in [^\n]*|bad (?:numeric|boolean) config value [^\n]*|unable to access '[^']*config[^']*': [^\n]*)`)

// gitConfigUnreadable marks a failure because git cannot work in the
// repository at all as the environment's (jobqueue.ErrHeld: the job is
// put back and waits, /healthz giving git's words): its configuration
// unreadable (a person's ~/.gitconfig, the repository's .git/config or a
// file they include, saved with a typo while kk serve runs), or its refs
// (.git/packed-refs damaged by a crash or a full disk while git packed
// them). git then refuses every command, so every job would fail in
// turn, losing every post accepted meanwhile, while /healthz said ok. A
// git kk keeps running (check-attr, update-ref) that died on it says
// nothing kk reads, so a failure that does not name it has git read the
// served branch once more: a fatal error there is not the job's.
func (b *Backend) gitConfigUnreadable(ctx context.Context, err error) error {
	if err == nil || errors.Is(err, jobqueue.ErrHeld) || errors.Is(err, jobqueue.ErrInterrupted) {
		return err
	}
	what := ""
	if m := gitConfigBad.FindStringSubmatch(err.Error()); m != nil {
		what = "git cannot read its configuration (" + strings.TrimSpace(m[1]) + ")"
	} else if ctx.Err() == nil {
		_, rerr := gitx.Read(ctx, b.k.Root, "rev-parse", "-q", "--verify", "refs/heads/"+b.Branch())
		if m := gitConfigBad.FindStringSubmatch(fmt.Sprint(rerr)); m != nil {
			what = "git cannot read its configuration (" + strings.TrimSpace(m[1]) + ")"
		} else if line := gitFatal(rerr); line != "" && ctx.Err() == nil {
			what = "git cannot read the repository (" + line + ")"
		}
	}
	if what == "" {
		return err
	}
	return fmt.Errorf("%w: %s; fix the file it names: the job waits and runs once git reads it (%v)", jobqueue.ErrHeld, what, err)
}

// gitFatal is git's "fatal: …" line in err, without the word; "" when
// none.
func gitFatal(err error) string {
	if err == nil {
		return ""
	}
	for _, l := range strings.Split(err.Error(), "\n") {
		if _, rest, ok := strings.Cut(l, "fatal: "); ok {
			return strings.TrimSpace(rest)
		}
	}
	return ""
}

// heldError marks a failure to take kk's writer lock (another kk process
// held it for the whole wait) as the environment's.
func heldError(err error) error {
	var held *lock.HeldError
	if errors.As(err, &held) {
		return fmt.Errorf("%w: %v", jobqueue.ErrHeld, err)
	}
	return err
}
