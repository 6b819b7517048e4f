package kb

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/workpool"
)

// Reserved file names under nodes/ that are never leaves.
var reservedNames = map[string]bool{"index.md": true, "log.md": true}

// Tree is every leaf of a knowledge base, read in one pass.
type Tree struct {
	// Leaves sorted by path (root collation, as kenkeep sorts them).
	Leaves []*node.Node
	// Dirs is every folder under nodes/, "" for nodes/ itself, sorted.
	Dirs []string
	// IndexDirs holds the folders that contain an index.md.
	IndexDirs map[string]bool

	hashes map[string]string // leaf path -> sha256 hex of its bytes
	byID   map[string]*node.Node
}

// ByID returns the leaf with the given id.
func (t *Tree) ByID(id string) (*node.Node, bool) {
	n, ok := t.byID[id]
	return n, ok
}

// Resolve maps an id to its leaf's path; it is a node.Resolver.
func (t *Tree) Resolve(id string) (string, bool) {
	if n, ok := t.byID[id]; ok {
		return n.Path, true
	}
	return "", false
}

// put records in memory that leaf n (whose file has the given hash) now
// exists, replacing old (nil when n is new). Writers use it so that they
// need not read the tree a second time to regenerate the index.
func (t *Tree) put(old, n *node.Node, hash string) {
	if old != nil {
		t.Leaves = slices.DeleteFunc(t.Leaves, func(x *node.Node) bool { return x == old })
		delete(t.hashes, old.Path)
		delete(t.byID, old.ID)
	}
	at, _ := slices.BinarySearchFunc(t.Leaves, n.Path, func(x *node.Node, p string) int { return LocaleCompare(x.Path, p) })
	t.Leaves = slices.Insert(t.Leaves, at, n)
	t.hashes[n.Path] = hash
	t.byID[n.ID] = n
	if d := n.Dir(); !slices.Contains(t.Dirs, d) {
		for ; d != "" && !slices.Contains(t.Dirs, d); d = dirOf(d) {
			t.Dirs = append(t.Dirs, d)
		}
		SortLocale(t.Dirs)
	}
}

// Hash returns the sha256 (hex) of a leaf file's bytes.
func (t *Tree) Hash(path string) string { return t.hashes[path] }

// TreeError lists every leaf that could not be read.
type TreeError struct {
	Problems []error
}

func (e *TreeError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d problem(s) in the knowledge tree:", len(e.Problems))
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		b.WriteString(p.Error())
	}
	return b.String()
}

func (e *TreeError) Unwrap() []error { return e.Problems }

// LoadOptions tune ReadTree.
type LoadOptions struct {
	// NoCache reads and parses every leaf even when the leaf cache says it
	// is unchanged.
	NoCache bool
	// Bodies asks for leaf bodies; leaves served from the cache have none.
	Bodies bool
	// NoSave leaves the cache file alone (for commands that promise to
	// write nothing).
	NoSave bool
}

type leafFile struct {
	rel   string
	abs   string
	size  int64
	mtime int64
}

// ReadTree reads every leaf under nodes/. It is all or nothing: if any leaf
// is invalid, it returns a *TreeError naming each one.
func (k *KB) ReadTree(opts LoadOptions) (*Tree, error) {
	files, dirs, indexDirs, err := k.scan()
	if err != nil {
		return nil, err
	}
	var cache *leafCache
	if !opts.NoCache && !opts.Bodies {
		cache = k.loadCache()
	}
	leaves := make([]*node.Node, len(files))
	hashes := make([]string, len(files))
	errs := make([]error, len(files))
	var fresh []int
	for i, f := range files {
		if cache != nil {
			if n, h, ok := cache.lookup(f); ok {
				leaves[i], hashes[i] = n, h
				continue
			}
		}
		fresh = append(fresh, i)
	}
	parallel(len(fresh), func(j int) {
		i := fresh[j]
		leaves[i], hashes[i], errs[i] = readLeaf(files[i])
		if leaves[i] != nil {
			leaves[i].Release(opts.Bodies)
		}
	})
	t := &Tree{Dirs: dirs, IndexDirs: indexDirs, hashes: make(map[string]string, len(files)), byID: make(map[string]*node.Node, len(files))}
	var problems []error
	for i, f := range files {
		if errs[i] != nil {
			problems = append(problems, errs[i])
			continue
		}
		t.hashes[f.rel] = hashes[i]
		t.Leaves = append(t.Leaves, leaves[i])
	}
	seen := map[string]string{}
	for _, n := range t.Leaves {
		if other, dup := seen[n.ID]; dup {
			problems = append(problems, &node.Error{Path: n.Path, Field: idKey(n), Msg: fmt.Sprintf("duplicate id %s (also used by %s); ids must be unique", n.ID, other)})
			continue
		}
		seen[n.ID] = n.Path
		t.byID[n.ID] = n
	}
	if len(problems) > 0 {
		return nil, &TreeError{Problems: problems}
	}
	if !opts.Bodies && !opts.NoSave && (cache == nil || len(fresh) > 0 || len(cache.entries) != len(files)) {
		k.saveCache(files, leaves, hashes)
	}
	return t, nil
}

func idKey(n *node.Node) string {
	if n.Format == 2 {
		return "id"
	}
	return node.KeyID
}

func readLeaf(f leafFile) (*node.Node, string, error) {
	if f.size > node.MaxSize {
		return nil, "", &node.Error{Path: f.rel, Msg: fmt.Sprintf("leaf is %d bytes; the limit is %d", f.size, node.MaxSize)}
	}
	src, err := os.ReadFile(f.abs)
	if err != nil {
		return nil, "", &node.Error{Path: f.rel, Msg: err.Error()}
	}
	sum := sha256.Sum256(src)
	n, err := node.Parse(f.rel, src)
	if err != nil {
		return nil, "", err
	}
	return n, hex.EncodeToString(sum[:]), nil
}

// ReadLeaf reads one leaf by its path relative to nodes/, with its body and
// everything needed to write it back.
func (k *KB) ReadLeaf(rel string) (*node.Node, error) {
	src, err := os.ReadFile(k.NodePath(rel))
	if err != nil {
		return nil, err
	}
	return node.Parse(rel, src)
}

// scan lists the leaf files and folders under nodes/ in a stable order.
func (k *KB) scan() (files []leafFile, dirs []string, indexDirs map[string]bool, err error) {
	root := k.NodesDir()
	indexDirs = map[string]bool{}
	if _, err := os.Stat(root); errors.Is(err, fs.ErrNotExist) {
		return nil, []string{""}, indexDirs, nil
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, nil, nil, err
	}
	var problems []error
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := ""
		if len(p) > len(root) {
			rel = filepath.ToSlash(p[len(root)+1:])
		}
		kind, f, problem := classify(realRoot, p, rel, d)
		switch kind {
		case entrySkipDir:
			return filepath.SkipDir
		case entryProblem:
			problems = append(problems, problem)
		case entryDir:
			dirs = append(dirs, rel)
		case entryIndex:
			indexDirs[dirOf(rel)] = true
		case entryLeaf:
			files = append(files, f)
		}
		return nil
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("reading %s: %w", k.Rel(root), err)
	}
	// Stat the regular files on all cores: on a large tree this is most of
	// the cost of reading an unchanged tree.
	statErrs := make([]error, len(files))
	parallel(len(files), func(i int) {
		if files[i].size >= 0 {
			return
		}
		fi, err := os.Lstat(files[i].abs)
		if err != nil {
			statErrs[i] = err
			return
		}
		files[i].size, files[i].mtime = fi.Size(), fi.ModTime().UnixNano()
	})
	if err := errors.Join(statErrs...); err != nil {
		return nil, nil, nil, fmt.Errorf("reading %s: %w", k.Rel(root), err)
	}
	if len(problems) > 0 {
		return nil, nil, nil, &TreeError{Problems: problems}
	}
	rels := make([]string, len(files))
	for i, f := range files {
		rels[i] = f.rel
	}
	sorted := make([]leafFile, len(files))
	for i, j := range sortedOrder(rels) {
		sorted[i] = files[j]
	}
	SortLocale(dirs)
	return sorted, dirs, indexDirs, nil
}

// entryKind is what an entry under nodes/ is to the tree readers.
type entryKind int

const (
	entryNone    entryKind = iota // not part of the tree (other files, dot files, links to folders)
	entrySkipDir                  // a dot folder: not part of the tree, nor anything in it
	entryDir                      // a folder of the tree
	entryIndex                    // a folder's index.md
	entryLeaf                     // a leaf
	entryProblem                  // a symlink that is broken or leads out of the tree
)

// classify says what the entry d at path p (rel, relative to nodes/) is,
// by the one rule both tree readers (scan, ReadFolder) follow. realRoot is
// nodes/ with its symlinks resolved. A leaf reached through a symlink
// comes with its size and mtime; a regular one with size -1 (not stated
// yet).
func classify(realRoot, p, rel string, d fs.DirEntry) (entryKind, leafFile, error) {
	name := d.Name()
	if rel != "" && strings.HasPrefix(name, ".") {
		if d.IsDir() {
			return entrySkipDir, leafFile{}, nil
		}
		return entryNone, leafFile{}, nil
	}
	if d.Type()&fs.ModeSymlink != 0 {
		target, err := filepath.EvalSymlinks(p)
		if err != nil {
			return entryProblem, leafFile{}, &node.Error{Path: rel, Msg: fmt.Sprintf("broken symlink: %v", err)}
		}
		if !within(realRoot, target) {
			return entryProblem, leafFile{}, &node.Error{Path: rel, Msg: fmt.Sprintf("symlink points outside the knowledge tree (to %s); replace it with a real file", target)}
		}
		fi, err := os.Stat(target)
		if err != nil || fi.IsDir() {
			return entryNone, leafFile{}, nil // links to folders inside the tree are not followed
		}
		if strings.HasSuffix(name, ".md") && !reservedNames[name] {
			return entryLeaf, leafFile{rel: rel, abs: p, size: fi.Size(), mtime: fi.ModTime().UnixNano()}, nil
		}
		return entryNone, leafFile{}, nil
	}
	switch {
	case d.IsDir():
		return entryDir, leafFile{}, nil
	case !strings.HasSuffix(name, ".md"):
		return entryNone, leafFile{}, nil
	case name == "index.md":
		return entryIndex, leafFile{}, nil
	case reservedNames[name]:
		return entryNone, leafFile{}, nil
	}
	return entryLeaf, leafFile{rel: rel, abs: p, size: -1}, nil
}

func dirOf(rel string) string {
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[:i]
	}
	return ""
}

func within(root, target string) bool {
	r, err := filepath.Rel(root, target)
	return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && !filepath.IsAbs(r)
}

// parallel runs fn(0..n-1) on all cores.
func parallel(n int, fn func(i int)) { workpool.Run(0, n, fn) }

// parallelN runs fn(0..n-1) on up to workers goroutines.
func parallelN(workers, n int, fn func(i int)) { workpool.Run(workers, n, fn) }
