package githooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/internal/store"
)

// RedirectsDriver is the name of kk's merge driver for the ledger
// nodes/.redirects.json (each id a split-leaf retired, and the ids that
// replaced it), as .ai/kenkeep/.gitattributes names it. Two branches that
// each split a leaf both add an entry to one JSON object, which git's
// line merge stops on; the driver merges the entries.
const RedirectsDriver = "kk-redirects"

// redirectsDriverCommand is the driver's command with kk run as command:
// it merges the ledger with kk (MergeRedirects); where kk cannot be run,
// or the two sides changed one entry differently, git's own line merge
// runs instead and leaves conflict markers, which every command that reads
// the ledger names.
func redirectsDriverCommand(command string) string {
	return command + " git-merge-redirects %O %A %B || git merge-file -L ours -L base -L theirs %A %O %B"
}

const redirectsDriverName = "kk: merge the entries of nodes/.redirects.json"

// SummariesDriver is the name of kk's merge driver for FOLDER_SUMMARIES.md,
// as .ai/kenkeep/.gitattributes names it. Two branches that each summarize
// a folder change the file's front matter and its generated text close
// together, which git's union driver glues into a file whose second
// summary lies outside the front matter; the driver merges the summaries
// folder by folder and writes the file again.
const SummariesDriver = "kk-summaries"

// summariesDriverCommand is the driver's command with kk run as command:
// it merges with kk (MergeSummaries); where kk cannot be run, or both
// sides changed one folder's summary differently, git's own line merge
// runs instead: the merge stops on a conflict in that folder's line, as
// git stops on any line both sides changed, and every command that reads
// the file names the conflict markers until the person resolves it. (An
// older kk fell back to git's union merge, which kept both lines without
// a conflict: the merge commit held a file naming the folder twice, which
// no command could read.)
func summariesDriverCommand(command string) string {
	return command + " git-merge-summaries %O %A %B || git merge-file -L ours -L base -L theirs %A %O %B"
}

// oldSummariesDriverSuffix ends the command of an older kk's driver of
// FOLDER_SUMMARIES.md, whose fallback is git's union merge.
const oldSummariesDriverSuffix = "git merge-file --union %A %O %B"

const summariesDriverName = "kk: merge the folder summaries of FOLDER_SUMMARIES.md"

// MergeSummaries is the merge driver of FOLDER_SUMMARIES.md: it merges the
// summaries of the files base, ours and theirs (a missing or empty file
// has none) folder by folder, as MergeRedirects merges entries, and writes
// the file rendered from the result to ours. Two sides that changed one
// folder's summary differently, or a file that does not parse, is an
// error, and ours is left as it is.
func MergeSummaries(base, ours, theirs string) error {
	var sides [3]map[string]string
	var hand [3][]string // each side's lines of a person's after the front matter
	for i, p := range []string{base, ours, theirs} {
		data, err := os.ReadFile(p)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		sides[i] = map[string]string{}
		if len(data) == 0 {
			continue
		}
		hand[i] = store.SummariesHandLines(data)
		s, err := store.ParseSummaries(p, data)
		if err != nil {
			return err
		}
		for k, v := range s {
			sides[i][k] = v
		}
	}
	merged, err := mergeEntries(sides, func(a, b string) bool { return a == b })
	if err != nil {
		return fmt.Errorf("FOLDER_SUMMARIES.md: %w", err)
	}
	data, err := store.RenderSummaries(store.Summaries(merged))
	if err != nil {
		return err
	}
	// A person's lines after the front matter, which the rendered file
	// lacks: ours, then those theirs added, each once (a line a side
	// removed stays out); kk's next write of the file keeps a copy of
	// them and says so.
	var keep []string
	for _, l := range hand[1] {
		if !slices.Contains(keep, l) && (slices.Contains(hand[2], l) || !slices.Contains(hand[0], l)) {
			keep = append(keep, l)
		}
	}
	for _, l := range hand[2] {
		if !slices.Contains(keep, l) && !slices.Contains(hand[0], l) {
			keep = append(keep, l)
		}
	}
	if len(keep) > 0 {
		data = append(append(data, '\n'), []byte(strings.Join(keep, "\n")+"\n")...)
	}
	return atomicfile.Write(ours, data, 0o644)
}

// mergeEntries merges three versions of a map key by key: a key only one
// side added, changed or removed takes that side's; one both sides
// changed differently is an error naming it.
func mergeEntries[V any](sides [3]map[string]V, equal func(a, b V) bool) (map[string]V, error) {
	b, o, t := sides[0], sides[1], sides[2]
	out := map[string]V{}
	keys := map[string]bool{}
	for _, m := range sides {
		for k := range m {
			keys[k] = true
		}
	}
	same := func(x V, inX bool, y V, inY bool) bool { return inX == inY && (!inX || equal(x, y)) }
	for k := range keys {
		bv, inB := b[k]
		ov, inO := o[k]
		tv, inT := t[k]
		switch {
		case same(ov, inO, tv, inT):
			if inO {
				out[k] = ov
			}
		case same(ov, inO, bv, inB):
			if inT {
				out[k] = tv
			}
		case same(tv, inT, bv, inB):
			if inO {
				out[k] = ov
			}
		default:
			return nil, fmt.Errorf("both sides changed %q differently", k)
		}
	}
	return out, nil
}

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
	merged, err := mergeEntries([3]map[string][]string{ledgers[0], ledgers[1], ledgers[2]}, slices.Equal[[]string])
	if err != nil {
		return fmt.Errorf("nodes/.redirects.json: %w", err)
	}
	out := store.Redirects(merged)
	return atomicfile.Write(ours, out.Render(), 0o644)
}

// InstalledDriver is the name of kk's merge driver for
// .state/installed-version, the record of the kk that set the knowledge
// base up and the coding agents (harnesses) it is installed into, as
// .ai/kenkeep/.gitattributes names it. Teammates who install kk into
// different agents on two branches each change its list of harnesses, a
// few lines of JSON apart, which git's line merge stops on.
const InstalledDriver = "kk-installed"

// installedDriverCommand is the driver's command with kk run as command:
// it merges the record with kk (MergeInstalled); where kk cannot be run,
// or both sides changed kk_command differently, git's own line merge runs
// instead and leaves conflict markers.
func installedDriverCommand(command string) string {
	return command + " git-merge-installed %O %A %B || git merge-file -L ours -L base -L theirs %A %O %B"
}

const installedDriverName = "kk: merge the harnesses of .state/installed-version"

// MergeInstalled is the merge driver of .state/installed-version: it
// merges the records in the files base, ours and theirs (a missing or
// empty file is an empty record) as store.MergeInstalled does and writes
// the result to ours. Two sides that changed kk_command differently, or a
// file that is not such a record, is an error, and ours is left as it is.
func MergeInstalled(base, ours, theirs string) error {
	var sides [3]*store.Installed
	for i, p := range []string{base, ours, theirs} {
		data, err := os.ReadFile(p)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		sides[i] = &store.Installed{}
		if len(bytes.TrimSpace(data)) == 0 {
			continue
		}
		if err := json.Unmarshal(data, sides[i]); err != nil {
			return fmt.Errorf("installed-version: %w", err)
		}
	}
	out, err := store.MergeInstalled(sides[0], *sides[1], *sides[2], true)
	if err != nil {
		return err
	}
	data, err := store.EncodeInstalled(out)
	if err != nil {
		return err
	}
	return atomicfile.Write(ours, data, 0o644)
}
