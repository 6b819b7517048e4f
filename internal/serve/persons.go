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
// A post's refactors are the model's, not the client's request: with
// refactors set, a note that is not as the branch holds it (a person's
// edit not committed, a note never committed) ends the transaction with
// a refactorError, and the post is placed without the refactors, its
// note saying why (never failed: a model's move is no reason to lose a
// post, and the person's note is theirs). The branch is taken as it
// will be once the commit in flight (the job before, overlapped with
// this one) lands: a note that job wrote is kk's.
func (b *Backend) guard(tx *txn.Tx, befores *[]leafBefore, refactors bool) {
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
		if !refactors {
			return nil
		}
		for _, before := range *befores {
			if err := b.branchHolds(tx.Context(), before); err != nil {
				return &refactorError{fmt.Errorf("%w: moving it, or rewriting its links, would commit the person's work as kk serve's", err)}
			}
		}
		return nil
	})
}

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
	_, prefix := b.prefixNow()
	repo := repoPath(prefix, before.rel)
	at, err := gitx.Read(ctx, r.Top, "rev-parse", "--verify", "-q", "refs/heads/"+r.Branch+":"+repo)
	if err != nil {
		return errors.New(personsNote(before.rel, false, r.Branch))
	}
	blob, err := gitx.RunWith(ctx, r.Top, nil, before.data, "hash-object", "--path="+repo, "--stdin")
	if err != nil {
		return err
	}
	if strings.TrimSpace(string(at)) != strings.TrimSpace(string(blob)) {
		return errors.New(personsNote(before.rel, true, r.Branch))
	}
	return nil
}

// flight records res as the transaction of the job whose commit is in
// flight, and returns what clears it once the commit ends.
func (b *Backend) flight(res *txn.Result) func() {
	b.mu.Lock()
	b.inflight = res
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		if b.inflight == res {
			b.inflight = nil
		}
		b.mu.Unlock()
	}
}
