package serve

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/curate"
	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/jobqueue"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/service"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// Front matter keys kk serve records on the notes it stores.
const (
	keyCreatedAt = "kk_created_at"
	keyUpdatedAt = "kk_updated_at"
	keyCreatedBy = "kk_created_by_task"
)

// git returns the work tree's root and the knowledge base's folder
// relative to it ("" when they are the same), found once.
func (b *Backend) git(ctx context.Context) (top, prefix string, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.top == "" {
		t, err := gitx.TopLevel(ctx, b.k.Root)
		if err != nil {
			return "", "", fmt.Errorf("kk serve needs its root in a git work tree: %w", err)
		}
		b.top = t
		if rel := store.RelTo(t, b.k.Root); rel != "." {
			b.prefix = rel + "/"
		}
		b.snapshots = gitx.CanCommitSnapshot(ctx, t)
	}
	return b.top, b.prefix, nil
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
func (b *Backend) Apply(ctx context.Context, j *service.Job) (string, error) {
	defer b.changed()
	if _, _, err := b.git(ctx); err != nil {
		return "", err
	}
	switch j.Op {
	case service.OpStore:
		return b.store(ctx, j)
	case service.OpEdit, service.OpDelete:
		return b.change(ctx, j)
	}
	return "", fmt.Errorf("unknown operation %q", j.Op)
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
	p, err := b.place(ctx, req, body)
	if err != nil {
		return "", err
	}
	b.addTiming(&b.timing.place, time.Since(t0))
	b.pause()
	var leaf string
	t1 := time.Now()
	defer func() { b.addTiming(&b.timing.write, time.Since(t1)) }()
	write := func(tx *txn.Tx) error {
		id, err := node.DeriveID(p.Type, p.Title)
		if err != nil {
			// A title with no ASCII spelling (日本語) names no id: the
			// note is named after its job instead of being refused.
			if id, err = node.DeriveID(p.Type, "note "+shortJobID(j.ID)); err != nil {
				return err
			}
		}
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
		tx.AfterCommit(func(res *txn.Result) error { return b.commit(ctx, j, leaf, res) })
		return nil
	}
	_, err = txn.Update(ctx, b.k, b.meta(j), write)
	if re := (*refactorError)(nil); errors.As(err, &re) {
		b.dropRefactors(&p, re.err)
		_, err = txn.Update(ctx, b.k, b.meta(j), write)
	}
	if err != nil {
		return "", err
	}
	return leaf, nil
}

// snapshotsOn reports whether commits are made from the transactions'
// contents.
func (b *Backend) snapshotsOn() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.snapshots
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
		tx.AfterCommit(func(res *txn.Result) error { return b.commit(ctx, j, req.Path, res) })
		return nil
	})
	if err != nil {
		return "", err
	}
	return req.Path, nil
}

// announce records, in the job's record on disk, every path the
// transaction is about to write or remove (the note, any moves, the
// regenerated index files), before the first is touched: after a crash,
// recovery restores them from HEAD unless the job's commit was made.
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

// commit makes the job's one commit: the files the transaction wrote and
// removed (the note and the regenerated index files), announced before
// they were written. Where the repository allows, the commit is made
// from the contents the transaction wrote and is the job's deferred last
// step (service.Job.Defer): it runs while the next job is placed and
// written, and the job is done when it lands. Otherwise it is made now,
// from the work tree.
func (b *Backend) commit(ctx context.Context, j *service.Job, leaf string, res *txn.Result) error {
	top, prefix := b.prefixNow()
	var written, removed []string
	for _, rel := range res.Written {
		written = append(written, repoPath(prefix, rel))
	}
	for _, rel := range res.Removed {
		removed = append(removed, repoPath(prefix, rel))
	}
	subject := gitx.JobSubject(j.Op, j.ID, leaf)
	if note := j.Noted(); note != "" {
		subject += "\n\n" + note // the subject stays the first line, which recovery reads
	}
	if b.snapshotsOn() {
		contents := make(map[string][]byte, len(res.Written))
		for _, rel := range res.Written {
			contents[repoPath(prefix, rel)] = res.Data[rel]
		}
		return j.Defer(ctx, func(ctx context.Context) error {
			defer b.changed()
			b.pause()
			t0 := time.Now()
			if err := gitx.CommitSnapshot(ctx, top, Author, subject, contents, removed); err != nil {
				return fmt.Errorf("committing: %w", err)
			}
			b.addTiming(&b.timing.commit, time.Since(t0))
			b.maintain(ctx, top)
			b.pause()
			return nil
		})
	}
	b.pause()
	t0 := time.Now()
	if err := gitx.CommitChanges(ctx, top, Author, subject, written, removed); err != nil {
		return fmt.Errorf("committing: %w", err)
	}
	b.addTiming(&b.timing.commit, time.Since(t0))
	b.maintain(ctx, top)
	b.pause()
	return nil
}

// maintain runs git gc --auto every MaintainEvery commits (see there). Its
// failure is logged, never the job's: the commit has landed.
func (b *Backend) maintain(ctx context.Context, top string) {
	b.mu.Lock()
	b.commits++
	due := MaintainEvery > 0 && b.commits >= MaintainEvery
	if due {
		b.commits = 0
	}
	b.mu.Unlock()
	if !due {
		return
	}
	if _, err := gitx.Run(ctx, top, "gc", "--auto", "--quiet"); err != nil {
		b.log.Warn("git gc --auto failed; the next attempt is in a while", "every_commits", MaintainEvery, "error", err)
	}
}

// Committed reports whether the commit of job id is in the branch's
// history, and the path it names: jobqueue.Options.Committed.
func (b *Backend) Committed(ctx context.Context, id string) (string, bool, error) {
	top, _, err := b.git(ctx)
	if err != nil {
		return "", false, err
	}
	c, ok, err := gitx.FindJobCommit(ctx, top, id)
	return c.Path, ok, err
}

// Restore puts back what an unfinished or failed job left: every path it
// announced gets HEAD's content again (or goes, when HEAD has none), in
// one transaction that also brings the index files in step with the tree,
// and the paths are unstaged. jobqueue.Options.Restore.
func (b *Backend) Restore(ctx context.Context, j jobqueue.Job) error {
	defer b.changed()
	top, prefix, err := b.git(ctx)
	if err != nil {
		return err
	}
	kbPrefix := prefix + store.DirName + "/"
	var mine []string
	for _, p := range j.Touched {
		if strings.HasPrefix(p, kbPrefix) {
			mine = append(mine, p)
		}
	}
	head, err := gitx.FilesAtHead(ctx, top, mine)
	if err != nil {
		return err
	}
	_, err = txn.Update(ctx, b.k, txn.Meta{Actor: "kk serve", Source: "http", Command: "kk serve restore(" + j.ID + ")"}, func(tx *txn.Tx) error {
		for _, p := range mine {
			rel := strings.TrimPrefix(p, kbPrefix)
			data, ok := head[p]
			tx.RestoreFile(rel, data, ok)
		}
		tx.Regenerate()
		return nil
	})
	if err != nil {
		return fmt.Errorf("restoring the files of job %s: %w", j.ID, err)
	}
	return gitx.RestorePaths(ctx, top, j.Touched)
}

// Settle brings git's index in step with HEAD for the paths of a job
// whose commit was made before the server stopped: the commit moves the
// branch first and updates the index after, so a kill in between leaves
// the job's files staged as deleted and untracked.
// jobqueue.Options.Settle.
func (b *Backend) Settle(ctx context.Context, j jobqueue.Job) error {
	top, _, err := b.git(ctx)
	if err != nil {
		return err
	}
	c, ok, err := gitx.FindJobCommit(ctx, top, j.ID)
	if err != nil || !ok {
		return err
	}
	return gitx.ResetIndexToHead(ctx, top, c.Hash)
}

// QueueOptions wires a job queue to the backend: recovery asks git for a
// job's commit, settles a committed job's paths in git's index, and
// restores an unfinished job's paths.
func (b *Backend) QueueOptions() jobqueue.Options {
	return jobqueue.Options{Committed: b.Committed, Restore: b.Restore, Settle: b.Settle, Logger: b.log}
}
