package githooks

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/indexfiles"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// MergeDriver is the name of kk's merge driver for the generated index
// files (ENTRY.md, GRAPH.md, nodes/**/index.md), as .ai/kenkeep/.gitattributes
// names it and the repository's git config defines it.
const MergeDriver = "kk-generated"

// mergeDriverCommand is the driver's command for a knowledge base at rel
// from the work tree's top folder (where git runs drivers), with kk run as
// command: it keeps our side, so that a merge, a rebase or a cherry-pick
// never stops on a generated file; kk's git hooks then regenerate the
// files of every commit the operation made from that commit's own leaves
// (RegenerateCommits). Where kk is found, it first brings over what a
// person wrote in their side (ENTRY.md's summary, a note named index.md:
// MergeGenerated), which no regeneration could get back; it starts kk
// only when a side holds a line that may be such (a front-matter summary
// or type), so that the many index.md files a merge meets cost a grep
// each, not a kk process (about 20 ms). It needs no kk:
// without one, or when kk fails, our side stays, and a merge in any git
// client goes through. It leaves the mark KeptMark (unless kk's hooks are
// off: KK_INTERNAL, KK_GIT_HOOKS=off), so that after git stash apply or
// pop, or a checkout with --merge, which make no commit, kk's
// post-index-change hook generates the work tree's files again.
func mergeDriverCommand(command, rel string) string {
	return "[ -n \"${KK_INTERNAL-}\" ] || [ \"${KK_GIT_HOOKS-}\" = off ] || { : >" + shellQuote(path.Join(rel, store.DirName, ".state", KeptMark)) + "; } 2>/dev/null; " +
		"if grep -qs -e '^summary:' -e '^type:' %O %A %B && (set -- " + command + "; command -v \"$1\") >/dev/null 2>&1; then " + command + " git-merge-generated %O %A %B %P; fi; true"
}

// olderMergeDriverSuffix ends the command of an older kk's driver of the
// generated files, which kept our side whatever their side held.
const olderMergeDriverSuffix = "} 2>/dev/null; true"

// KeptMark names the file, under the knowledge base's .state folder, kk's
// merge driver leaves when it kept one side of a generated file.
const KeptMark = "generated-merged"

// mergeDriverName describes the driver in git's config.
const mergeDriverName = "kk: keep ours for generated index files; kk's git hooks regenerate them from the leaves"

// SetUpMergeDriver defines kk's merge driver in the repository's git
// config (merge.kk-generated.name and .driver) unless it is defined as kk
// defines it already. It reports whether it changed the config.
func SetUpMergeDriver(ctx context.Context, k *store.KB) (bool, error) {
	top, rel, err := inWorkTree(ctx, k.Root, k.Root)
	if err != nil {
		return false, err
	}
	drivers := mergeDrivers(kkCommand(k), rel)
	if cur, _ := gitx.Run(ctx, top, "config", "--get", "merge."+MergeDriver+".driver"); strings.TrimSpace(string(cur)) == drivers[0][2] {
		return setUpRedirectsDriver(ctx, top, drivers)
	}
	if _, err := gitx.Run(ctx, top, "config", "merge."+MergeDriver+".name", mergeDriverName); err != nil {
		return false, err
	}
	if _, err := gitx.Run(ctx, top, "config", "merge."+MergeDriver+".driver", drivers[0][2]); err != nil {
		return false, err
	}
	if _, err := setUpRedirectsDriver(ctx, top, drivers); err != nil {
		return false, err
	}
	return true, nil
}

// mergeDrivers returns kk's merge drivers: name, description and command,
// the generated files' first. Each runs kk as kk's git hooks
// do: command (the one `kk init --kk-command` recorded, else kk on PATH),
// a relative one being relative to the knowledge base's root, which is rel
// from the work tree's top folder, where git runs merge drivers.
func mergeDrivers(command, rel string) [4][3]string {
	kk := driverKK(command, rel)
	return [4][3]string{
		{MergeDriver, mergeDriverName, mergeDriverCommand(kk, rel)},
		{RedirectsDriver, redirectsDriverName, redirectsDriverCommand(kk)},
		{SummariesDriver, summariesDriverName, summariesDriverCommand(kk)},
		{InstalledDriver, installedDriverName, installedDriverCommand(kk)},
	}
}

// driverKK returns command as a merge driver runs it from the work tree's
// top folder: a relative path to kk (one with a slash) is put under rel,
// the knowledge base's root; a name found on PATH or an absolute path is
// left as it is.
func driverKK(command, rel string) string {
	first, rest, _ := strings.Cut(command, " ")
	if rel == "." || !strings.Contains(first, "/") || path.IsAbs(first) || filepath.IsAbs(first) {
		return command
	}
	out := shellWord(rel) + "/" + strings.TrimPrefix(first, "./")
	if rest != "" {
		out += " " + rest
	}
	return out
}

// shellWord is s as one shell word: as it is when it holds only
// characters no shell treats specially, else quoted.
func shellWord(s string) string {
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("._/-+@%:,", c)) {
			return shellQuote(s)
		}
	}
	return s
}

// setUpRedirectsDriver defines kk's merge drivers of nodes/.redirects.json
// (RedirectsDriver), FOLDER_SUMMARIES.md (SummariesDriver) and
// .state/installed-version (InstalledDriver), as drivers gives them,
// unless they are defined so already.
func setUpRedirectsDriver(ctx context.Context, top string, drivers [4][3]string) (bool, error) {
	changed := false
	for _, d := range drivers[1:] {
		if cur, _ := gitx.Run(ctx, top, "config", "--get", "merge."+d[0]+".driver"); strings.TrimSpace(string(cur)) == d[2] {
			continue
		}
		if _, err := gitx.Run(ctx, top, "config", "merge."+d[0]+".name", d[1]); err != nil {
			return false, err
		}
		if _, err := gitx.Run(ctx, top, "config", "merge."+d[0]+".driver", d[2]); err != nil {
			return false, err
		}
		changed = true
	}
	return changed, nil
}

// redirectsDriverDefined reports whether the repository's git config
// defines kk's merge driver of nodes/.redirects.json.
func redirectsDriverDefined(ctx context.Context, top string) bool {
	return driverDefined(ctx, top, RedirectsDriver)
}

// driverDefined reports whether the repository's git config defines the
// merge driver name.
func driverDefined(ctx context.Context, top, name string) bool {
	cur, err := gitx.Run(ctx, top, "config", "--get", "merge."+name+".driver")
	return err == nil && strings.TrimSpace(string(cur)) != ""
}

// mergeDriverDefined reports whether the repository's git config defines
// kk's merge driver.
func mergeDriverDefined(ctx context.Context, top string) bool {
	cur, err := gitx.Run(ctx, top, "config", "--get", "merge."+MergeDriver+".driver")
	return err == nil && strings.TrimSpace(string(cur)) != ""
}

// Regenerated is what RegenerateCommits did.
type Regenerated struct {
	// Commits are the commits of the range whose generated files were
	// regenerated, as old and new ids, oldest first.
	Commits []Rewrite `json:"commits"`
	// Head is HEAD after the rewrite (the same as before when no commit
	// changed).
	Head string `json:"head"`
	// Relinked are the links a person typed in a leaf of HEAD that led
	// to where a leaf was before the merge, rebase or cherry-pick brought
	// its move, and now lead where it is (scratch.relink).
	Relinked []RelinkedLink `json:"relinked"`
	// Skipped are the leaves of HEAD kk cannot read, left out of its
	// generated files (two branches that each added a note with the same
	// id: both are skipped), each with its problem; reported when a
	// commit was made again, so that a merge that leaves notes out says
	// so when it happens, not at the next search.
	Skipped []SkippedLeaf `json:"skipped"`
}

// SkippedLeaf is a leaf of HEAD kk cannot read.
type SkippedLeaf struct {
	File    string `json:"file"` // relative to the knowledge base's parent folder
	Problem string `json:"problem"`
}

// RelinkedLink is a link a person typed that led to where a leaf was
// before it moved, pointed at where it is.
type RelinkedLink struct {
	File   string `json:"file"` // the linking leaf, relative to the knowledge base's parent folder
	Line   int    `json:"line"`
	Target string `json:"target"` // the link's path as typed
	To     string `json:"to"`     // the path it has now
}

// Rewrite is one commit RegenerateCommits made again.
type Rewrite struct {
	Old string `json:"old"`
	New string `json:"new"`
	// Files are the generated files that changed, and the leaves whose
	// generated Related block was rendered again (scratch.relink),
	// relative to the repository's top folder; empty for a commit made
	// again only because its parent was.
	Files []string `json:"files"`
}

// RegenerateCommits makes the generated index files of every commit in
// revs (a range as git rev-list takes it: "main..HEAD", "HEAD^!") match
// that commit's own leaves. A merge driver that keeps one side, a rebase
// or a cherry-pick leave commits whose ENTRY.md, GRAPH.md and index.md
// files lag the leaves they hold; each such commit is made again with the
// files regenerated (author, committer, dates and message kept), and so
// is every commit of the range after it. A leaf whose generated Related
// block links to where a leaf was before one side moved it gets the block
// rendered again in the same way (scratch.relink). HEAD must be the range's newest
// commit; it moves to the rewritten one (update-ref, with a reflog
// entry), and the index and work tree follow for the generated files (a
// local change to one of them stops the rewrite, changing nothing).
//
// Each commit's leaves are read from git's objects into a scratch copy of
// the knowledge base under the git folder, never from the work tree, so
// the result is the same whatever the work tree holds. A commit whose
// tree kk cannot generate for (a kenkeep v2 tree) is left as it is.
func RegenerateCommits(ctx context.Context, k *store.KB, revs []string, command string) (*Regenerated, error) {
	top, rel, err := inWorkTree(ctx, k.Root, k.Dir)
	if err != nil {
		return nil, err
	}
	head, err := revParse(ctx, top, "HEAD")
	if err != nil {
		return nil, err
	}
	out, err := gitx.Run(ctx, top, append([]string{"rev-list", "--reverse", "--topo-order", "--parents"}, append(revs, "--")...)...)
	if err != nil {
		// A range git does not know (a typo, a branch not fetched): say
		// which, and what a range looks like, not only git's words.
		return nil, fmt.Errorf("the range %s is not one git knows here; give revisions of this repository ending at HEAD, such as origin/main..HEAD (%w)", strings.Join(revs, " "), err)
	}
	res := &Regenerated{Commits: []Rewrite{}, Head: head, Relinked: []RelinkedLink{}, Skipped: []SkippedLeaf{}}
	var list [][]string // commit, then its parents
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			list = append(list, f)
		}
	}
	if len(list) == 0 {
		return res, nil
	}
	if !slices.ContainsFunc(list, func(c []string) bool { return c[0] == head }) {
		return nil, fmt.Errorf("the range %s does not hold HEAD (%s); kk regenerates commits up to HEAD only", strings.Join(revs, " "), short(head))
	}
	gitDir, err := gitPath(ctx, top, "kk-regenerate")
	if err != nil {
		return nil, err
	}
	// The scratch copy stays from one run to the next, so that a run
	// writes only the files that differ from the last commit it read (and
	// the copy's leaf cache spares parsing the others); anything going
	// wrong removes it, and the next run starts afresh.
	s, err := openScratch(ctx, top, rel, gitDir)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if ok {
			ok = saveManifest(gitDir, s.files) == nil
		}
		if !ok {
			_ = os.RemoveAll(gitDir)
		}
	}()
	made := map[string]string{} // old commit -> new commit
	for _, c := range list {
		id, parents := c[0], c[1:]
		newParents := make([]string, len(parents))
		moved := false
		for i, p := range parents {
			newParents[i] = p
			if n, ok := made[p]; ok && n != p {
				newParents[i], moved = n, true
			}
		}
		s.typed = nil
		// The leaves a parent made again changed (a Related block or a
		// link relinked there) are the commit's too when it left them
		// alone: it is made again on that parent, and they are looked at
		// as if it had changed them.
		carried := map[string]bool{}
		for i, p := range parents {
			if newParents[i] == p {
				continue
			}
			out, err := gitx.Run(ctx, top, "diff-tree", "-r", "-z", "--no-renames", "--name-only", p, newParents[i], "--", path.Join(rel, "nodes")+"/")
			if err != nil {
				return nil, fmt.Errorf("commit %s: %w", short(id), err)
			}
			for f := range strings.SplitSeq(string(out), "\x00") {
				if r, ok := strings.CutPrefix(f, path.Join(rel, "nodes")+"/"); ok && store.IsLeafName(path.Base(r)) {
					carried[r] = true
				}
			}
		}
		changed, err := s.regenerate(id, parents, carried)
		if err != nil {
			// The error names the scratch copy's file, which the person
			// never sees: name the commit's own.
			msg := strings.ReplaceAll(err.Error(), s.kb.Root+string(filepath.Separator), "its ")
			return nil, fmt.Errorf("commit %s: %s (its generated files cannot be made from what it holds: fix the file, commit it, and run `kk index rebuild`)", short(id), msg)
		}
		if id == head {
			for _, d := range s.typed {
				res.Relinked = append(res.Relinked, RelinkedLink{File: path.Join(store.DirName, "nodes", d.From), Line: d.Line, Target: d.Target, To: d.NewTarget()})
			}
			for _, p := range s.skipped {
				sl := SkippedLeaf{Problem: p.Error()}
				if ne, ok := errors.AsType[*node.Error](p); ok {
					sl = SkippedLeaf{File: path.Join(store.DirName, "nodes", ne.Path), Problem: ne.Detail()}
				}
				res.Skipped = append(res.Skipped, sl)
			}
		}
		if len(changed) == 0 && !moved {
			made[id] = id
			continue
		}
		tree, err := s.tree(id, changed)
		if err != nil {
			return nil, fmt.Errorf("commit %s: %w", short(id), err)
		}
		n, err := recommit(ctx, top, id, tree, newParents)
		if err != nil {
			return nil, fmt.Errorf("commit %s: %w", short(id), err)
		}
		made[id] = n
		files := make([]string, 0, len(changed))
		for _, ch := range changed {
			files = append(files, ch.path)
		}
		res.Commits = append(res.Commits, Rewrite{Old: id, New: n, Files: files})
	}
	ok = true
	newHead := made[head]
	if newHead == head {
		return res, nil
	}
	// Move HEAD under kk's writer lock, as a change another program makes
	// to the tree: the work tree's generated files change with it.
	var kept []string
	_, err = txn.Update(ctx, k, txn.Meta{Source: "git", Command: command}, func(tx *txn.Tx) error {
		return tx.Outside(func() (err error) {
			// The generated files git is about to check out of the
			// commit made again are kk's generation from the commit's
			// notes, not a person's edit, though they are not of the
			// work tree's notes when those are not the commit's:
			// recorded, before git writes them (a kill in between leaves
			// none unrecorded), for the writes that generate them again
			// (here below, or the hook's kk index rebuild), which would
			// take them for hand edits.
			if err := noteCheckedOut(ctx, k, top, rel, head, newHead); err != nil {
				return err
			}
			kept, _, err = moveHead(ctx, top, head, newHead, len(res.Commits))
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	res.Head = newHead
	if len(kept) > 0 {
		// The work tree's generated files that a write had changed
		// (a note not committed yet) were left as they were; generate
		// them again from the work tree's leaves, which now hold the
		// regenerated commits' ones too.
		if _, err := txn.Rebuild(ctx, k, txn.Meta{Source: "git", Command: command}, txn.RebuildOptions{}); err != nil {
			return nil, fmt.Errorf("HEAD is now %s, but regenerating the work tree's index files failed (run `kk index rebuild`): %w", short(newHead), err)
		}
	}
	return res, nil
}

// noteCheckedOut records (txn.NoteCheckedOut) the files of the knowledge
// base at rel that commits old and new differ in, as new holds them.
func noteCheckedOut(ctx context.Context, k *store.KB, top, rel, old, new string) error {
	diff, err := gitx.Run(ctx, top, "diff", "--name-only", "-z", "--no-renames", old, new, "--", rel+"/")
	if err != nil {
		return err
	}
	var names []string
	for p := range strings.SplitSeq(string(diff), "\x00") {
		if p != "" {
			names = append(names, new+":"+p)
		}
	}
	blobs, err := gitx.Blobs(ctx, top, names)
	if err != nil {
		return err
	}
	files := map[string][]byte{}
	for name, data := range blobs {
		if r, ok := strings.CutPrefix(strings.TrimPrefix(name, new+":"), rel+"/"); ok {
			files[r] = data
		}
	}
	return txn.NoteCheckedOut(k, files)
}

// manifestName is the scratch copy's record of the blob each file holds.
const manifestName = "manifest"

// openScratch opens the scratch copy under gitDir for a run: what its
// manifest says it holds, and no manifest on disk until the run saves
// its own. A run killed while it changes the copy (SIGKILL, a terminal
// closed on git commit: no deferred cleanup runs) leaves files its
// manifest does not describe, a note of the last commit it read among
// them; a manifest left on disk would make the next run trust them and
// generate a commit's files from notes the commit does not hold. Without
// one, the next run starts afresh.
func openScratch(ctx context.Context, top, rel, gitDir string) (*scratch, error) {
	s := &scratch{ctx: ctx, top: top, rel: rel, dir: gitDir, kb: store.New(filepath.Join(gitDir, "repo")), files: loadManifest(gitDir)}
	if err := os.Remove(filepath.Join(gitDir, manifestName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return s, nil
}

// loadManifest reads what the scratch copy holds (path relative to the
// knowledge base -> blob id); empty when there is no scratch copy, or a
// file it names is gone.
func loadManifest(dir string) map[string]string {
	files := map[string]string{}
	data, err := os.ReadFile(filepath.Join(dir, manifestName))
	if err != nil {
		_ = os.RemoveAll(dir)
		return files
	}
	kb := store.New(filepath.Join(dir, "repo"))
	for line := range strings.SplitSeq(string(data), "\n") {
		blob, p, found := strings.Cut(line, "\t")
		if !found {
			continue
		}
		if _, err := os.Lstat(filepath.Join(kb.Dir, filepath.FromSlash(p))); err != nil {
			_ = os.RemoveAll(dir)
			return map[string]string{}
		}
		files[p] = blob
	}
	return files
}

func saveManifest(dir string, files map[string]string) error {
	var b strings.Builder
	for _, p := range slices.Sorted(maps.Keys(files)) {
		b.WriteString(files[p] + "\t" + p + "\n")
	}
	// Whole or not at all: a manifest cut short by a kill would leave
	// files of the copy it does not name.
	return atomicfile.Write(filepath.Join(dir, manifestName), []byte(b.String()), 0o644)
}

// moveHead brings the index and work tree from old to new (two-tree
// read-tree, which refuses to overwrite a local change), then moves HEAD.
// The files old and new differ in are generated files only (and leaves
// whose generated Related block alone was rendered again); those the
// work tree changed and did not stage (a kk write of a note not committed
// yet) are left in the work tree as they are, the index and the others
// brought to new, and returned: the caller generates them again, with
// those checked out of new (update).
func moveHead(ctx context.Context, top, old, new string, n int) (kept, update []string, err error) {
	if _, err := gitx.Run(ctx, top, "read-tree", "-m", "-u", old, new); err != nil {
		kept, update, err = moveKeeping(ctx, top, old, new, err)
		if err != nil {
			return nil, nil, err
		}
	}
	msg := fmt.Sprintf("kk: regenerated the index files of %d commit(s)", n)
	if _, err := gitx.Run(ctx, top, "update-ref", "-m", msg, "HEAD", new, old); err != nil {
		var rerr error
		if kept == nil {
			_, rerr = gitx.Run(ctx, top, "read-tree", "-m", "-u", new, old)
		} else if _, rerr = gitx.Run(ctx, top, "read-tree", "-m", "-i", new, old); rerr == nil && len(update) > 0 {
			_, rerr = gitx.Run(ctx, top, append([]string{"checkout-index", "-f", "--"}, update...)...)
		}
		if rerr != nil {
			return nil, nil, fmt.Errorf("%w; putting the work tree back also failed: %v", err, rerr)
		}
		return nil, nil, err
	}
	return kept, update, nil
}

// moveKeeping is moveHead's way when read-tree refused to update the work
// tree (failed, its error): when every file old and new differ in that the
// work tree changed is changed there only, not staged, the index is
// brought to new alone and the unchanged files checked out from it. It
// returns the files left as they were and those updated.
func moveKeeping(ctx context.Context, top, old, new string, failed error) (kept, update []string, err error) {
	fail := func() ([]string, []string, error) {
		return nil, nil, fmt.Errorf("updating the work tree to the regenerated commit: %w (commit or restore the changes to the files named, then run the same `kk index rebuild --commits` again)", failed)
	}
	diff, err := gitx.Run(ctx, top, "diff", "--name-only", "-z", "--no-renames", old, new)
	if err != nil {
		return fail()
	}
	staged, err := gitx.Run(ctx, top, "diff", "--cached", "--name-only", "-z", "--no-renames", old)
	if err != nil || len(staged) > 0 {
		return fail()
	}
	local, err := gitx.Run(ctx, top, "diff", "--name-only", "-z", "--no-renames", old)
	if err != nil {
		return fail()
	}
	changed := map[string]bool{}
	for p := range strings.SplitSeq(string(local), "\x00") {
		changed[p] = p != ""
	}
	for p := range strings.SplitSeq(string(diff), "\x00") {
		switch {
		case p == "":
		case changed[p]:
			kept = append(kept, p)
		default:
			update = append(update, p)
		}
	}
	if len(kept) == 0 {
		return fail()
	}
	// -i: the index alone; the work tree's changes are not looked at
	if _, err := gitx.Run(ctx, top, "read-tree", "-m", "-i", old, new); err != nil {
		return fail()
	}
	if len(update) > 0 {
		if _, err := gitx.Run(ctx, top, append([]string{"checkout-index", "-f", "--"}, update...)...); err != nil {
			_, _ = gitx.Run(ctx, top, "read-tree", "-m", "-i", new, old)
			return fail()
		}
	}
	return kept, update, nil
}

// recommit makes commit id again with another tree and parents, keeping
// its author, committer, dates and message, and signed when it was.
func recommit(ctx context.Context, top, id, tree string, parents []string) (string, error) {
	raw, err := gitx.Run(ctx, top, "cat-file", "commit", id)
	if err != nil {
		return "", err
	}
	header, msg, _ := bytes.Cut(raw, []byte("\n\n"))
	env := []string{}
	signed := false
	for line := range strings.SplitSeq(string(header), "\n") {
		who, rest, _ := strings.Cut(line, " ")
		if who == "gpgsig" || who == "gpgsig-sha256" {
			signed = true
		}
		if who != "author" && who != "committer" {
			continue
		}
		name, email, date, ok := parseIdent(rest)
		if !ok {
			return "", fmt.Errorf("cannot read the %s line %q", who, line)
		}
		up := "GIT_" + strings.ToUpper(who)
		env = append(env, up+"_NAME="+name, up+"_EMAIL="+email, up+"_DATE="+date)
	}
	args := []string{"commit-tree", tree}
	for _, p := range parents {
		args = append(args, "-p", p)
	}
	// A signed commit is made again signed (git commit-tree signs only
	// when told), with the person's own signing setup (user.signingkey,
	// gpg.format), as git commit signed it: a branch that requires signed
	// commits must not get an unsigned one from kk.
	if signed {
		args = append(args, "-S")
	}
	args = append(args, "-F", "-")
	out, err := gitx.RunWith(ctx, top, env, msg, args...)
	if err != nil {
		if signed {
			return "", fmt.Errorf("signing commit %s again (it was signed) failed: %s; run the same `kk index rebuild --commits` again once git can sign (git commit -S works)", short(id), strings.TrimSpace(err.Error()))
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// parseIdent splits "Name <email> 1700000000 +0100".
func parseIdent(s string) (name, email, date string, ok bool) {
	lt, gt := strings.IndexByte(s, '<'), strings.LastIndexByte(s, '>')
	if lt < 0 || gt < lt {
		return "", "", "", false
	}
	return strings.TrimSpace(s[:lt]), s[lt+1 : gt], strings.TrimSpace(s[gt+1:]), true
}

// scratch is a copy of the knowledge base's files of one commit at a time
// under the git folder, kept from commit to commit so that only the files
// that differ are written again.
type scratch struct {
	ctx   context.Context
	top   string // the work tree's top folder
	rel   string // the knowledge base folder relative to top ("x/.ai/kenkeep")
	dir   string // the scratch folder
	kb    *store.KB
	files map[string]string // path relative to the knowledge base -> blob id written
	// typed are the dead links a person typed that the last relink
	// pointed at where their leaves are.
	typed []store.DeadLink
	// skipped are the problems of the leaves the last commit read holds
	// that kk cannot read.
	skipped []error
}

// generatedChange is a generated file of a commit that regeneration
// changes: its new content, or its removal.
type generatedChange struct {
	path   string // relative to top
	data   []byte
	remove bool
}

// inputs are the files of the knowledge base generation reads (the
// leaves and the summaries) and writes (to compare).
func generationFile(p string) bool {
	switch p {
	case "ENTRY.md", "GRAPH.md", "FOLDER_SUMMARIES.md", "config.yaml":
		return true
	}
	return strings.HasPrefix(p, "nodes/")
}

// regenerate brings the scratch copy to commit id (whose parents are
// parents) and returns the generated files whose content differs from
// what the commit holds, and the leaves whose generated Related block
// links to where a leaf was before it moved (relink).
func (s *scratch) regenerate(id string, parents []string, carried map[string]bool) ([]generatedChange, error) {
	s.skipped = nil
	out, err := gitx.Run(s.ctx, s.top, "ls-tree", "-r", "-z", id, "--", s.rel+"/")
	if err != nil {
		return nil, err
	}
	want := map[string]string{}
	for entry := range strings.SplitSeq(string(out), "\x00") {
		meta, p, ok := strings.Cut(entry, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 3 || f[1] != "blob" {
			continue
		}
		p = strings.TrimPrefix(p, s.rel+"/")
		if generationFile(p) {
			want[p] = f[2]
		}
	}
	if len(want) == 0 {
		return nil, nil // no knowledge base in this commit
	}
	var fetch []string
	for p, blob := range want {
		if s.files[p] != blob {
			fetch = append(fetch, p)
		}
	}
	slices.Sort(fetch)
	for p := range s.files {
		if _, ok := want[p]; !ok {
			if err := os.Remove(s.abs(p)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, err
			}
			delete(s.files, p)
		}
	}
	if err := s.write(fetch, want); err != nil {
		return nil, err
	}
	if _, err := os.Stat(s.kb.NodesDir()); err != nil {
		return nil, nil
	}
	t, err := s.kb.ReadTree(store.LoadOptions{})
	if err != nil {
		return nil, err
	}
	s.skipped = t.Problems
	if store.RequireV3(t) != nil {
		return nil, nil // kk does not generate for a v2 tree
	}
	relinked, err := s.relink(t, id, parents, carried)
	if err != nil {
		return nil, err
	}
	summaries, err := store.ReadSummaries(s.kb.SummariesPath())
	if err != nil {
		return nil, err
	}
	if r := s.kb.EntrySummary(); r != "" {
		summaries[""] = r
	}
	gen, err := indexfiles.Generate(t, summaries)
	if err != nil {
		return nil, err
	}
	changed := relinked
	names := make([]string, 0, len(gen.Files))
	for name := range gen.Files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		old, err := s.kb.ReadFile(s.abs(name))
		if err == nil && bytes.Equal(old, gen.Files[name]) {
			continue
		}
		if s.handIndex(t, name) {
			continue
		}
		changed = append(changed, generatedChange{path: path.Join(s.rel, name), data: gen.Files[name]})
	}
	live := map[string]bool{}
	for _, d := range gen.Folders {
		live[d] = true
	}
	for d := range t.IndexDirs {
		if !live[d] && !s.handIndex(t, path.Join("nodes", d, "index.md")) {
			changed = append(changed, generatedChange{path: path.Join(s.rel, "nodes", d, "index.md"), remove: true})
		}
	}
	slices.SortFunc(changed, func(a, b generatedChange) int { return strings.Compare(a.path, b.path) })
	return changed, nil
}

// relink brings up to date each leaf of commit id that links to a leaf
// path where there is no file while the leaf the link names is elsewhere
// (store.DeadLink, Relinkable). A merge, a rebase or a cherry-pick makes
// such a link when one side moved or split a leaf (kk rebalance move) and
// the other added or edited a leaf linking to it:
//
//   - a generated Related block is rendered again from the leaf's edges,
//     which are right, as the index files are;
//   - a link a person typed in the body is pointed at where the leaf is,
//     in the form it had (relative or bundle-absolute, its fragment and
//     text kept), as kk rebalance move does for the links there are when
//     it moves a leaf and kk doctor --fix after a move by hand; they are
//     kept in s.typed, for the caller to name.
//
// Nothing else changes: the front matter (kk_version included), the rest
// of the body and a link to a leaf that is gone or was split in several
// stay as the commit holds them. The leaves looked at are those the
// commit changed against a parent, those carried (changed when a parent
// was made again), and those whose edges name an id whose file a parent
// had elsewhere or not at all (every leaf for a root commit, for a commit
// that moves a leaf, or when the redirect ledger changed), so that a
// commit that moves nothing reads no more than the leaves it changed. The
// leaves changed are written to the scratch copy, put in t, and returned.
func (s *scratch) relink(t *store.Tree, id string, parents []string, carried map[string]bool) ([]generatedChange, error) {
	nodes := path.Join(s.rel, "nodes") + "/"
	all := len(parents) == 0
	changedLeaf := maps.Clone(carried) // relative to nodes/
	moved := map[string]bool{}         // IDKey of the ids whose file came or went
	var gone []string                  // the ids whose file went
	for _, p := range parents {
		if all {
			break
		}
		out, err := gitx.Run(s.ctx, s.top, "diff-tree", "-r", "-z", "--no-renames", "--name-status", p, id, "--", nodes)
		if err != nil {
			return nil, err
		}
		f := strings.Split(string(out), "\x00")
		for i := 0; i+1 < len(f); i += 2 {
			status, rel := f[i], strings.TrimPrefix(f[i+1], nodes)
			if rel == path.Base(s.kb.RedirectsPath()) {
				all = true
				break
			}
			if status == "" || !store.IsLeafName(path.Base(rel)) {
				continue
			}
			switch status[0] {
			case 'A':
				changedLeaf[rel] = true
				moved[store.IDKey(strings.TrimSuffix(path.Base(rel), ".md"))] = true
			case 'D':
				moved[store.IDKey(strings.TrimSuffix(path.Base(rel), ".md"))] = true
				gone = append(gone, strings.TrimSuffix(path.Base(rel), ".md"))
			default:
				changedLeaf[rel] = true
			}
		}
	}
	if !all && len(changedLeaf) == 0 && len(moved) == 0 {
		return nil, nil
	}
	redirects, err := s.kb.ReadRedirects()
	if err != nil {
		return nil, err
	}
	live := func(id string) bool { _, ok := t.ByID(id); return ok }
	// A leaf the commit moved (its file went, its id is still held): a
	// link typed anywhere may lead where it was, edge or none.
	all = all || slices.ContainsFunc(gone, live)
	for _, n := range t.Leaves {
		if changedLeaf[n.Path] {
			moved[store.IDKey(n.ID)] = true // a leaf added under a name not its id
		}
	}
	names := func(n *node.Node) bool {
		for _, e := range slices.Concat(n.RelatesTo, n.DependsOn) {
			if moved[store.IDKey(e)] {
				return true
			}
			if _, ok := t.ByID(e); !ok {
				for _, to := range store.ResolveRedirect(redirects, e, live) {
					if moved[store.IDKey(to)] {
						return true
					}
				}
			}
		}
		return false
	}
	resolve := t.LinkResolver(redirects)
	var out []generatedChange
	type put struct {
		old, new *node.Node
		hash     string
	}
	var puts []put
	for _, n := range t.Leaves {
		if !all && !changedLeaf[n.Path] && !names(n) {
			continue
		}
		abs := s.kb.NodePath(n.Path)
		src, err := os.ReadFile(abs)
		if err != nil {
			return nil, err
		}
		var typed []store.DeadLink
		stale := false
		for _, d := range s.kb.LeafDeadLinks(t, redirects, n.Path, src) {
			switch {
			case d.Generated && d.Relinkable():
				stale = true
			case !d.Generated && d.Relinkable():
				typed = append(typed, d)
			}
		}
		if !stale && len(typed) == 0 {
			continue
		}
		leaf, err := node.Parse(n.Path, src)
		if err != nil {
			continue // not a leaf kk reads as it is: the checks say why
		}
		orig := leaf.Body
		if len(typed) > 0 {
			// The links are found again in the body as parsed, the last
			// first so that earlier offsets hold.
			links := s.kb.BodyDeadLinks(t, redirects, n.Path, leaf.Body)
			for i := len(links) - 1; i >= 0; i-- {
				if d := links[i]; !d.Generated && d.Relinkable() {
					start, end := d.Span()
					leaf.Body = slices.Concat(leaf.Body[:start:start], []byte(d.NewTarget()), leaf.Body[end:])
				}
			}
			s.typed = append(s.typed, typed...)
		}
		body := string(leaf.Body)
		if stale {
			body = node.RenderedBody(leaf, resolve)
		}
		if body == string(orig) {
			continue
		}
		data := slices.Concat(src[:len(src)-len(orig):len(src)-len(orig)], []byte(body))
		if err := os.WriteFile(abs, data, 0o644); err != nil {
			return nil, err
		}
		out = append(out, generatedChange{path: path.Join(nodes, n.Path), data: data})
		// The generated files name the leaves' bytes (nodes_hash) and
		// sizes: the tree holds the leaf as the commit is made again.
		if leaf, err = node.Parse(n.Path, data); err != nil {
			return nil, err
		}
		leaf.Release(false)
		puts = append(puts, put{n, leaf, store.LeafSum(data)})
	}
	for _, p := range puts {
		t.Put(p.old, p.new, p.hash)
	}
	return out, nil
}

// handIndex reports whether name (relative to the knowledge base) is an
// index.md under nodes/ that a person wrote (store.HandIndex): a commit
// keeps it as it is (the checks of the work tree name it).
func (s *scratch) handIndex(t *store.Tree, name string) bool {
	rel, ok := strings.CutPrefix(name, "nodes/")
	if !ok || path.Base(rel) != "index.md" {
		return false
	}
	return store.HandIndex(s.kb, rel, func(id string) bool {
		_, ok := t.ByID(id)
		return ok
	}) != nil
}

func (s *scratch) abs(p string) string {
	return filepath.Join(s.kb.Dir, filepath.FromSlash(p))
}

// write copies the blobs of paths (relative to the knowledge base) into
// the scratch copy, with one git cat-file for all of them.
func (s *scratch) write(paths []string, blobs map[string]string) error {
	if len(paths) == 0 {
		return nil
	}
	var in bytes.Buffer
	for _, p := range paths {
		in.WriteString(blobs[p] + "\n")
	}
	out, err := gitx.RunWith(s.ctx, s.top, nil, in.Bytes(), "cat-file", "--batch")
	if err != nil {
		return err
	}
	r := bufio.NewReader(bytes.NewReader(out))
	for _, p := range paths {
		header, err := r.ReadString('\n')
		if err != nil {
			return fmt.Errorf("reading %s from git: %w", p, err)
		}
		f := strings.Fields(header)
		if len(f) != 3 || f[1] != "blob" {
			return fmt.Errorf("reading %s from git: %q", p, strings.TrimSpace(header))
		}
		size, err := strconv.Atoi(f[2])
		if err != nil {
			return err
		}
		data := make([]byte, size+1) // the content and its newline
		if _, err := io.ReadFull(r, data); err != nil {
			return fmt.Errorf("reading %s from git: %w", p, err)
		}
		abs := s.abs(p)
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(abs, data[:size], 0o644); err != nil {
			return err
		}
		s.files[p] = blobs[p]
	}
	return nil
}

// tree writes the regenerated files as blobs and returns the tree of
// commit id with them in place.
func (s *scratch) tree(id string, changed []generatedChange) (string, error) {
	index := filepath.Join(s.dir, "index")
	env := []string{"GIT_INDEX_FILE=" + index}
	defer func() { _ = os.Remove(index) }()
	if _, err := gitx.RunWith(s.ctx, s.top, env, nil, "read-tree", id); err != nil {
		return "", err
	}
	var info bytes.Buffer
	var removed []string
	for _, ch := range changed {
		if ch.remove {
			removed = append(removed, ch.path)
			continue
		}
		out, err := gitx.RunWith(s.ctx, s.top, nil, ch.data, "hash-object", "-w", "--stdin")
		if err != nil {
			return "", err
		}
		blob := strings.TrimSpace(string(out))
		fmt.Fprintf(&info, "100644 %s\t%s\n", blob, ch.path)
		// The scratch copy now holds the commit as it is made again.
		kbRel := strings.TrimPrefix(ch.path, s.rel+"/")
		if err := os.WriteFile(s.abs(kbRel), ch.data, 0o644); err != nil {
			return "", err
		}
		s.files[kbRel] = blob
	}
	for _, ch := range changed {
		if ch.remove {
			kbRel := strings.TrimPrefix(ch.path, s.rel+"/")
			_ = os.Remove(s.abs(kbRel))
			delete(s.files, kbRel)
		}
	}
	if info.Len() > 0 {
		if _, err := gitx.RunWith(s.ctx, s.top, env, info.Bytes(), "update-index", "--index-info"); err != nil {
			return "", err
		}
	}
	if len(removed) > 0 {
		if _, err := gitx.RunWith(s.ctx, s.top, env, nil, append([]string{"update-index", "--force-remove", "--"}, removed...)...); err != nil {
			return "", err
		}
	}
	out, err := gitx.RunWith(s.ctx, s.top, env, nil, "write-tree")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

func revParse(ctx context.Context, top, rev string) (string, error) {
	out, err := gitx.Run(ctx, top, "rev-parse", "--verify", "-q", rev+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("%s is not a commit: %w", rev, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// gitPath is `git rev-parse --git-path name`, absolute.
func gitPath(ctx context.Context, top, name string) (string, error) {
	out, err := gitx.Run(ctx, top, "rev-parse", "--git-path", name)
	if err != nil {
		return "", err
	}
	p := strings.TrimSpace(string(out))
	if !filepath.IsAbs(p) {
		p = filepath.Join(top, p)
	}
	return p, nil
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// RebaseWaits reports whether a rebase is in progress in the work tree
// holding k, with kk's post-rewrite hook in the hooks folder git uses: the
// hook regenerates the generated files of the rebased commits when the
// rebase ends, and until then kk's merge driver keeps one side of them, so
// a check run in between (git rebase --exec) finds them out of date.
func RebaseWaits(ctx context.Context, k *store.KB) bool {
	_, gitDir, ok := gitx.WorkTreeGitDir(k.Root)
	if !ok || !gitx.RebaseInProgress(gitDir) {
		return false
	}
	r, err := open(ctx, k)
	if err != nil || r.noHooks() != "" {
		return false
	}
	s, err := inspect(r.dir, PostRewrite)
	return err == nil && s.kk && s.exec
}
