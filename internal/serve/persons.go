package serve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/txn"
)

// guard records, once a job's transaction knows what it changes and
// before it touches anything (txn.Tx.BeforeApply, under the writer's
// lock), what each note it is about to rewrite or remove holds: the
// edited or deleted note, and for a post, the notes the model's
// refactors move and those whose links follow them. The job's commit
// refuses to carry a note whose bytes were not the branch's
// (personsChanges).
//
// A note that is not as the branch holds it (a person's edit not
// committed, a note never committed) is left as it is: nothing is
// written. A deletion of it, or an edit of its content, fails
// (checkChange), naming the note and what to do (a metadata-only edit,
// which keeps the person's lines in the file, fails at its commit); a post's refactors, the model's and not the
// client's request, end the transaction with a refactorError, and the
// post is placed without them, its note saying why (checkRefactors:
// never failed, a model's move is no reason to lose a post). The branch
// is taken as it will be once the commit in flight (the job before,
// overlapped with this one) lands: a note that job wrote is kk's.
//
// Checked before the write, not only at the commit: a job that wrote
// over the person's lines and was then undone lost them when the person
// had written to the note meanwhile (echo … >> note), the undo leaving
// the file as they left it.
func (b *Backend) guard(tx *txn.Tx, befores *[]leafBefore, check guardCheck) {
	tx.BeforeApply(func(paths []string) error {
		*befores = (*befores)[:0]
		for _, rel := range paths {
			if !isLeafRel(rel) {
				continue
			}
			data, err := os.ReadFile(filepath.Join(b.k.Dir, filepath.FromSlash(rel)))
			if errors.Is(err, fs.ErrNotExist) {
				continue // a note the job makes
			}
			if err != nil {
				return err
			}
			*befores = append(*befores, leafBefore{rel: rel, data: data})
		}
		if check == checkNone {
			return nil
		}
		for _, before := range *befores {
			err := b.branchHolds(tx.Context(), before)
			var gerr *gitReadError
			switch {
			case err == nil:
			case errors.As(err, &gerr):
				// git could not answer (it refuses the repository, a
				// damaged one, a stop): nothing is known of the person's
				// work, and the job is not failed for it.
				return gerr.err
			case check == checkRefactors:
				return &refactorError{fmt.Errorf("%w: moving it, or rewriting its links, would commit the person's work as kk serve's", err)}
			default:
				_, prefix := b.prefixNow()
				return fmt.Errorf("%w: kk serve would commit them as its own work, or lose them; commit them (or discard them: git checkout -- %s), then send the request again", err, repoPath(prefix, before.rel))
			}
		}
		return nil
	})
}

// What guard checks before a job writes.
type guardCheck int

const (
	checkNone      guardCheck = iota // a post without refactors (a new note), a metadata-only edit (checked at its commit)
	checkRefactors                   // a post whose refactors move notes: they are left out
	checkChange                      // a deletion, an edit of the content: the job fails
)

// branchHolds returns nil when before's bytes are what the served branch
// holds at its path once the commit in flight lands, and otherwise an
// error that says what of it is the person's. A file git converts on its
// way in is compared as git would store it.
func (b *Backend) branchHolds(ctx context.Context, before leafBefore) error {
	r, err := b.gitRepo()
	if err != nil {
		return err
	}
	b.mu.Lock()
	inflight := b.inflight
	b.mu.Unlock()
	if inflight != nil {
		if data, ok := inflight.Data[before.rel]; ok {
			if bytes.Equal(data, before.data) {
				return nil
			}
			return errors.New(personsNote(before.rel, true, r.Branch))
		}
		if slices.Contains(inflight.Removed, before.rel) {
			return errors.New(personsNote(before.rel, false, r.Branch))
		}
	}
	has, same, err := b.tipHolds(ctx, r, before.rel, before.data)
	switch {
	case err != nil:
		return &gitReadError{err}
	case !has:
		return errors.New(personsNote(before.rel, false, r.Branch))
	case !same:
		return errors.New(personsNote(before.rel, true, r.Branch))
	}
	return nil
}

// tipHolds reports whether the served branch's tip has a file at rel
// (relative to .ai/kenkeep), and whether it holds data there (nil data:
// only whether it has the file). A file git converts on its way in is
// compared as git would store it. err is git's failure.
func (b *Backend) tipHolds(ctx context.Context, r *gitx.Repo, rel string, data []byte) (has, same bool, err error) {
	_, prefix := b.prefixNow()
	repo := repoPath(prefix, rel)
	at, has, err := revParse(ctx, r.Top, "refs/heads/"+r.Branch+":"+repo)
	if err != nil || !has {
		return false, false, err
	}
	if data == nil {
		return true, false, nil
	}
	blob, err := gitx.RunWith(ctx, r.Top, nil, data, "hash-object", "--path="+repo, "--stdin")
	if err != nil {
		return true, false, err
	}
	return true, at == strings.TrimSpace(string(blob)), nil
}

// revParse returns the id of the object git names name (a ref, or
// "<commit>:<path>"), and false when there is none: git rev-parse
// --verify -q says nothing and exits 1 then. Any other failure (git
// refusing the repository, a damaged one, a killed git, a stop) is err,
// never an answer.
func revParse(ctx context.Context, top, name string) (id string, ok bool, err error) {
	out, err := gitx.Read(ctx, top, "rev-parse", "--verify", "-q", name)
	switch {
	case err != nil && strings.HasSuffix(err.Error(), ": exit status 1"):
		return "", false, nil
	case err != nil:
		return "", false, err
	}
	return strings.TrimSpace(string(out)), true, nil
}

// gitReadError is a git command of branchHolds that failed (not a path
// the branch lacks): git refusing the repository, a damaged one, a stop.
type gitReadError struct{ err error }

func (e *gitReadError) Error() string { return e.err.Error() }
func (e *gitReadError) Unwrap() error { return e.err }

// flight records res as the transaction of job id, whose commit is in
// flight, and returns what clears it once the commit ends. A job put
// back before its commit ran (the commit before it failed: the worker
// undoes it and runs it again) is cleared by its Restore (grounded).
func (b *Backend) flight(id string, res *txn.Result) func() {
	b.mu.Lock()
	b.inflight, b.inflightJob = res, id
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		if b.inflight == res {
			b.inflight, b.inflightJob = nil, ""
		}
		b.mu.Unlock()
	}
}

// grounded clears job id's transaction from the commit in flight, if it
// is there: the job's files are put back, and its commit will not run.
// Left there, the job's bytes were taken for what the branch would hold,
// and the job, run again on the branch's own, failed on a person's edit
// no one made.
func (b *Backend) grounded(id string) {
	b.mu.Lock()
	if b.inflightJob == id {
		b.inflight, b.inflightJob = nil, ""
	}
	b.mu.Unlock()
}
