package serve

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/curate"
	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/jobqueue"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/service"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Front matter keys kk serve records on the notes it stores.
const (
	keyCreatedAt = "kk_created_at"
	keyUpdatedAt = "kk_updated_at"
	keyCreatedBy = "kk_created_by_task"
)

// git returns the work tree's root and the knowledge base's folder
// relative to it ("" when they are the same), opening the repository
// when the backend was not opened.
func (b *Backend) git(context.Context) (top, prefix string, err error) {
	if _, err := b.gitRepo(); err != nil {
		return "", "", err
	}
	top, prefix = b.prefixNow()
	return top, prefix, nil
}

// repoPath turns a path relative to .ai/kenkeep into one relative to the
// work tree's root.
func repoPath(prefix, rel string) string { return prefix + store.DirName + "/" + rel }

// Apply does one job: one transaction that writes (or removes) the note
// and regenerates the index files, then, in the same critical section,
// one commit "<op>(<job id>): <path>" of exactly the files the transaction
// changed. The note's path is announced (job.Touch) before anything is
// written, and every changed file before the commit, so that recovery can
// put them back after a crash.
func (b *Backend) Apply(ctx context.Context, j *service.Job) (_ string, err error) {
	defer b.changed()
	ctx, interrupted, release := b.untilStop(ctx)
	defer release()
	defer func() { err = interrupted(err) }()
	b.watchGaveUp()
	if _, _, err := b.git(ctx); err != nil {
		return "", b.gitConfigUnreadable(ctx, err)
	}
	var p string
	switch j.Op {
	case service.OpStore:
		p, err = b.store(ctx, j)
	case service.OpEdit, service.OpDelete:
		p, err = b.change(ctx, j)
	default:
		return "", fmt.Errorf("unknown operation %q", j.Op)
	}
	return p, b.unconfigured(b.unwritable(b.gitConfigUnreadable(ctx, untrusted(b.indexRebuilt(err)))))
}

// indexRebuilt marks a job's failure on a damaged branch index as the
// environment's (jobqueue.ErrHeld) once the index is dropped to be built
// again from the tree (dropDamagedIndex): the job runs again at once.
func (b *Backend) indexRebuilt(err error) error {
	if err == nil || errors.Is(err, jobqueue.ErrHeld) || errors.Is(err, jobqueue.ErrInterrupted) {
		return err
	}
	// Only the branch index's own damage (its path named): another
	// database's would not be repaired by building the index again.
	branch, berr := index.CurrentBranch(context.Background(), b.k)
	if berr != nil || !strings.Contains(err.Error(), index.Path(b.k, branch)) || !b.dropDamagedIndex(err) {
		return err
	}
	return fmt.Errorf("%w: the branch index was damaged and is built again from the tree; the job runs again (%v)", jobqueue.ErrHeld, err)
}

// unconfigured marks a job's failure while the knowledge base's
// config.yaml cannot be read (a person's edit saved half-done, a typo, a
// colleague's commit pulled) as the environment's (jobqueue.ErrHeld: the
// job is put back and waits, /healthz naming the file and its problem):
// every job reads it, and each would fail in turn, losing every post
// accepted meanwhile. Once it is fixed, the jobs run. The file is read
// only when a job failed.
func (b *Backend) unconfigured(err error) error {
	if err == nil || errors.Is(err, jobqueue.ErrHeld) || errors.Is(err, jobqueue.ErrInterrupted) {
		return err
	}
	// The job's own read of the file failed: held, even when the person
	// fixed the file since (read again now, it would be good, and the
	// job failed for good with the config's error).
	if ce, ok := errors.AsType[*store.ConfigError](err); ok {
		return fmt.Errorf("%w: %v; the jobs wait until it is fixed", jobqueue.ErrHeld, ce)
	}
	if _, cerr := b.k.LoadConfig(); cerr != nil {
		if strings.Contains(err.Error(), cerr.Error()) {
			return fmt.Errorf("%w: %v; the jobs wait until it is fixed", jobqueue.ErrHeld, cerr)
		}
		return fmt.Errorf("%w: %v; the jobs wait until it is fixed (%v)", jobqueue.ErrHeld, cerr, err)
	}
	return err
}

// unwritable marks a job's failure to write that is the machine's, not
// the job's, as the environment's (jobqueue.ErrHeld: the job is put back
// and waits, /healthz saying why, as for a held lock): the disk full,
// the user's disk quota spent, a file-size limit reached, a disk I/O
// error of the branch index, a read-only file system, or kk's own
// .state/ folder (the transaction's journal, the branch index) not
// writable. Each would fail every job in turn, losing every post
// accepted meanwhile; once the writes can land, the jobs run. So is a
// file another program saved while the job wrote it (txn's
// ErrChangedMeanwhile): the job runs again, and sees the save. A
// permission refused elsewhere (a folder of notes made read-only) is that
// job's, and fails it alone.
func (b *Backend) unwritable(err error) error {
	if err == nil || errors.Is(err, jobqueue.ErrHeld) || errors.Is(err, jobqueue.ErrInterrupted) {
		return err
	}
	var why string
	var pe *fs.PathError
	var se *sqlite.Error
	switch {
	case errors.Is(err, syscall.ENOSPC), errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_FULL:
		// (SQLite, the branch index, reports a full disk as SQLITE_FULL.)
		why = "the disk is full (no space left on device); free space on the server's disk"
	case errors.Is(err, syscall.EFBIG):
		why = "a file would pass kk serve's file-size limit (ulimit -f, systemd's LimitFSIZE); raise it"
	case errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_IOERR:
		// (SQLite reports a write past the file-size limit, and a
		// failing disk, as a disk I/O error.)
		why = "the branch index could not be written (a disk I/O error); check the disk, its free space and kk serve's file-size limit (ulimit -f)"
	case errors.Is(err, syscall.EDQUOT):
		why = "kk serve's user has spent its disk quota; free space or raise the quota"
	case errors.Is(err, syscall.EROFS):
		why = "the file system is read-only; make it writable"
	case errors.Is(err, txn.ErrChangedMeanwhile):
		// Another program (a person's editor) saved a file the job was
		// writing at that very moment: nothing was written, and the job
		// runs again, seeing the save.
		why = "another program wrote a file of the job at the same moment; nothing was written, and the job runs again"
	case errors.Is(err, fs.ErrPermission) && errors.As(err, &pe) && within(b.k.StateDir(), pe.Path):
		why = "kk's state folder " + b.k.StateDir() + " cannot be written (permission denied); make it writable by kk serve's user"
	case errors.Is(err, fs.ErrPermission) && b.everyJobWrites(err) != "":
		// ENTRY.md and GRAPH.md (and the temporary files they are
		// written through, in the same folder) are written by every
		// job: made read-only or immutable, or another user's.
		why = b.everyJobWrites(err) + " cannot be written (permission denied); every job writes it: make it and its folder " + b.k.Dir + " writable by kk serve's user"
	default:
		return err
	}
	return fmt.Errorf("%w: %s: the job waits and runs once its files can be written (%v)", jobqueue.ErrHeld, why, err)
}

// everyJobWrites returns the file a permission error names when every
// job writes it: one directly in .ai/kenkeep (ENTRY.md, GRAPH.md, the
// temporary files they are written through) or the folder itself, ""
// for any other (a note's folder: that job's alone).
func (b *Backend) everyJobWrites(err error) string {
	var paths []string
	var pe *fs.PathError
	var le *os.LinkError
	if errors.As(err, &pe) {
		paths = append(paths, pe.Path)
	}
	if errors.As(err, &le) {
		paths = append(paths, le.New, le.Old)
	}
	for _, p := range paths {
		if p == b.k.Dir || filepath.Dir(p) == b.k.Dir {
			if le != nil && p == le.Old {
				return le.New
			}
			return writtenThrough(p)
		}
	}
	return ""
}

// writtenThrough is the file a temporary file of kk's writes is written
// through (".ENTRY.md.tmp-123" -> "ENTRY.md", in the same folder), else
// path itself.
func writtenThrough(path string) string {
	base := filepath.Base(path)
	if i := strings.LastIndex(base, ".tmp-"); strings.HasPrefix(base, ".") && i > 1 {
		if _, err := strconv.ParseUint(base[i+len(".tmp-"):], 10, 64); err == nil {
			return filepath.Join(filepath.Dir(path), base[1:i])
		}
	}
	return path
}

// gitUnwritable marks a commit's failure for want of permission as the
// environment's (jobqueue.ErrHeld), as unwritable does for kk's .state/
// folder: a commit writes only into the git folder (objects, the index,
// refs), so a permission refused there (.git or its objects made
// read-only, or owned by another user) would fail every job in turn.
func gitUnwritable(gitDir string, err error) error {
	if err == nil || errors.Is(err, jobqueue.ErrHeld) || errors.Is(err, jobqueue.ErrInterrupted) || !errors.Is(err, fs.ErrPermission) {
		return err
	}
	return fmt.Errorf("%w: the git folder %s cannot be written (permission denied); make it writable by kk serve's user: the job waits and runs once it can commit (%v)", jobqueue.ErrHeld, gitDir, err)
}

// within reports whether path is dir or under it.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func (b *Backend) addTiming(d *time.Duration, add time.Duration) {
	b.mu.Lock()
	*d += add
	b.mu.Unlock()
}

// pause is the crash test's delay.
func (b *Backend) pause() {
	if b.delay > 0 {
		time.Sleep(b.delay)
	}
}

func (b *Backend) meta(j *service.Job) txn.Meta {
	return txn.Meta{Actor: "kk serve", Source: "http", Command: "kk serve " + j.Op + "(" + j.ID + ")"}
}

// store places a posted note and writes it.
func (b *Backend) store(ctx context.Context, j *service.Job) (string, error) {
	req := j.Request
	body := noteBody(req.Content)
	if strings.TrimSpace(body) == "" {
		return "", errors.New("content must not be empty")
	}
	t0 := time.Now()
	p, err := b.placeUntilStop(ctx, req, body)
	if err != nil {
		return "", err
	}
	b.addTiming(&b.timing.place, time.Since(t0))
	b.pause()
	var leaf string
	t1 := time.Now()
	defer func() { b.addTiming(&b.timing.write, time.Since(t1)) }()
	write := func(tx *txn.Tx) error {
		b.prepare(tx, j)
		var befores []leafBefore
		refactors := len(p.Refactors) > 0
		check := checkNone
		if refactors {
			check = checkRefactors
		}
		b.guard(tx, &befores, check)
		id, err := node.DeriveID(p.Type, p.Title)
		if err != nil {
			// A title with no ASCII spelling (日本語) names no id: the
			// note is named after its job instead of being refused.
			if id, err = node.DeriveID(p.Type, "note "+shortJobID(j.ID)); err != nil {
				return err
			}
		}
		id = capID(id)
		if id, err = freeID(tx, id, j.ID); err != nil {
			return err
		}
		in := contracts.NodeInput{Type: p.Type, Slug: id, Title: p.Title, Description: p.Description, Tags: cleanTags(p.Tags), Phrasings: p.Phrasings, Folder: p.Folder, Body: body}
		b.announce(tx, j)
		// The model's refactors move notes in this transaction, before
		// the note is written: one commit holds them all.
		if err := b.refactor(tx, j, &p); err != nil {
			return err
		}
		_, n, err := curate.WriteInTx(tx, in, curate.WriteOptions{Mode: curate.Create})
		if err != nil {
			return err
		}
		leaf = n.Path
		// In a fixed order: a map's would give the front matter a
		// different key order from one post to the next.
		for _, kv := range [...][2]string{{keyCreatedAt, j.Created.UTC().Format(time.RFC3339)}, {keyUpdatedAt, tx.Timestamp()}, {keyCreatedBy, j.ID}} {
			if err := n.SetExtra(kv[0], kv[1]); err != nil {
				return err
			}
		}
		if err := setBodyEnd(n, body); err != nil {
			return err
		}
		tx.AfterCommit(func(res *txn.Result) error { return b.commit(ctx, j, leaf, res, befores, refactors) })
		return nil
	}
	_, err = txn.Update(ctx, b.k, b.meta(j), write)
	if re := (*refactorError)(nil); errors.As(err, &re) {
		b.dropRefactors(&p, re.err)
		_, err = txn.Update(ctx, b.k, b.meta(j), write)
	}
	if err != nil {
		return "", heldError(err)
	}
	return leaf, nil
}

// stopGrace is how long a placement (the model's call) may go on once
// the server stops: a model about to answer still places the note.
const stopGrace = 10 * time.Second

// placeUntilStop is place, ended stopGrace after the server's stop: a
// model that never answers (a stuck server or proxy) held the stop for
// as long as the provider's tries lasted, minutes. Nothing is written
// yet: the job is left to the next start (jobqueue.ErrInterrupted).
func (b *Backend) placeUntilStop(ctx context.Context, req service.JobRequest, body string) (placement, error) {
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := b.stopCtx()
	var grace *time.Timer
	unhook := context.AfterFunc(stop, func() {
		b.mu.Lock()
		grace = time.AfterFunc(stopGrace, cancel)
		b.mu.Unlock()
	})
	defer func() {
		unhook()
		b.mu.Lock()
		if grace != nil {
			grace.Stop()
		}
		b.mu.Unlock()
	}()
	p, err := b.place(pctx, req, body)
	if err != nil && stop.Err() != nil && pctx.Err() != nil {
		return placement{}, fmt.Errorf("%w: the note was being placed (%v)", jobqueue.ErrInterrupted, err)
	}
	return p, err
}

// prepare sets up a job's transaction: a leaf that cannot be read, which
// the transaction skips, is logged (once per problem), and what each file
// held before is kept until the job's commit lands, so that an undo puts
// back exactly that.
func (b *Backend) prepare(tx *txn.Tx, j *service.Job) {
	tx.KeepOriginals(j.ID)
	tx.AfterCommit(func(*txn.Result) error {
		b.warnSkipped(tx.Skipped())
		return nil
	})
}

// warnSkipped logs each leaf a job's transaction could not read, once per
// problem as long as it lasts.
func (b *Backend) warnSkipped(problems []error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := map[string]bool{}
	for _, p := range problems {
		msg := p.Error()
		now[msg] = true
		if !b.warned[msg] {
			b.log.Warn("a leaf kk cannot read is skipped; fix it (kk lint names every problem)", "problem", msg)
		}
	}
	b.warned = now
}

// prefixNow returns the work tree root and prefix found by git.
func (b *Backend) prefixNow() (string, string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.top, b.prefix
}

// freeID returns id, or the first of id-2 … id-4 that no leaf has, or else
// id followed by the start of the job's id.
func freeID(tx *txn.Tx, id, jobID string) (string, error) {
	taken := func(s string) bool { _, ok := tx.Resolve(s); return ok }
	if free, err := node.UniqueID(taken, id); err == nil {
		return free, nil
	}
	id = id + "-" + shortJobID(jobID)
	if taken(id) {
		return "", fmt.Errorf("id %s is taken", id)
	}
	return id, nil
}

// maxDerivedID bounds the id kk serve derives from a title: room is
// left for freeID's suffix ("-<12 hex digits>") under node.MaxIDLen, and
// the file name (<id>.md, and the transaction's ".<id>.md.tmp-<n>")
// stays well under the 255 bytes a file system takes.
const maxDerivedID = node.MaxIDLen - 28

// capID cuts an id derived from a long title to maxDerivedID characters,
// at a word's end when there is one (a title of up to 255 characters is
// taken: the note keeps it whole).
func capID(id string) string {
	if len(id) <= maxDerivedID {
		return id
	}
	cut := id[:maxDerivedID]
	if i := strings.LastIndexByte(cut, '-'); i > maxDerivedID/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, "-")
}

// shortJobID is the last 12 hex digits of a job id: the random part of a
// UUIDv7.
func shortJobID(jobID string) string {
	short := strings.ToLower(strings.ReplaceAll(jobID, "-", ""))
	if len(short) > 12 {
		short = short[len(short)-12:]
	}
	return short
}

// cleanTags trims tags and drops blank and repeated ones (compared
// without regard to case), keeping their order.
func cleanTags(tags []string) []string {
	out := []string{}
	seen := map[string]bool{}
	for _, t := range tags {
		t = strings.TrimSpace(t)
		if t == "" || seen[strings.ToLower(t)] {
			continue
		}
		seen[strings.ToLower(t)] = true
		out = append(out, t)
	}
	return out
}

// notFound is a job's failure for a note that is not there, in
// knowledged's words.
func notFound(p string) error { return fmt.Errorf("file not found: %s", p) }

// change edits or deletes the note at the job's path.
func (b *Backend) change(ctx context.Context, j *service.Job) (string, error) {
	req := j.Request
	b.pause()
	_, err := txn.Update(ctx, b.k, b.meta(j), func(tx *txn.Tx) error {
		b.prepare(tx, j)
		n, err := tx.LeafAt(req.Path)
		if err != nil {
			var ne *node.Error
			if errors.As(err, &ne) {
				return fmt.Errorf("%s is not a note kk can change: %w", req.Path, err)
			}
			return err
		}
		if n == nil {
			return notFound(req.Path)
		}
		// What the leaf holds before the job: its commit must find it
		// the branch's (see personsChanges).
		var befores []leafBefore
		// A deletion, or an edit of the content, would take the
		// person's lines out of the file: it is refused before it writes
		// (guard). A metadata-only edit keeps them in the body, and is
		// refused at its commit.
		check := checkNone
		if j.Op == service.OpDelete || strings.TrimSpace(req.Content) != "" {
			check = checkChange
		}
		b.guard(tx, &befores, check)
		b.announce(tx, j)
		if j.Op == service.OpDelete {
			if err := tx.Remove(n); err != nil {
				return err
			}
		} else {
			if strings.TrimSpace(req.Content) != "" {
				n.Body = []byte(noteBody(req.Content))
				if err := setBodyEnd(n, string(n.Body)); err != nil {
					return err
				}
			}
			if req.Title != "" {
				n.Title = req.Title
			}
			if req.Description != "" {
				n.Description = req.Description
			}
			if len(req.Tags) > 0 {
				n.Tags = cleanTags(req.Tags)
			}
			tx.Put(n)
		}
		tx.AfterCommit(func(res *txn.Result) error {
			return b.commit(ctx, j, req.Path, res, befores, false)
		})
		return nil
	})
	if err != nil {
		return "", heldError(err)
	}
	return req.Path, nil
}

// announce records, in the job's record on disk, every path the
// transaction is about to write or remove (the note, any moves, the
// regenerated index files), before the first is touched. (What each held
// before is kept by the transaction itself: Tx.KeepOriginals.)
func (b *Backend) announce(tx *txn.Tx, j *service.Job) {
	tx.BeforeApply(func(paths []string) error {
		_, prefix := b.prefixNow()
		repo := make([]string, len(paths))
		for i, rel := range paths {
			repo[i] = repoPath(prefix, rel)
		}
		return j.Touch(repo...)
	})
}

// commit makes the job's one commit (gitx.Repo.Commit): the files the
// transaction wrote and removed, with the contents it wrote, and the
// generated index files of the commit's leaves (see plan). It is the
// job's deferred last step (service.Job.Defer): it runs while the next
// job is placed and written, and the job is done when it lands. Its
// waits for locks other git processes hold end with the server's stop,
// leaving the job to the next start.
//
// befores are what the notes the job rewrites or removes held before it
// (guard): the commit fails (the job's files put back) when the branch
// does not hold them (personsChanges); for a post whose refactors moved
// notes, it is held and runs again.
func (b *Backend) commit(ctx context.Context, j *service.Job, leaf string, res *txn.Result, befores []leafBefore, refactors bool) error {
	r, err := b.gitRepo()
	if err != nil {
		return err
	}
	subject := gitx.JobSubject(j.Op, j.ID, leaf)
	if note := j.Noted(); note != "" {
		subject += "\n\n" + note // the subject stays the first line, which recovery reads
	}
	landedOrFailed := b.flight(j.ID, res)
	return j.Defer(ctx, func(ctx context.Context) (err error) {
		defer landedOrFailed()
		defer b.changed()
		ctx, interrupted, release := b.untilStop(ctx)
		defer release()
		defer func() { err = interrupted(err) }()
		b.pause()
		t0 := time.Now()
		p := b.planner(ctx, r, res)
		p.befores, p.refactors = befores, refactors
		landed, err := r.Commit(ctx, gitx.CommitOptions{Author: b.author, Message: subject, Plan: p.plan, Scope: p.scope(), Wait: b.stopCtx(), OnWait: b.setWaiting})
		b.waitEnded()
		if err != nil {
			// git that could not write (the disk full, a read-only file
			// system, .git not writable) holds the job as kk's own
			// writes do.
			// A person's reference-transaction hook that refused the
			// branch's move is named.
			// Any other failure of git partway is tried again, a bounded
			// number of times.
			return gitFailure(b.unconfigured(b.unwritable(gitUnwritable(r.GitDir, b.gitConfigUnreadable(ctx, indexDamaged(ctx, r, untrusted(filterFailed(hookRefused(r, commitError(err))))))))))
		}
		// The commit stands from here on: whatever fails is logged.
		b.landed(p, landed)
		if err := txn.DropOriginals(b.k, j.ID); err != nil {
			b.log.Warn("dropping the originals kept for the job failed", "job_id", j.ID, "error", err)
		}
		if landed.IndexErr != nil {
			b.log.Warn("the commit landed but git's index was not put in place; bringing it in step", "job_id", j.ID, "error", landed.IndexErr)
			if err := gitx.ResetIndexToHead(ctx, r.Top, landed.Commit); err != nil {
				b.log.Warn("git's index is behind the job's commit; git status shows its files changed until git reset", "error", err)
			}
		}
		b.addTiming(&b.timing.commit, time.Since(t0))
		b.maintain(r.Top)
		b.pause()
		return nil
	})
}

// maintain starts git gc --auto every Options.MaintainEvery commits (see
// there), beside the queue rather than in the job whose commit made it
// due: git runs a person's pre-auto-gc hook in its foreground, and a hook
// that takes its time (or never ends: one that waits for a device or asks
// a question) must hold neither that job nor the ones behind it. One run
// at a time: a commit that falls due while one runs leaves the count due,
// so the next commit after it ends starts the next. A run lasts at most
// Options.MaintainLimit and ends with the server (Close), git and its hook
// with it. Its failure is logged, never a job's: the commit has landed.
func (b *Backend) maintain(top string) {
	b.mu.Lock()
	b.commits++
	due := b.maintainEvery > 0 && b.commits >= b.maintainEvery
	busy := due && b.maintaining != (time.Time{})
	since := b.maintaining
	warn := busy && b.commits%b.maintainEvery == 0 // not at every commit
	if due && !busy {
		b.commits = 0
		b.maintaining = time.Now()
		b.maint.Add(1)
	}
	ctx := b.maintCtx
	b.mu.Unlock()
	if busy {
		if warn {
			b.log.Warn("git gc --auto has not ended; its next run waits for it (a pre-auto-gc hook of the repository may be waiting)", "running_since", since.Format(time.RFC3339), "limit", b.maintainLimit.String())
		}
		return
	}
	if !due {
		return
	}
	if ctx == nil {
		ctx = context.Background()
	}
	go func() {
		defer b.maint.Done()
		ctx, cancel := context.WithTimeout(ctx, b.maintainLimit)
		defer cancel()
		if _, err := gitx.Run(ctx, top, "gc", "--auto", "--quiet"); err != nil {
			b.log.Warn("git gc --auto failed; the next attempt is in a while", "every_commits", b.maintainEvery, "error", err)
		}
		b.mu.Lock()
		b.maintaining = time.Time{}
		b.mu.Unlock()
	}()
}

// Committed reports whether the commit of job id is in the served
// branch's history, and the path it names: jobqueue.Options.Committed.
func (b *Backend) Committed(ctx context.Context, id string) (string, bool, error) {
	r, err := b.gitRepo()
	if err != nil {
		return "", false, err
	}
	c, ok, err := gitx.FindJobCommitIn(ctx, r.Top, "refs/heads/"+r.Branch, id, b.author)
	return c.Path, ok, err
}

// Restore puts back what an unfinished or failed job left: every file
// its transaction changed gets back the bytes it held before the job
// (kept by the transaction until the commit: a person's uncommitted edit
// comes back as it was), in one transaction that also generates the
// index files again. A job whose transaction never committed left
// nothing (its journal is rolled back by the next transaction).
// jobqueue.Options.Restore.
//
// An edit or a deletion whose change a person committed meanwhile (a git
// commit -a between the job's write and its commit, or while kk serve was
// down after a kill) is not undone: its note is as the served branch
// holds it, and putting back the bytes from before the job would leave an
// uncommitted change reverting the person's commit (which their next
// commit -a would commit), on which the job, run again, would fail as on
// a person's edit. Only the index files are generated again. (Edits and
// deletions change their note and the generated files alone.) An edit
// then runs again, and commits on the person's commit; a deletion could
// not (its note is gone): Restore returns jobqueue.ErrCommittedMeanwhile,
// and the job is done.
func (b *Backend) Restore(ctx context.Context, j jobqueue.Job) error {
	defer b.changed()
	b.grounded(j.ID)
	if !txn.HasOriginals(b.k, j.ID) {
		return nil
	}
	// Asked inside the undo's transaction, after it rolled back what a
	// killed writer left: an undo killed halfway (its journal not yet
	// dropped) leaves the note holding the branch's bytes until then, and
	// asked before, the job's change was taken for a person's commit, the
	// rollback brought the job's bytes back, and the job, run again,
	// found nothing to change, the note left modified in the work tree.
	var keep bool
	_, err := txn.Update(ctx, b.k, txn.Meta{Actor: "kk serve", Source: "http", Command: "kk serve restore(" + j.ID + ")"}, func(tx *txn.Tx) error {
		var err error
		keep, err = b.committedByAPerson(ctx, j)
		if err != nil {
			// git cannot tell (it cannot read the repository now): the
			// job's files are put back, as before the branch was asked.
			b.log.Warn("could not ask git whether the job's change was committed meanwhile; its files are put back", "job_id", j.ID, "error", err)
			keep = false
		}
		if keep {
			b.log.Info("the job's change was committed by another commit meanwhile; its note is left as the branch holds it", "job_id", j.ID, "path", j.Path)
			tx.Regenerate()
			return nil
		}
		_, err = tx.RestoreOriginals(j.ID)
		return err
	})
	if err == nil && keep {
		err = txn.DropOriginals(b.k, j.ID)
	}
	if err == nil && keep && j.Op == service.OpDelete && noteGone(b.k.NodePath(j.Path)) {
		// Run again, the deletion would fail on the note the person's
		// commit removed: the branch holds all it was asked for. (A
		// note the person put back, as the branch holds it, is kept
		// too, but the deletion is in no commit: it runs again.)
		return fmt.Errorf("%w: the deletion of %s is in the branch", jobqueue.ErrCommittedMeanwhile, j.Path)
	}
	if err != nil {
		err = b.unconfigured(b.unwritable(heldError(fmt.Errorf("restoring the files of job %s: %w", j.ID, err))))
		if !errors.Is(err, jobqueue.ErrHeld) {
			// The job fails for good, its files as it left them: what was
			// kept to undo it is of no more use.
			_ = txn.DropOriginals(b.k, j.ID)
		}
		return err
	}
	return nil
}

// noteGone reports whether no file is at path.
func noteGone(path string) bool {
	_, err := os.Lstat(path)
	return errors.Is(err, fs.ErrNotExist)
}

// committedByAPerson reports whether j, an edit or a deletion, changed a
// note that the served branch's tip now holds as the work tree does (the
// same bytes, or both without it) when it did not before the job: the
// job's change was committed by another commit than kk serve's.
func (b *Backend) committedByAPerson(ctx context.Context, j jobqueue.Job) (bool, error) {
	if (j.Op != service.OpEdit && j.Op != service.OpDelete) || j.Path == "" {
		return false, nil
	}
	rel := "nodes/" + j.Path
	if !isLeafRel(rel) {
		return false, nil
	}
	data, err := os.ReadFile(b.k.NodePath(j.Path))
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	r, err := b.gitRepo()
	if err != nil {
		return false, err
	}
	has, same, err := b.tipHolds(ctx, r, rel, data)
	if err != nil {
		return false, err
	}
	if !exists {
		return !has, nil // the deletion committed
	}
	return same, nil
}

// Settle brings what a job whose commit was made before the server
// stopped left behind in step with it: the originals kept for its undo
// go, and git's index gets the commit's entries (a kill between the move
// of the branch and the index put in place leaves them as they were).
// jobqueue.Options.Settle.
func (b *Backend) Settle(ctx context.Context, j jobqueue.Job) error {
	r, err := b.gitRepo()
	if err != nil {
		return err
	}
	c, ok, err := gitx.FindJobCommitIn(ctx, r.Top, "refs/heads/"+r.Branch, j.ID, b.author)
	if err != nil || !ok {
		return err
	}
	if ok, _ := r.OnBranch(ctx); ok {
		if err := gitx.ResetIndexToHead(ctx, r.Top, c.Hash); err != nil {
			return fmt.Errorf("%w: %v", jobqueue.ErrHeld, err)
		}
	}
	return txn.DropOriginals(b.k, j.ID)
}

// QueueOptions wires a job queue to the backend: recovery asks git for a
// job's commit, settles a committed job, and restores an unfinished one;
// the worker takes no job while the environment holds it (Ready), and
// says what a job waits for (Waiting).
func (b *Backend) QueueOptions() jobqueue.Options {
	return jobqueue.Options{Committed: b.Committed, Restore: b.Restore, Settle: b.Settle, Ready: b.Ready, Waiting: b.Waiting, MaxRetries: gitTries, Logger: b.log}
}
