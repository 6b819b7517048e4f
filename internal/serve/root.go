package serve

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/internal/gitx"
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
// knowledge base.
func Bootstrap(ctx context.Context, root string, opts store.InitOptions) (*store.KB, error) {
	// A setup is never left halfway by a stop (SIGTERM, Ctrl-C): it is
	// short (git init, kk init, one commit), and one cut between kk init
	// and its commit left the scaffold staged and never committed.
	ctx = context.WithoutCancel(ctx)
	if _, err := os.Stat(root); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(root, 0o755); err != nil {
			return nil, err
		}
	}
	// Another kk serve started at the same moment sets it up first, or
	// after this one: never both at once (two git init in one folder
	// failed, and two bootstrap commits were made).
	unlock, err := lockSetup(root)
	if err != nil {
		return nil, err
	}
	defer unlock()
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	k := store.New(root)
	out, err := gitx.Run(ctx, k.Root, "rev-parse", "--is-inside-work-tree")
	if err != nil && strings.Contains(err.Error(), "dubious ownership") {
		return nil, anotherOwner(k.Root, err)
	}
	if err != nil || strings.TrimSpace(string(out)) != "true" {
		if len(entries) > 0 {
			return nil, fmt.Errorf("%s is not empty and not in a git repository; kk serve keeps its notes in git: give it an empty folder, a new one, or a git repository", k.Root)
		}
		if _, err := gitx.Run(ctx, k.Root, "init", "-q", "-b", "main"); err != nil {
			return nil, err
		}
	}
	if k.Initialized() {
		return k, nil
	}
	res, err := txn.Init(ctx, k, opts)
	if err != nil {
		return nil, err
	}
	top, err := gitx.TopLevel(ctx, k.Root)
	if err != nil {
		return nil, err
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
	if _, err := gitx.CommitPaths(ctx, top, DefaultAuthor(), BootstrapSubject, paths); err != nil {
		return nil, fmt.Errorf("committing the new knowledge base: %w", err)
	}
	return k, nil
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

// rebaseMarker, under .state/, records that a --push-every rebase is
// running, so that the next start aborts one a killed server left.
const rebaseMarker = "serve.rebasing"

// Share is the --push-every tick, run by the worker between jobs: fetch
// origin, replay the local commits onto it (a local job's lines win where
// both changed the same ones) and push at once; then bring the generated
// index files in step with the merged tree (one commit when they
// change) and push that. A push the remote refuses because it moved
// starts the round again, up to shareRounds times. Each failure is
// logged and left for the next tick; no job is lost, since every job is
// already a local commit.
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
	err = talkToOrigin(ctx, "git fetch", func(ctx context.Context) (err error) {
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
		if err := push(ctx, r, branch); err != nil {
			return false, err
		}
		moved = true
	}
	// The merged tree's generated files, committed as any job's.
	meta := txn.Meta{Actor: "kk serve", Source: "http", Command: "kk serve (regenerate after rebasing)"}
	var landed bool
	_, err = txn.Update(ctx, b.k, meta, func(tx *txn.Tx) error {
		tx.Regenerate()
		tx.AfterCommit(func(res *txn.Result) error {
			p := b.planner(context.WithoutCancel(ctx), r, res)
			l, err := r.Commit(context.WithoutCancel(ctx), gitx.CommitOptions{Author: b.author, Message: "index: regenerate after rebasing onto origin/" + branch,
				Plan: p.plan, Wait: b.stopCtx(), OnWait: b.setWaiting, SkipEmpty: true})
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
	if err := push(ctx, r, branch); err != nil {
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
		return fmt.Errorf("origin did not answer within %v; %s was stopped: %w", ShareNetTimeout, what, err)
	}
	return err
}

// push pushes the served branch to origin, for at most ShareNetTimeout.
func push(ctx context.Context, r *gitx.Repo, branch string) error {
	return talkToOrigin(ctx, "git push", func(ctx context.Context) error { return gitx.Push(ctx, r.Top, "origin", branch) })
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

// rebase replays the served branch's commits onto upstream, in the
// work tree, under kk's writer lock (no job writes meanwhile), marked in
// .state/ while it runs.
func (b *Backend) rebase(ctx context.Context, r *gitx.Repo, upstream string) error {
	marker := filepath.Join(b.k.StateDir(), rebaseMarker)
	meta := txn.Meta{Actor: "kk serve", Source: "http", Command: "kk serve (rebase onto " + upstream + ")"}
	_, err := txn.Update(ctx, b.k, meta, func(tx *txn.Tx) error {
		return tx.Outside(func() error {
			if err := atomicfile.Write(marker, []byte(upstream+"\n"), 0o644); err != nil {
				return err
			}
			err := gitx.Rebase(ctx, r.Top, upstream, "theirs")
			r.ForgetTip()
			if rerr := os.Remove(marker); err == nil && rerr != nil {
				err = rerr
			}
			return err
		})
	})
	if err != nil {
		return fmt.Errorf("rebasing onto %s: %w", upstream, err)
	}
	return nil
}

// abortLeftRebase aborts a --push-every rebase a killed server left in
// the work tree (its marker in .state/ and git's rebase state both
// there), before the repository is opened: HEAD is detached meanwhile.
func (b *Backend) abortLeftRebase(ctx context.Context) {
	marker := filepath.Join(b.k.StateDir(), rebaseMarker)
	if _, err := os.Stat(marker); err != nil {
		return
	}
	out, err := gitx.Read(ctx, b.k.Root, "rev-parse", "--absolute-git-dir")
	if err != nil {
		return
	}
	if gitx.RebaseInProgress(strings.TrimSpace(string(out))) {
		if err := gitx.AbortRebase(ctx, b.k.Root); err != nil {
			b.log.Warn("aborting the rebase a killed kk serve left failed; run git rebase --abort", "error", err)
			return
		}
		b.log.Warn("aborted the rebase a killed kk serve left")
	}
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
