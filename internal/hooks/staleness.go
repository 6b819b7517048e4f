package hooks

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kk-project/kk/internal/indexfiles"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/workpool"
)

// The staleness check tells session-start whether ENTRY.md was generated
// from the leaves now on disk. The exact answer needs the nodes hash of the
// whole tree, a read of every leaf's metadata (tens of milliseconds on a
// 10k-node tree even with the leaf cache); session-start's budget is a
// fraction of that. So the answer is cached in .state/staleness.cache
// together with the modification time of every folder under nodes/, and
// reused while no folder changed.
//
// A folder's mtime changes whenever an entry is added to it, removed from
// it or renamed into it. Every writer in kk replaces files by writing a
// temporary file and renaming it over the old one, and git checkout,
// restore, pull and merge remove and recreate the files they change, so
// every change those make to a leaf moves the mtime of the leaf's folder
// (and a new or removed folder moves its parent's). Checking the folders
// costs one stat each, a few hundred on a 10k-node tree.
//
// What it cannot see: a leaf edited in place, by a program that truncates
// and rewrites the same file (some editors, shell redirection), changes no
// folder; nor does a change whose tools restore the old folder mtimes, or
// a change to the target of a symlinked leaf. Such an edit is noticed when
// anything else in the folder changes, when the cache is older than
// stalenessMaxAge, or by the commands that always hash the full tree (kk
// status, kk doctor, kk lint, kk index rebuild). This is acceptable
// because the result is only a hint to run `kk index rebuild`, never a
// decision that changes files, and the window is bounded by the cache age.
//
// Folder mtimes recorded within store.RacyWindow of the moment the tree was read
// are not trusted (a file system with coarse timestamps could give a
// second change the same mtime).
//
// A folder that changed, or whose mtime is not trusted yet, is not a
// reason to read the whole tree again. The cache keeps, for every folder,
// a digest of its leaves (paths and content hashes), and in
// .state/staleness.leaves the path, id and hash of every leaf, in the
// order the nodes hash takes them. Only the folders in doubt are read
// again (store.ReadFolder): when their digests are unchanged the cached hash
// stands; when some changed, their leaves are merged into the record and
// the nodes hash is computed from it (store.HashSorted), without reading the
// rest of the tree. That is what keeps session-start fast in the seconds
// after a write, when the written folders are both changed and racy. The
// whole tree is read only without a usable record, when a folder in doubt
// holds a leaf kk cannot read, or when ids collide.

const (
	stalenessMagic = "kk-staleness 3"
	leavesMagic    = "kk-staleness-leaves 3"
)

// stalenessMaxAge bounds how long a cached answer is reused at all.
var stalenessMaxAge = time.Hour

// treeState is what the staleness check learns about the tree.
type treeState struct {
	Hash    string // nodes hash, hex, when every leaf could be read
	Invalid int    // number of unreadable leaves; Hash is empty then
	Cached  bool   // answered from the cache, every folder trusted
	Partial int    // folders read again (changed or racy); 0 for a cached or full answer
}

func stalenessCachePath(k *store.KB) string  { return filepath.Join(k.StateDir(), "staleness.cache") }
func stalenessLeavesPath(k *store.KB) string { return filepath.Join(k.StateDir(), "staleness.leaves") }

// dirRecord is what the cache holds about one folder.
type dirRecord struct {
	mtime  int64
	digest string // of the folder's leaves (see digests); "-" when unknown
}

// treeRecord is what the cache holds about the tree.
type treeRecord struct {
	written int64  // UnixNano of the start of the read that produced it
	token   string // ties staleness.cache to its staleness.leaves
	state   treeState
	dirs    map[string]dirRecord // folder (relative to nodes/, "" for nodes/)
}

// currentTreeState returns the tree's nodes hash: from the cache when no
// folder changed since it was recorded, from the record of leaves with
// only the folders in doubt read again, else by reading the whole tree.
func currentTreeState(k *store.KB) (treeState, error) {
	now := time.Now()
	rec, ok := readTreeRecord(k, now)
	if ok {
		doubt := doubtfulDirs(k, rec)
		if len(doubt) == 0 {
			st := rec.state
			st.Cached = true
			return st, nil
		}
		if st, ok := partialTreeState(k, rec, doubt, now); ok {
			return st, nil
		}
	}
	start := time.Now()
	var st treeState
	t, err := k.ReadTree(store.LoadOptions{})
	switch {
	case err != nil:
		return st, err
	case len(t.Problems) > 0:
		// The tree's hash is not kept with leaves skipped: the record
		// holds either a hash or a count of problems.
		st.Invalid, t = len(t.Problems), nil
	default:
		st.Hash = indexfiles.NodesHash(t)
	}
	if t == nil {
		dirs := map[string]dirRecord{}
		for _, d := range listDirs(k.NodesDir()) {
			dirs[d] = dirRecord{digest: "-"}
		}
		saveTreeState(k, st, dirs, nil, "", start)
		return st, nil
	}
	leaves := make([]store.FolderLeaf, 0, len(t.Leaves))
	for _, n := range t.Leaves {
		leaves = append(leaves, store.FolderLeaf{Path: n.Path, ID: n.ID, Hash: t.LeafHash(n.Path)})
	}
	slices.SortFunc(leaves, store.LeafOrder)
	dirs := map[string]dirRecord{}
	for _, d := range t.Dirs {
		dirs[d] = dirRecord{}
	}
	saveTreeState(k, st, withDigests(dirs, leaves), leaves, "", start)
	return st, nil
}

// cachedTreeState returns the cached state when every folder can be
// trusted (for tests and benchmarks). now is the real clock, the one file
// mtimes come from.
func cachedTreeState(k *store.KB, now time.Time) (treeState, bool) {
	rec, ok := readTreeRecord(k, now)
	if !ok || len(doubtfulDirs(k, rec)) > 0 {
		return treeState{}, false
	}
	st := rec.state
	st.Cached = true
	return st, true
}

// readTreeRecord reads staleness.cache; ok is false when it is missing,
// malformed or older than stalenessMaxAge.
func readTreeRecord(k *store.KB, now time.Time) (treeRecord, bool) {
	data, err := os.ReadFile(stalenessCachePath(k))
	if err != nil || !bytes.HasPrefix(data, []byte(stalenessMagic+"\n")) {
		return treeRecord{}, false
	}
	rec := treeRecord{dirs: map[string]dirRecord{}}
	sc := bufio.NewScanner(bytes.NewReader(data[len(stalenessMagic)+1:]))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		kind, rest, _ := strings.Cut(sc.Text(), " ")
		switch kind {
		case "written":
			if rec.written, err = strconv.ParseInt(rest, 10, 64); err != nil {
				return rec, false
			}
			if now.Sub(time.Unix(0, rec.written)) > stalenessMaxAge {
				return rec, false
			}
		case "leaves":
			rec.token = rest
		case "hash":
			rec.state.Hash = rest
		case "invalid":
			if rec.state.Invalid, err = strconv.Atoi(rest); err != nil {
				return rec, false
			}
		case "dir":
			mt, rest, ok1 := strings.Cut(rest, " ")
			digest, rel, ok2 := strings.Cut(rest, " ")
			mtime, err := strconv.ParseInt(mt, 10, 64)
			if !ok1 || !ok2 || err != nil || rec.written == 0 {
				return rec, false
			}
			if rel == "." {
				rel = ""
			}
			rec.dirs[rel] = dirRecord{mtime, digest}
		default:
			return rec, false
		}
	}
	if sc.Err() != nil || len(rec.dirs) == 0 || (rec.state.Hash == "") == (rec.state.Invalid == 0) {
		return rec, false
	}
	return rec, true
}

// doubtfulDirs returns the recorded folders that changed since, that are
// gone, or whose recorded mtime was too close to the read to be trusted.
func doubtfulDirs(k *store.KB, rec treeRecord) []string {
	rels := slices.Sorted(maps.Keys(rec.dirs))
	nodes := k.NodesDir()
	doubt := make([]bool, len(rels))
	workpool.Run(0, len(rels), func(i int) {
		mtime := rec.dirs[rels[i]].mtime
		if mtime >= rec.written-int64(store.RacyWindow) {
			doubt[i] = true
			return
		}
		fi, err := os.Lstat(filepath.Join(nodes, filepath.FromSlash(rels[i])))
		doubt[i] = err != nil || !fi.IsDir() || fi.ModTime().UnixNano() != mtime
	})
	var out []string
	for i, d := range doubt {
		if d {
			out = append(out, rels[i])
		}
	}
	return out
}

// partialTreeState answers from the record, reading again only the
// folders in doubt (and any folder new since); ok is false when the
// record cannot answer (no usable record, a recorded unreadable leaf, an
// unreadable leaf in a folder read again, an id used twice).
func partialTreeState(k *store.KB, rec treeRecord, doubt []string, now time.Time) (treeState, bool) {
	if rec.state.Invalid > 0 || rec.token == "" {
		return treeState{}, false
	}
	dirs := maps.Clone(rec.dirs)
	reread := map[string]bool{}
	var fresh []store.FolderLeaf
	changed := false
	queue := append([]string(nil), doubt...)
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		ls, subs, err := k.ReadFolder(d)
		if errors.Is(err, fs.ErrNotExist) {
			changed = changed || dirs[d].digest != emptyDigest
			delete(dirs, d)
			continue
		}
		if err != nil {
			return treeState{}, false
		}
		reread[d] = true
		for _, l := range ls {
			if l.Err != nil {
				return treeState{}, false // the full read counts and names it
			}
		}
		slices.SortFunc(ls, store.LeafOrder)
		digest := digestOf(ls)
		changed = changed || digest != dirs[d].digest
		dirs[d] = dirRecord{digest: digest}
		fresh = append(fresh, ls...)
		for _, s := range subs {
			if _, known := dirs[s]; !known {
				dirs[s] = dirRecord{digest: "new"}
				queue = append(queue, s)
			}
		}
	}
	if !changed {
		// The folders in doubt hold what they held: the recorded answer
		// stands, and the record of leaves is still the tree's.
		st := rec.state
		st.Partial = len(reread)
		saveTreeState(k, st, dirs, nil, rec.token, now)
		return st, true
	}
	data, err := os.ReadFile(stalenessLeavesPath(k))
	header := leavesMagic + " " + rec.token + "\n"
	if err != nil || !bytes.HasPrefix(data, []byte(header)) {
		return treeState{}, false
	}
	kept, before, ok := keptLeaves(string(data[len(header):]), dirs, reread)
	if !ok {
		return treeState{}, false
	}
	slices.SortFunc(fresh, store.LeafOrder)
	for _, f := range fresh {
		if before[f.Path] == f.ID {
			continue // recorded as it is: its id was unique then, and the others are
		}
		for _, l := range kept {
			if strings.EqualFold(f.ID, l.ID) {
				return treeState{}, false // the full read reports the collision
			}
		}
	}
	for i := 1; i < len(fresh); i++ {
		for _, l := range fresh[:i] {
			if strings.EqualFold(fresh[i].ID, l.ID) {
				return treeState{}, false
			}
		}
	}
	merged := make([]store.FolderLeaf, 0, len(kept)+len(fresh))
	i, j := 0, 0
	for i < len(kept) || j < len(fresh) {
		if j == len(fresh) || (i < len(kept) && store.LeafOrder(kept[i], fresh[j]) < 0) {
			merged = append(merged, kept[i])
			i++
		} else {
			merged = append(merged, fresh[j])
			j++
		}
	}
	st := treeState{Hash: store.HashSorted(merged), Partial: len(reread)}
	saveTreeState(k, st, dirs, merged, "", now)
	return st, true
}

// keptLeaves parses the record's lines "<hash>\t<id>\t<path>", keeping
// the leaves of folders that still exist and were not read again; before
// maps the recorded leaves of the folders read again to their ids.
func keptLeaves(lines string, dirs map[string]dirRecord, reread map[string]bool) (kept []store.FolderLeaf, before map[string]string, ok bool) {
	out := make([]store.FolderLeaf, 0, strings.Count(lines, "\n"))
	before = map[string]string{}
	for lines != "" {
		var line string
		line, lines, _ = strings.Cut(lines, "\n")
		hash, rest, ok1 := strings.Cut(line, "\t")
		id, path, ok2 := strings.Cut(rest, "\t")
		if !ok1 || !ok2 || len(hash) != 64 {
			return nil, nil, false
		}
		d := dirOfLeaf(path)
		if reread[d] {
			before[path] = id
			continue
		}
		if _, exists := dirs[d]; !exists {
			continue
		}
		out = append(out, store.FolderLeaf{Path: path, ID: id, Hash: hash})
	}
	return out, before, true
}

// emptyDigest is the digest of a folder without leaves.
var emptyDigest = digestOf(nil)

// digestOf digests the leaves of one folder, given in store.LeafOrder.
func digestOf(ls []store.FolderLeaf) string {
	h := sha256.New()
	for _, l := range ls {
		_, _ = io.WriteString(h, l.Path+"\t"+l.Hash+"\n")
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// withDigests sets the digest of every folder of dirs from leaves (in
// store.LeafOrder, so each folder's leaves come in order).
func withDigests(dirs map[string]dirRecord, leaves []store.FolderLeaf) map[string]dirRecord {
	by := map[string][]store.FolderLeaf{}
	for _, l := range leaves {
		d := dirOfLeaf(l.Path)
		by[d] = append(by[d], l)
	}
	for d, r := range dirs {
		r.digest = digestOf(by[d])
		dirs[d] = r
	}
	return dirs
}

// saveTreeState records st, the folders (their mtimes now, and digests),
// and, when leaves is not nil, the leaves in store.LeafOrder; otherwise the
// cache keeps naming the leaves record token. start is when the tree read
// began: a folder changed after it has an mtime past the racy window's
// edge, so it stays in doubt and the next check reads it again.
func saveTreeState(k *store.KB, st treeState, dirs map[string]dirRecord, leaves []store.FolderLeaf, token string, start time.Time) {
	if leaves != nil {
		token = strconv.FormatInt(start.UnixNano(), 10)
	}
	var b strings.Builder
	b.WriteString(stalenessMagic + "\n")
	fmt.Fprintf(&b, "written %d\n", start.UnixNano())
	if token != "" {
		b.WriteString("leaves " + token + "\n")
	}
	if st.Hash != "" {
		b.WriteString("hash " + st.Hash + "\n")
	} else {
		fmt.Fprintf(&b, "invalid %d\n", st.Invalid)
	}
	nodes := k.NodesDir()
	for _, d := range slices.Sorted(maps.Keys(dirs)) {
		p, rel := nodes, "."
		if d != "" {
			p, rel = filepath.Join(nodes, filepath.FromSlash(d)), d
		}
		fi, err := os.Lstat(p)
		if err != nil || !fi.IsDir() {
			return // the folder went away while we looked: do not cache
		}
		digest := dirs[d].digest
		if digest == "" {
			digest = "-"
		}
		b.WriteString("dir ")
		b.WriteString(strconv.FormatInt(fi.ModTime().UnixNano(), 10))
		b.WriteByte(' ')
		b.WriteString(digest)
		b.WriteByte(' ')
		b.WriteString(rel)
		b.WriteByte('\n')
	}
	if os.MkdirAll(k.StateDir(), 0o755) != nil {
		return
	}
	// The cache only saves time; failing to write it is not an error. The
	// leaves go first: a cache naming a leaves file it does not match is
	// answered by a full read.
	if leaves != nil {
		var lb strings.Builder
		lb.Grow(len(leaves) * 128)
		lb.WriteString(leavesMagic + " " + token + "\n")
		for _, l := range leaves {
			lb.WriteString(l.Hash)
			lb.WriteByte('\t')
			lb.WriteString(l.ID)
			lb.WriteByte('\t')
			lb.WriteString(l.Path)
			lb.WriteByte('\n')
		}
		if writeCache(stalenessLeavesPath(k), lb.String()) != nil {
			return
		}
	}
	_ = writeCache(stalenessCachePath(k), b.String())
}

// writeCache replaces the cache file p with data through a temporary file
// and a rename, without the syncs of atomicfile.Write: a cache only saves
// time, and after a crash a torn one fails its checks and is rebuilt.
func writeCache(p, data string) error {
	f, err := os.CreateTemp(filepath.Dir(p), filepath.Base(p)+".*.tmp")
	if err != nil {
		return err
	}
	_, err = f.WriteString(data)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}

// dirOfLeaf is the folder of a leaf path relative to nodes/.
func dirOfLeaf(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

// listDirs lists the folders under root the way the tree reader does
// (skipping dot-folders), "" for root itself; used when the tree could not
// be read.
func listDirs(root string) []string {
	var out []string
	var walk func(rel string)
	walk = func(rel string) {
		p := root
		if rel != "" {
			p = filepath.Join(root, filepath.FromSlash(rel))
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return
		}
		out = append(out, rel)
		for _, e := range entries {
			if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			if rel == "" {
				walk(e.Name())
			} else {
				walk(rel + "/" + e.Name())
			}
		}
	}
	walk("")
	return out
}
