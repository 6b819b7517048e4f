package hooks

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kk-project/kk/internal/atomicfile"
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
// second change the same mtime), so the tree is hashed again until they
// settle.

const stalenessMagic = "kk-staleness 1"

// stalenessMaxAge bounds how long a cached answer is reused at all.
var stalenessMaxAge = time.Hour

// treeState is what the staleness check learns about the tree.
type treeState struct {
	Hash    string // nodes hash, hex, when every leaf could be read
	Invalid int    // number of unreadable leaves; Hash is empty then
	Cached  bool   // answered from the cache
}

func stalenessCachePath(k *store.KB) string { return filepath.Join(k.StateDir(), "staleness.cache") }

// currentTreeState returns the tree's nodes hash, from the cache when no
// folder changed since it was recorded.
func currentTreeState(k *store.KB) (treeState, error) {
	if st, ok := cachedTreeState(k, time.Now()); ok {
		return st, nil
	}
	start := time.Now()
	var st treeState
	t, err := k.ReadTree(store.LoadOptions{})
	var te *store.TreeError
	switch {
	case errors.As(err, &te):
		st.Invalid = len(te.Problems)
	case err != nil:
		return st, err
	default:
		st.Hash = indexfiles.NodesHash(t)
	}
	var dirs []string
	if t != nil {
		dirs = t.Dirs
	} else {
		dirs = listDirs(k.NodesDir())
	}
	saveTreeState(k, st, dirs, start)
	return st, nil
}

// cachedTreeState returns the cached state when it can be trusted. now is
// the real clock, the one file mtimes come from.
func cachedTreeState(k *store.KB, now time.Time) (treeState, bool) {
	data, err := os.ReadFile(stalenessCachePath(k))
	if err != nil || !bytes.HasPrefix(data, []byte(stalenessMagic+"\n")) {
		return treeState{}, false
	}
	var st treeState
	var written int64
	type dirMtime struct {
		path  string
		mtime int64
	}
	var dirs []dirMtime
	nodes := k.NodesDir()
	sc := bufio.NewScanner(bytes.NewReader(data[len(stalenessMagic)+1:]))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		kind, rest, _ := strings.Cut(sc.Text(), " ")
		switch kind {
		case "written":
			if written, err = strconv.ParseInt(rest, 10, 64); err != nil {
				return st, false
			}
			if now.Sub(time.Unix(0, written)) > stalenessMaxAge {
				return st, false
			}
		case "hash":
			st.Hash = rest
		case "invalid":
			if st.Invalid, err = strconv.Atoi(rest); err != nil {
				return st, false
			}
		case "dir":
			mt, rel, ok := strings.Cut(rest, " ")
			mtime, err := strconv.ParseInt(mt, 10, 64)
			if !ok || err != nil || written == 0 || mtime >= written-int64(store.RacyWindow) {
				return st, false
			}
			p := nodes
			if rel != "." {
				p = filepath.Join(nodes, filepath.FromSlash(rel))
			}
			dirs = append(dirs, dirMtime{p, mtime})
		default:
			return st, false
		}
	}
	if sc.Err() != nil || len(dirs) == 0 || (st.Hash == "") == (st.Invalid == 0) {
		return st, false
	}
	changed := make([]bool, len(dirs))
	workpool.Run(0, len(dirs), func(i int) {
		fi, err := os.Lstat(dirs[i].path)
		changed[i] = err != nil || !fi.IsDir() || fi.ModTime().UnixNano() != dirs[i].mtime
	})
	if slices.Contains(changed, true) {
		return st, false
	}
	st.Cached = true
	return st, true
}

// saveTreeState records st and the folders' mtimes. start is when the tree
// read began: a folder changed after it has an mtime past the racy
// window's edge, so it is never trusted and the next check hashes again.
func saveTreeState(k *store.KB, st treeState, dirs []string, start time.Time) {
	var b strings.Builder
	b.WriteString(stalenessMagic + "\n")
	fmt.Fprintf(&b, "written %d\n", start.UnixNano())
	if st.Hash != "" {
		b.WriteString("hash " + st.Hash + "\n")
	} else {
		fmt.Fprintf(&b, "invalid %d\n", st.Invalid)
	}
	nodes := k.NodesDir()
	for _, d := range dirs {
		p, rel := nodes, "."
		if d != "" {
			p, rel = filepath.Join(nodes, filepath.FromSlash(d)), d
		}
		fi, err := os.Lstat(p)
		if err != nil || !fi.IsDir() {
			return // the folder went away while we looked: do not cache
		}
		fmt.Fprintf(&b, "dir %d %s\n", fi.ModTime().UnixNano(), rel)
	}
	if os.MkdirAll(k.StateDir(), 0o755) == nil {
		// The cache only saves time; failing to write it is not an error.
		_ = atomicfile.Write(stalenessCachePath(k), []byte(b.String()), 0o644)
	}
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
