package githooks

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/internal/store"
)

// RedirectsDriver is the name of kk's merge driver for the ledger
// nodes/.redirects.json (each id a split-leaf retired, and the ids that
// replaced it), as .ai/kenkeep/.gitattributes names it. Two branches that
// each split a leaf both add an entry to one JSON object, which git's
// line merge stops on; the driver merges the entries.
const RedirectsDriver = "kk-redirects"

// redirectsDriverCommand merges the ledger with kk (MergeRedirects); where
// kk is not on PATH, or the two sides changed one entry differently, git's
// own line merge runs instead and leaves conflict markers, which every
// command that reads the ledger names.
const redirectsDriverCommand = "kk git-merge-redirects %O %A %B || git merge-file -L ours -L base -L theirs %A %O %B"

const redirectsDriverName = "kk: merge the entries of nodes/.redirects.json"

// MergeRedirects is the merge driver of nodes/.redirects.json: it merges
// the ledgers in the files base, ours and theirs (a missing or empty file
// is an empty ledger) entry by entry, as git merges lines: an entry only
// one side added or changed is taken from it, one a side removed and the
// other left as it was is removed. It writes the result to ours. Two
// sides that changed one entry differently, or a file that is not a
// ledger, is an error naming the entry or the file, and ours is left as it
// is.
func MergeRedirects(base, ours, theirs string) error {
	var ledgers [3]store.Redirects
	for i, p := range []string{base, ours, theirs} {
		data, err := os.ReadFile(p)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if len(data) == 0 {
			ledgers[i] = store.Redirects{}
			continue
		}
		if ledgers[i], err = store.ParseRedirects(p, data); err != nil {
			return err
		}
	}
	b, o, t := ledgers[0], ledgers[1], ledgers[2]
	out := store.Redirects{}
	keys := map[string]bool{}
	for _, r := range ledgers {
		for k := range r {
			keys[k] = true
		}
	}
	for k := range keys {
		bv, inB := b[k]
		ov, inO := o[k]
		tv, inT := t[k]
		switch {
		case inO == inT && (!inO || slices.Equal(ov, tv)):
			if inO {
				out[k] = ov // the same on both sides
			}
		case inO == inB && (!inO || slices.Equal(ov, bv)):
			if inT {
				out[k] = tv // only theirs changed it
			}
		case inT == inB && (!inT || slices.Equal(tv, bv)):
			if inO {
				out[k] = ov // only ours changed it
			}
		default:
			return fmt.Errorf("both sides changed the entry %q of nodes/.redirects.json differently", k)
		}
	}
	return atomicfile.Write(ours, out.Render(), 0o644)
}
