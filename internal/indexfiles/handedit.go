package indexfiles

import (
	"bytes"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"time"

	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/store"
)

// A generated file a person edited by hand (a line added to ENTRY.md, to
// a folder's index.md, to GRAPH.md) holds their words: a plan that
// replaces or removes it lists it in Plan.Edited, and the writer keeps a
// copy of it and says so, so that nothing a person wrote is lost without
// a word. A file is kk's own, and not listed, when
//
//   - it is still as the branch index recorded it (the last generation,
//     by its stat or the sha256 of its bytes), or it holds the bytes the
//     record has for another file (a folder's index.md that a person's
//     git mv of the folder took with it);
//   - or else it is not of the tree before the change at all: ENTRY.md's
//     nodes_hash names other leaves (a note edited, added or deleted by
//     hand, a checkout or merge that left the files behind), or
//     FOLDER_SUMMARIES.md was modified well after ENTRY.md (a summary
//     edited by hand), so the files are stale and kk cannot render what
//     they were (even when the record is of the tree before the change:
//     git may have checked other files out since, as moving HEAD to a
//     commit made again does), and a file not as recorded (when there is
//     a record of this branch's generation) is git's or a person's: the
//     plan lists it in Plan.Unsure, and the writer asks git
//     whether a commit at hand holds it (HEAD, or the side a merge brings
//     in); one no commit holds is a person's words. Telling stale by
//     modification times alone made a person's edit, after a merge that
//     brought in FOLDER_SUMMARIES.md a few seconds after ENTRY.md was
//     written, vanish without a copy;
//   - or else it holds the text kk generates for the tree before the
//     change (store.SameText: with CRLF line endings or a byte order mark
//     it is the same text), rendered here, only the files asked about
//     (and ENTRY.md and GRAPH.md), only when a file is not as recorded.
//
// A generation brought forward from the record (delta.go) found every
// file as recorded: nothing to check. No walk of the tree, and no git
// process here: the record and the tree at hand say it, but for the
// unsure files, which the writer asks git about in one process.

// editCheck tells, file by file, whether a generated file on disk is a
// person's edit.
type editCheck struct {
	k      *store.KB
	rec    *record
	before string // the nodes hash of the tree before the change
	// stale: the files on disk are of other leaves or summaries.
	stale bool
	// gen renders the files asked of the tree before the change, once.
	gen       func() (*Generated, error)
	beforeGen *Generated
	asked     map[string]bool
}

// newEditCheck prepares the check of the plan's files asked: whole
// returns the tree after the change, d is the change (Before the nodes
// hash of the tree before it); nil when there is nothing to tell by (no
// change given: a plan that writes nothing).
func newEditCheck(k *store.KB, rec *record, whole func() *store.Tree, d *Delta, nodesHash string, asked []string, after *Generated, ranks *rankRecord) (*editCheck, error) {
	if d == nil {
		return nil, nil
	}
	before := d.Before
	if before == "" && len(d.Changes) == 0 {
		before = nodesHash
	}
	if before == "" {
		return nil, nil
	}
	src, err := k.ReadFile(k.SummariesPath())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	c := &editCheck{k: k, rec: rec, before: before, asked: map[string]bool{}}
	for _, name := range asked {
		c.asked[name] = true
	}
	if h, ok := k.EntryHash(); ok && h != before {
		c.stale = true
	}
	if !c.stale && newerBy(k.SummariesPath(), k.EntryPath(), summariesMargin) {
		// FOLDER_SUMMARIES.md changed after the files were generated (a
		// summary edited by hand): they may be of other summaries.
		c.stale = true
	}
	c.gen = func() (*Generated, error) {
		if c.beforeGen == nil {
			// Only the files asked about are rendered (ENTRY.md and
			// GRAPH.md always are).
			skip := func(file, _ string) bool { return !c.asked[file] }
			summaries, err := store.ParseSummaries(k.SummariesPath(), src)
			if err != nil {
				return nil, err
			}
			if s := k.EntrySummary(); s != "" {
				summaries[""] = s
			}
			// The leaves the change left as they were are derived
			// once, for both generations (a copy of the map: the
			// other stays the after tree's).
			facts := maps.Clone(after.facts)
			if facts == nil {
				facts = map[*node.Node]*leafGen{}
			}
			// The rankings recorded, and those the generation made,
			// serve where the cohort is the same (a record of its
			// own: what it ranks again is not recorded).
			var rr *rankRecord
			if ranks != nil {
				rr = &rankRecord{old: maps.Clone(ranks.old), put: map[string]index.Ranked{}}
				if rr.old == nil {
					rr.old = map[string]index.Ranked{}
				}
				maps.Copy(rr.old, ranks.put)
			}
			g, err := generateFacts(beforeTree(whole, d), summaries, skip, before, rr, facts)
			if err != nil {
				return nil, err
			}
			c.beforeGen = g
		}
		return c.beforeGen, nil
	}
	return c, nil
}

// summariesMargin is how much later than ENTRY.md FOLDER_SUMMARIES.md must
// have been modified to be taken for changed since ENTRY.md was generated:
// git's checkout writes it just after ENTRY.md, and some file systems
// keep modification times to the second or two.
const summariesMargin = 2 * time.Second

// newerBy reports whether the file at a was modified more than margin
// after the one at b (false when either cannot be stat'ed).
func newerBy(a, b string, margin time.Duration) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	if err != nil {
		return false
	}
	return fa.ModTime().Sub(fb.ModTime()) > margin
}

// beforeTree is the tree before change d of the tree t reads.
func beforeTree(whole func() *store.Tree, d *Delta) *store.Tree {
	b := whole().Clone()
	for i := len(d.Changes) - 1; i >= 0; i-- {
		c := d.Changes[i]
		if c.New != nil {
			if n, ok := b.LeafAt(c.New.Path); ok {
				b.Remove(n)
			}
		}
		if c.Old != nil {
			b.Put(nil, c.Old, "")
		}
	}
	return b
}

// edited reports whether the generated file name (relative to
// .ai/kenkeep), which the plan replaces or removes, may hold a person's
// edit; unsure when kk cannot tell by rendering it (the files are of other
// leaves or summaries) and the file is not as kk last generated it: git's
// (a checkout, a merge) or a person's, which the writer tells by asking
// git whether a commit holds it.
func (c *editCheck) edited(name string) (edited, unsure bool, err error) {
	if c == nil {
		return false, false, nil
	}
	if c.rec != nil && c.rec.fresh(c.k, name) {
		return false, false, nil
	}
	data, err := c.k.ReadFile(filepath.Join(c.k.Dir, filepath.FromSlash(name)))
	if errors.Is(err, fs.ErrNotExist) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	if c.rec != nil && c.rec.holds(data) {
		// Bytes the last generation wrote, at another path: a folder's
		// index.md moved with its folder (git mv), not a person's words.
		return false, false, nil
	}
	if c.stale {
		// Without a record of this branch's last generation (none made
		// yet, or the index made again) kk knows nothing of the files:
		// taken for its own, as a fresh index finds them.
		return c.rec != nil, c.rec != nil, nil
	}
	g, err := c.gen()
	if err != nil {
		return false, false, err
	}
	want, ok := g.Files[name]
	return !ok || !(bytes.Equal(data, want) || store.SameText(data, want) || otherEnding(data, want)), false, nil
}

// otherEnding reports whether data is want but for its final newline,
// which one has and the other has not: a folder's index.md as kenkeep
// writes it and kk since generator version 3 (no final newline), or as
// kk wrote it before (one). Either is a generation, not a person's edit.
func otherEnding(data, want []byte) bool {
	d, dEnds := cutFinalNewline(data)
	w, wEnds := cutFinalNewline(want)
	return dEnds != wEnds && len(d) > 0 && store.SameText(d, w)
}

// cutFinalNewline returns b without its final line ending (LF or CRLF),
// and whether it had one.
func cutFinalNewline(b []byte) ([]byte, bool) {
	if c, ok := bytes.CutSuffix(b, []byte("\r\n")); ok {
		return c, true
	}
	return bytes.CutSuffix(b, []byte("\n"))
}
