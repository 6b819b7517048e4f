package serve

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/lock"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// URLFile is where a running kk serve records the URL it listens on,
// under .ai/kenkeep/.state/.
const URLFile = "serve.url"

// Announce records url in .state/serve.url, for clients and scripts that
// look for the running server; the returned function removes it again.
func Announce(k *store.KB, url string) (func(), error) {
	p := filepath.Join(k.StateDir(), URLFile)
	if err := atomicfile.Write(p, []byte(url+"\n"), 0o644); err != nil {
		return nil, err
	}
	return func() { _ = os.Remove(p) }, nil
}

// BootstrapSubject is the subject of the commit that creates a knowledge
// repository for kk serve.
const BootstrapSubject = "init: bootstrap knowledge base"

// Bootstrap makes root ready to serve: a folder that does not exist or is
// empty becomes a git repository with a knowledge base (kk init) and one
// commit; a git work tree without a knowledge base gets one, committed
// alone; a work tree with one is left as it is. A folder that holds
// anything and is not in a git work tree is refused. It returns the
// knowledge base. It is BootstrapWith without a report of its steps.
func Bootstrap(ctx context.Context, root string, opts store.InitOptions) (*store.KB, error) {
	return BootstrapWith(ctx, root, opts, nil)
}

// SetupGitTimeout bounds each git command of the setup of a new folder
// (git init, the scaffold's git add and commit). They take milliseconds;
// one that does not end (a clean filter or another program of the
// person's git configuration that hangs, a stalled network file system)
// held kk serve's start for ever. Past it the command is stopped, the
// setup undone, and kk serve's start fails, saying which command.
var SetupGitTimeout = 2 * time.Minute

// Setup says which step the setup of a new folder is at, for kk serve's
// /healthz while it starts (its zero value is ready to use; a nil
// *Setup reports nothing).
type Setup struct {
	mu    sync.Mutex
	root  string
	step  string
	since time.Time
}

// Waiting says, on one line, which step of the setup runs and since
// when, "" when none does.
func (s *Setup) Waiting() string {
	if s == nil {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.step == "" {
		return ""
	}
	return fmt.Sprintf("setting up the knowledge base in %s: waiting for %s, running since %s (%s); a command that does not end (a filter, hook or other program of git's configuration that hangs, a stalled file system) is stopped after %v and the setup undone",
		s.root, s.step, s.since.UTC().Format(time.RFC3339), time.Since(s.since).Round(time.Second), SetupGitTimeout)
}

func (s *Setup) set(root, step string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.root, s.step, s.since = root, step, time.Now()
}

// errSetupStopped is a setup step the server's stop ended.
var errSetupStopped = errors.New("the setup was stopped")

// setupStep runs one step of the setup, named what (a git command), with
// its own context: it ends SetupGitTimeout after it began, or stopGrace
// after the stop (a setup is short: a stop lets it finish, but a step
// that hangs is ended, and the setup undone).
func setupStep(stop context.Context, s *Setup, root, what string, fn func(context.Context) error) error {
	s.set(root, what)
	defer s.set("", "")
	ctx, cancel := context.WithTimeout(context.WithoutCancel(stop), SetupGitTimeout)
	defer cancel()
	var mu sync.Mutex
	var grace *time.Timer
	unhook := context.AfterFunc(stop, func() {
		mu.Lock()
		grace = time.AfterFunc(stopGrace, cancel)
		mu.Unlock()
	})
	defer func() {
		unhook()
		mu.Lock()
		if grace != nil {
			grace.Stop()
		}
		mu.Unlock()
	}()
	err := fn(ctx)
	if err == nil || ctx.Err() == nil {
		return err
	}
	if stop.Err() != nil {
		return fmt.Errorf("%w: %s had not ended %v after the stop and was ended: %v", errSetupStopped, what, stopGrace, err)
	}
	return fmt.Errorf("%s did not end within %v and was stopped (a filter, hook or other program of git's configuration that hangs, or a stalled file system): %w", what, SetupGitTimeout, err)
}

// notARepository returns nil when root is in no repository, as git rev-parse
// --is-inside-work-tree said (revErr its failure, nil when it answered
// "false"), and otherwise why kk serve cannot tell, having written
// nothing: git failed otherwise than with "not a git repository" (for a
// moment: a process table full), or a folder above holds a .git that
// git does not take for a repository (its HEAD file spoiled). Either way
// a git init would make a repository inside the person's.
func notARepository(ctx context.Context, root string, revErr error) error {
	if revErr != nil && !strings.Contains(revErr.Error(), "not a git repository") {
		return fmt.Errorf("git could not tell whether %s is in a git repository (%v); kk serve has written nothing: start it again once git works there", root, revErr)
	}
	top, gitDir, ok := gitx.WorkTreeGitDir(root)
	if !ok {
		return nil
	}
	why := "git does not take it for a repository"
	if herr := headProblem(ctx, top, gitDir, ""); herr != nil {
		why = herr.Error()
	}
	return fmt.Errorf("%s is inside the work tree %s (git folder %s), but %s; kk serve has written nothing (a git init here would make a repository inside that one): mend it, then start kk serve again", root, top, gitDir, why)
}

// BootstrapWith is Bootstrap reporting its steps to s (/healthz while
// kk serve starts). A stop (ctx ending) lets the setup finish, never
// leaving it halfway: a stop cut between kk init and its commit left
// the scaffold staged and never committed. A git command of the setup
// that does not end, though, is ended (stopGrace after the stop, or
// SetupGitTimeout after it began) and the setup done so far is undone:
// the folder is as it was, and the next start sets it up whole.
func BootstrapWith(ctx context.Context, root string, opts store.InitOptions, s *Setup) (*store.KB, error) {
	if _, err := os.Stat(root); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(root, 0o755); err != nil {
			return nil, err
		}
	}
	// Another kk serve started at the same moment sets it up first, or
	// after this one: never both at once (two git init in one folder
	// failed, and two bootstrap commits were made).
	s.set(root, "another kk serve that sets this folder up (its lock on the folder)")
	unlock, err := lockSetup(ctx, root)
	s.set("", "")
	if err != nil {
		return nil, err
	}
	defer unlock()
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	k := store.New(root)
	var out []byte
	var revErr error // git's answer: not in a work tree, or another user's
	err = setupStep(ctx, s, k.Root, "git rev-parse", func(ctx context.Context) error {
		out, revErr = gitx.Run(ctx, k.Root, "rev-parse", "--is-inside-work-tree")
		if ctx.Err() != nil {
			return revErr
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if revErr != nil && strings.Contains(revErr.Error(), "dubious ownership") {
		return nil, anotherOwner(k.Root, revErr)
	}
	if revErr != nil {
		if m := gitConfigBad.FindStringSubmatch(revErr.Error()); m != nil {
			// git refuses every command: whether the root is in a
			// repository cannot be told (it was called "not in a git
			// repository", and an empty folder inside one was given a
			// git init of its own).
			return nil, fmt.Errorf("git cannot read its configuration (%s), so kk serve cannot tell whether %s is in a git repository, and has written nothing; fix the file, then start kk serve again", strings.TrimSpace(m[1]), k.Root)
		}
	}
	undo := &setupUndo{root: k.Root}
	if strings.TrimSpace(string(out)) != "true" {
		if err := notARepository(ctx, k.Root, revErr); err != nil {
			return nil, err
		}
		if len(entries) > 0 {
			return nil, fmt.Errorf("%s is not empty and not in a git repository; kk serve keeps its notes in git: give it an empty folder, a new one, or a git repository", k.Root)
		}
		undo.empty = true
		if err := setupStep(ctx, s, k.Root, "git init", func(ctx context.Context) error {
			_, err := gitx.Run(ctx, k.Root, "init", "-q", "-b", "main")
			return err
		}); err != nil {
			return nil, undo.run(err)
		}
	}
	if k.Initialized() {
		return k, nil
	}
	undo.note(filepath.Join(k.Root, ".ai"), filepath.Join(k.Root, store.DirName), filepath.Join(k.Root, ".kkignore"))
	var res *store.InitResult
	if err := setupStep(ctx, s, k.Root, "kk init (the scaffold)", func(ctx context.Context) (err error) {
		res, err = txn.Init(ctx, k, opts)
		return err
	}); err != nil {
		return nil, undo.run(err)
	}
	var top string
	if err := setupStep(ctx, s, k.Root, "git rev-parse --show-toplevel", func(ctx context.Context) (err error) {
		top, err = gitx.TopLevel(ctx, k.Root)
		return err
	}); err != nil {
		return nil, undo.run(err)
	}
	prefix := ""
	if rel := store.RelTo(top, k.Root); rel != "." {
		prefix = rel + "/"
	}
	paths := []string{prefix + store.DirName}
	for _, p := range res.Created {
		if p == ".kkignore" {
			paths = append(paths, prefix+p)
		}
	}
	undo.top, undo.paths = top, paths
	err = setupStep(ctx, s, k.Root, "git add and git commit of the new knowledge base", func(ctx context.Context) error {
		_, err := gitx.CommitPaths(ctx, top, DefaultAuthor(), BootstrapSubject, paths)
		return err
	})
	if err != nil {
		if committed(top, prefix) {
			return k, nil // the commit landed; a step after it was cut
		}
		return nil, undo.run(fmt.Errorf("committing the new knowledge base: %w", err))
	}
	return k, nil
}

// committed reports whether HEAD in top holds the knowledge base under
// prefix (the setup's commit landed).
func committed(top, prefix string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := gitx.Read(ctx, top, "rev-parse", "-q", "--verify", "HEAD:"+prefix+store.DirName+"/config.yaml")
	return err == nil
}

// setupUndo undoes a setup cut halfway: in a folder that was empty,
// everything made there (git init's .git, the scaffold); in a
// repository, the scaffold's files that were not there before, taken
// out of git's index too.
type setupUndo struct {
	root  string
	empty bool
	made  []string // paths that were not there before the setup
	top   string   // the work tree's top, once known
	paths []string // the paths staged for the setup's commit
}

// note records which of paths are not there yet (made by the setup).
func (u *setupUndo) note(paths ...string) {
	for _, p := range paths {
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			u.made = append(u.made, p)
		}
	}
}

// run undoes the setup and returns cause, with what could not be undone.
func (u *setupUndo) run(cause error) error {
	var failed []string
	if u.empty {
		entries, err := os.ReadDir(u.root)
		if err != nil {
			failed = append(failed, err.Error())
		}
		for _, e := range entries {
			if err := os.RemoveAll(filepath.Join(u.root, e.Name())); err != nil {
				failed = append(failed, err.Error())
			}
		}
	} else {
		if u.top != "" && len(u.paths) > 0 {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			args := append([]string{"-c", "core.hooksPath=/dev/null", "rm", "-r", "-q", "--cached", "--ignore-unmatch", "--"}, u.paths...)
			if _, err := gitx.Run(ctx, u.top, args...); err != nil {
				failed = append(failed, err.Error())
			}
			cancel()
		}
		for i := len(u.made) - 1; i >= 0; i-- {
			if err := os.RemoveAll(u.made[i]); err != nil {
				failed = append(failed, err.Error())
			}
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%w (and undoing the setup failed: %s)", cause, strings.Join(failed, "; "))
	}
	return fmt.Errorf("%w; the setup was undone, nothing of it is left in %s", cause, u.root)
}

// shareRounds bounds the fetch, rebase and push rounds of one tick
// against a remote that keeps moving.
const shareRounds = 10

// shareClock, under .state/, holds when the last --push-every tick began
// (RFC 3339), so that the period carries over a restart: a server
// restarted more often than --push-every still shares.
const shareClock = "serve.shared"

// ShareFrom returns when the --push-every period running at a start at
// now began: the last tick's time, as recorded; else now, which it
// records (a time recorded after now, a clock set back, counts as now).
func (b *Backend) ShareFrom(now time.Time) time.Time {
	data, err := os.ReadFile(filepath.Join(b.k.StateDir(), shareClock))
	if err == nil {
		if at, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(data))); err == nil && !at.After(now) {
			return at
		}
	}
	b.recordShare(now)
	return now
}

// recordShare records at as the start of a --push-every tick.
func (b *Backend) recordShare(at time.Time) {
	p := filepath.Join(b.k.StateDir(), shareClock)
	if err := atomicfile.Write(p, []byte(at.UTC().Format(time.RFC3339Nano)+"\n"), 0o644); err != nil {
		b.log.Warn("recording the time of the push tick", "file", p, "error", err)
	}
}

// rebaseMarker, under .state/, recorded that a --push-every rebase was
// running in the work tree, in a kk serve from before the tick replayed
// in its own work tree (asideDir): the start still aborts one such a
// server left, killed (abortLeftRebase).
const rebaseMarker = "serve.rebasing"

// rebaseStaged, under .state/, held the git index's entries of the
// person's staged changes while such a rebase ran (gitx.StagedEntries):
// its --autostash gave them back unstaged, and the start puts them back.
const rebaseStaged = "serve.rebasing.staged"

// Share is the --push-every tick, run by the worker between jobs: fetch
// origin, replay the local commits onto it (a local job's lines win where
// both changed the same ones) and push at once; then bring the generated
// index files in step with the merged tree (one commit when they
// change) and push that. A push the remote refuses because it moved
// starts the round again, up to shareRounds times. Each failure is
// logged and left for the next tick; no job is lost, since every job is
// already a local commit. A stop of the server that ends the tick is no
// failure: it is logged at INFO, and not counted in SharingProblem.
//
// The rebase is never left halfway: it runs to its end whatever the
// stop (a signal to kk's process group does not reach git, which runs
// in a group of its own), a failed one is aborted, and one a killed
// server left is aborted at the next start. Fetches and pushes stop
// cleanly with the server.
func (b *Backend) Share(ctx context.Context) {
	b.recordShare(time.Now())
	r, err := b.gitRepo()
	if err != nil {
		b.log.Warn("sharing with origin skipped", "error", err)
		return
	}
	if !gitx.HasRemote(ctx, r.Top, "origin") {
		b.log.Debug("no origin remote; nothing to push")
		b.shared(nil)
		return
	}
	if ok, other := r.OnBranch(ctx); !ok {
		b.log.Warn("sharing with origin skipped: the served branch is not checked out", "branch", r.Branch, "checked_out", other)
		return
	}
	if err := personsOperation(r.GitDir); err != nil {
		// The rebase would stash the person's staged work and end their
		// operation (a merge's MERGE_HEAD gone).
		b.log.Warn("sharing with origin skipped until the person's git operation ends", "reason", err)
		return
	}
	defer b.changed()
	branch := r.Branch
	for round := 1; round <= shareRounds; round++ {
		if ctx.Err() != nil {
			return
		}
		t0 := time.Now()
		moved, err := b.shareRound(ctx, r, branch)
		b.log.Debug("share round", "round", round, "took", time.Since(t0), "moved", moved, "error", err)
		switch {
		case err == nil && moved:
			b.log.Info("pushed to origin", "branch", branch, "rounds", round)
			b.shared(nil)
			return
		case err == nil:
			b.log.Debug("origin already has every commit; nothing to push", "branch", branch)
			b.shared(nil)
			return
		case errors.Is(err, gitx.ErrRejected):
			b.log.Debug("origin moved during the push; fetching and rebasing again", "round", round)
			continue
		case ctx.Err() != nil:
			// The server stopping (SIGINT, SIGTERM) ended the tick's git
			// command ("signal: terminated", "context canceled"): a
			// normal stop, not a failing tick. Its error is still said.
			b.log.Info("sharing with origin stopped with the server; the jobs are committed locally and shared at the next tick", "branch", branch, "error", err)
			return
		}
		b.log.Warn("sharing with origin failed; retried at the next tick", "branch", branch, "error", err)
		b.shared(err)
		return
	}
	b.log.Warn("origin kept moving; retried at the next tick", "branch", branch, "rounds", shareRounds)
	b.shared(fmt.Errorf("origin kept moving during %d rounds", shareRounds))
}

// shared records how a tick that talked to origin ended: err nil when it
// shared (or had nothing to share).
func (b *Backend) shared(err error) {
	b.waitMu.Lock()
	defer b.waitMu.Unlock()
	f := &b.shareFail
	if err == nil {
		f.ticks, f.err = 0, ""
		return
	}
	if f.ticks == 0 {
		f.since = time.Now()
	}
	f.ticks++
	f.err = err.Error()
}

// SharingProblem says, on one line, that the --push-every ticks have been
// failing (since when, how many in a row, and git's meaningful line of
// the last one's error), "" while they share: /healthz's sharing_failed.
func (b *Backend) SharingProblem() string {
	b.waitMu.Lock()
	defer b.waitMu.Unlock()
	f := b.shareFail
	if f.ticks == 0 {
		return ""
	}
	ticks := "1 tick"
	if f.ticks > 1 {
		ticks = fmt.Sprintf("%d ticks", f.ticks)
	}
	return fmt.Sprintf("sharing with origin has failed since %s (%s in a row; the jobs are committed locally and shared once it works): %s",
		f.since.UTC().Format(time.RFC3339), ticks, gitLine(f.err))
}

// gitLine cuts an error carrying git's output to one line: git's
// "fatal:", "error:" or "remote:" line when it has one, else its first.
func gitLine(msg string) string {
	lines := strings.Split(strings.TrimSpace(msg), "\n")
	first := strings.TrimSpace(lines[0])
	for _, l := range lines[1:] {
		l = strings.TrimSpace(l)
		for _, p := range []string{"fatal: ", "error: ", "remote: "} {
			if strings.HasPrefix(l, p) {
				return first + " " + l
			}
		}
	}
	return first
}

// shareRound fetches, rebases, pushes, regenerates and pushes again. It
// reports whether a push moved origin's branch: none is made when origin
// already has the branch's tip (an idle tick).
func (b *Backend) shareRound(ctx context.Context, r *gitx.Repo, branch string) (moved bool, err error) {
	var upstream string
	err = b.toTheEnd(ctx, "git fetch", func(ctx context.Context) (err error) {
		upstream, err = gitx.Fetch(ctx, r.Top, "origin", branch)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("fetching: %w", err)
	}
	if upstream != "" {
		if err := b.rebase(ctx, r, upstream); err != nil {
			return false, err
		}
	}
	same, err := sameCommit(ctx, r.Top, upstream, "refs/heads/"+branch)
	if err != nil {
		return false, err
	}
	if !same {
		if err := b.push(ctx, r, branch); err != nil {
			return false, err
		}
		moved = true
	}
	// The merged tree's generated files, committed as any job's.
	meta := txn.Meta{Actor: "kk serve", Source: "http", Command: "kk serve (regenerate after rebasing)"}
	var landed bool
	// As a job's commit: to its end whatever the stop, but for a git
	// command that does not end, ended stopGrace after it.
	cctx, _, release := b.untilStop(context.WithoutCancel(ctx))
	defer release()
	_, err = txn.Update(ctx, b.k, meta, func(tx *txn.Tx) error {
		tx.Regenerate()
		tx.AfterCommit(func(res *txn.Result) error {
			p := b.planner(cctx, r, res)
			l, err := r.Commit(cctx, gitx.CommitOptions{Author: b.author, Message: "index: regenerate after rebasing onto origin/" + branch,
				Plan: p.plan, Scope: p.scope(), Wait: b.stopCtx(), OnWait: b.setWaiting, SkipEmpty: true})
			b.waitEnded()
			if err != nil {
				return err
			}
			if l.Commit != "" {
				b.landed(p, l)
				landed = true
			}
			return nil
		})
		return nil
	})
	if err != nil {
		return moved, fmt.Errorf("regenerating the index files after the rebase: %w", err)
	}
	if !landed {
		return moved, nil
	}
	if err := b.push(ctx, r, branch); err != nil {
		return moved, err
	}
	return true, nil
}

// ShareNetTimeout bounds each git command of a --push-every tick that
// talks to origin (a fetch, a push). The tick runs in the worker, between
// jobs: a remote that never answers (a stuck server or proxy, a network
// that drops the packets) would otherwise hold every job for as long as
// it hangs. A command past it is stopped, and the tick is tried again at
// the next one.
var ShareNetTimeout = 2 * time.Minute

// talkToOrigin runs step, a git command named what that talks to origin,
// for at most ShareNetTimeout.
func talkToOrigin(ctx context.Context, what string, step func(context.Context) error) error {
	nctx, cancel := context.WithTimeout(ctx, ShareNetTimeout)
	defer cancel()
	err := step(nctx)
	if err != nil && ctx.Err() == nil && errors.Is(nctx.Err(), context.DeadlineExceeded) {
		// What git waited for: one of the repository's hooks (a pre-push
		// hook that never ends), else the remote.
		if h, ok := errors.AsType[*gitx.HookError](err); ok {
			return fmt.Errorf("git's %s hook %s did not end within %v; %s was stopped (the jobs' commits are kept, and shared once the hook ends: fix the hook, or remove it): %w", filepath.Base(h.Hook), h.Hook, ShareNetTimeout, what, err)
		}
		return fmt.Errorf("origin did not answer within %v; %s was stopped: %w", ShareNetTimeout, what, err)
	}
	return err
}

// push pushes the served branch to origin, for at most ShareNetTimeout.
func (b *Backend) push(ctx context.Context, r *gitx.Repo, branch string) error {
	return b.toTheEnd(ctx, "git push", func(ctx context.Context) error { return gitx.Push(ctx, r.Top, "origin", branch) })
}

// toTheEnd is talkToOrigin run to its end whatever the stop (ctx's end),
// but for a command that has not ended stopGrace after it: git fetch and
// git push write origin's remote-tracking ref at their end, and a SIGTERM
// that lands while git creates its lock leaves
// refs/remotes/origin/<branch>.lock, on which every later fetch fails.
func (b *Backend) toTheEnd(ctx context.Context, what string, step func(context.Context) error) error {
	gctx, _, release := b.untilStop(context.WithoutCancel(ctx))
	defer release()
	return talkToOrigin(gctx, what, step)
}

// sameCommit reports whether the refs a and b name one commit; a ref
// "" (origin without the branch) is never the same.
func sameCommit(ctx context.Context, dir, a, b string) (bool, error) {
	if a == "" || b == "" {
		return false, nil
	}
	out, err := gitx.Read(ctx, dir, "rev-parse", a+"^{commit}", b+"^{commit}")
	if err != nil {
		return false, fmt.Errorf("reading the tips of %s and %s: %w", a, b, err)
	}
	tips := strings.Fields(string(out))
	return len(tips) == 2 && tips[0] == tips[1], nil
}

// RebaseTimeout bounds the --push-every tick's rebase: it takes
// moments; one that does not end (a filter of the person's git
// configuration that hangs in its checkout) would hold every job.
var RebaseTimeout = 10 * time.Minute

// asideDir is kk serve's own linked work tree, in the served work tree's
// git folder, where the --push-every tick replays the branch's commits.
func asideDir(r *gitx.Repo) string { return filepath.Join(r.GitDir, "kk-share") }

// asideKeeps is what kk's own work tree checks out: the knowledge base's
// folder, relative to the top of the work tree (nil, everything, when it
// cannot be told).
func (b *Backend) asideKeeps(r *gitx.Repo) []string {
	top, err := filepath.EvalSymlinks(r.Top)
	if err != nil {
		return nil
	}
	kb, err := filepath.EvalSymlinks(b.k.Dir)
	if err != nil {
		return nil
	}
	rel, err := filepath.Rel(top, kb)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil
	}
	return []string{filepath.ToSlash(rel)}
}

// rebase replays the served branch's commits onto upstream, under kk's
// writer lock (no job writes meanwhile): in kk's own work tree
// (gitx.RebaseAside), never in the person's, whose work tree then sees
// one git command, git read-tree -m -u (Repo.MoveTo, in git's lock order
// as a job's commit), which changes only the files the replay changed,
// and the branch's compare and swap. A person's
// change, staged or not, stays where it is; one in the way of the move
// (a file origin changed) stops the tick before it changes anything.
func (b *Backend) rebase(ctx context.Context, r *gitx.Repo, upstream string) error {
	meta := txn.Meta{Actor: "kk serve", Source: "http", Command: "kk serve (rebase onto " + upstream + ")"}
	_, err := txn.Update(ctx, b.k, meta, func(tx *txn.Tx) error {
		return tx.Outside(func() error {
			// A move a killed kk serve left, which its start could not
			// set right.
			if did, err := r.FinishMove(b.stopCtx()); err != nil {
				return fmt.Errorf("setting right the move of the branch a killed kk serve left: %w", err)
			} else if did != "" {
				b.log.Warn("set right the move of the branch a killed kk serve left", "what", did)
			}
			// The person's uncommitted changes of files origin changed
			// too: git read-tree -m -u would refuse to move over them.
			way, werr := gitx.InTheRebasesWay(ctx, r.Top, upstream)
			if werr != nil {
				return werr
			}
			// The files kk generates are the tick's to make again from
			// the merged tree: they differ while a person's note is not
			// committed, and origin changes them at every job. They are
			// put back as the branch holds them, so that none is in the
			// move's way, and regenerated after it.
			var gen []string
			way = slices.DeleteFunc(way, func(p string) bool {
				if b.generatedAt(r.Top, p) {
					gen = append(gen, p)
					return true
				}
				return false
			})
			if len(way) > 0 {
				return fmt.Errorf("origin changed %s, with changes not committed in the work tree (a person's edit): kk serve does not move the branch over them; commit them (or discard them: git checkout -- …), and the next tick shares", strings.Join(way, ", "))
			}
			// Run to its end whatever the stop, but for a rebase that
			// does not end (a filter of the person's that hangs in its
			// checkout): ended stopGrace after the stop, or after
			// RebaseTimeout, and aborted.
			rctx, _, release := b.untilStop(context.WithoutCancel(ctx))
			defer release()
			rctx, cancel := context.WithTimeout(rctx, RebaseTimeout)
			defer cancel()
			from, to, err := gitx.RebaseAside(rctx, r.Top, asideDir(r), r.Branch, upstream, "theirs", b.asideKeeps(r))
			if rctx.Err() != nil && err != nil {
				err = fmt.Errorf("git rebase had not ended when it was stopped (%v; a filter or another program of git's configuration that hangs, or a stalled file system): %w", context.Cause(rctx), err)
			}
			if err != nil || from == to {
				return err
			}
			if len(gen) > 0 {
				if _, err := gitx.Run(ctx, r.Top, append([]string{"--literal-pathspecs", "checkout", "-q", "HEAD", "--"}, gen...)...); err != nil {
					return fmt.Errorf("putting back the generated files before moving the branch: %w", err)
				}
			}
			err = r.MoveTo(rctx, from, to, b.stopCtx(), b.setWaiting)
			b.waitEnded()
			return err
		})
	})
	if err != nil {
		return fmt.Errorf("rebasing onto %s: %w", upstream, err)
	}
	return nil
}

// generatedAt reports whether p, relative to the work tree's top top, is
// one of the files kk generates (ENTRY.md, GRAPH.md, a folder's index.md,
// but not a note a person named index.md).
func (b *Backend) generatedAt(top, p string) bool {
	rel, err := filepath.Rel(b.k.Root, filepath.Join(top, filepath.FromSlash(p)))
	if err != nil {
		return false
	}
	rest, ok := strings.CutPrefix(filepath.ToSlash(rel), store.DirName+"/")
	if !ok || !isGeneratedRel(rest) {
		return false
	}
	if leaf, ok := strings.CutPrefix(rest, "nodes/"); ok {
		return store.HandIndex(b.k, leaf, nil) == nil
	}
	return true
}

// abortLeftRebase aborts a --push-every rebase a killed server left in
// the work tree (its marker in .state/ and git's rebase state both
// there), before the repository is opened: HEAD is detached meanwhile.
func (b *Backend) abortLeftRebase(ctx context.Context) {
	marker := filepath.Join(b.k.StateDir(), rebaseMarker)
	stagedFile := filepath.Join(b.k.StateDir(), rebaseStaged)
	data, err := os.ReadFile(marker)
	if err != nil {
		// Killed before the marker, the rebase not started: the staged
		// changes it recorded are where they were.
		_ = os.Remove(stagedFile)
		return
	}
	out, err := gitx.Read(ctx, b.k.Root, "rev-parse", "--absolute-git-dir")
	if err != nil {
		return
	}
	// The commit kk's rebase replayed onto ("" from a kk serve before
	// it was recorded).
	_, onto, _ := strings.Cut(string(data), "\n")
	onto = strings.TrimSpace(onto)
	restore := false // the person's staged changes went through the autostash
	switch inProgress := gitx.RebaseOnto(strings.TrimSpace(string(out))); {
	case inProgress != "" && inProgress != "?" && onto != "" && inProgress != onto:
		// The person's own (kk's never started, or ended): theirs to end.
		b.log.Warn("a rebase kk serve did not start is in progress; it is left to the person", "onto", inProgress)
	case inProgress != "":
		if err := gitx.AbortRebase(ctx, b.k.Root); err != nil {
			b.log.Warn("aborting the rebase a killed kk serve left failed; run git rebase --abort", "error", err)
			return
		}
		b.log.Warn("aborted the rebase a killed kk serve left")
		restore = true
	case onto != "":
		// None in progress: kk's ended, its autostash given back,
		// when the branch holds onto; else it never started.
		_, err := gitx.Read(ctx, b.k.Root, "merge-base", "--is-ancestor", onto, "HEAD")
		restore = err == nil
	}
	// The person's staged changes, which the rebase's autostash gave
	// back unstaged.
	if entries, err := os.ReadFile(stagedFile); err == nil && restore {
		if err := gitx.RestoreEntries(ctx, b.k.Root, entries); err != nil {
			b.log.Warn("putting back the staged changes the rebase a killed kk serve left gave back unstaged failed; stage them again", "error", err)
			return
		}
	}
	_ = os.Remove(stagedFile)
	_ = os.Remove(marker)
}

// anotherOwner is the refusal of a root in a repository git will not work
// in because another user owns it (safe.directory), err being git's: kk
// serve said "not in a git repository", and ran git init in an empty
// folder inside it, making a repository inside the person's.
func anotherOwner(root string, err error) error {
	repo := root
	msg := err.Error()
	if i := strings.Index(msg, "repository at '"); i >= 0 {
		rest := msg[i+len("repository at '"):]
		if j := strings.Index(rest, "'"); j >= 0 {
			repo = rest[:j]
		}
	}
	return fmt.Errorf("%s is in the git repository %s, which another user owns: git refuses to work in it (its safe.directory check), and so does kk serve, which has written nothing; run kk serve as the user who owns the repository, or, if you trust it, tell git so: git config --global --add safe.directory %s", root, repo, repo)
}

// Running reports whether a kk serve runs over k now: another process
// holds kk serve's lock (LockFile). It creates nothing and waits for
// nothing; a lock it cannot ask about counts as no server.
func Running(k *store.KB) bool {
	held, err := lock.HeldByAnother(k.Locks(LockFile).Path)
	return err == nil && held
}
