package store

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// FolderLeaf is one leaf of a folder, as ReadFolder reads it.
type FolderLeaf struct {
	Path string // relative to nodes/, slash-separated
	ID   string
	Hash string // LeafSum of the leaf's bytes (CRLF read as LF), as NodesHash takes it
	// Err says why the leaf is not part of a readable tree (it does not
	// parse, it is too large, or it is a symlink that is broken or leads
	// out of the tree); ID and Hash are empty then.
	Err error
}

// ReadFolder reads the leaves directly in the folder rel of nodes/ (""
// for nodes/ itself) by the rules ReadTree follows, without its cache, and
// lists the folder's subfolders (relative to nodes/). It is for callers
// that keep their own record of the tree's leaves and read again only the
// folders that changed (the session-start staleness check). A folder that
// does not exist is an error satisfying errors.Is(err, fs.ErrNotExist).
func (k *KB) ReadFolder(rel string) (leaves []FolderLeaf, subdirs []string, err error) {
	root := k.NodesDir()
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, nil, err
	}
	dir := root
	if rel != "" {
		dir = filepath.Join(root, filepath.FromSlash(rel))
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	for _, d := range entries {
		child := d.Name()
		if rel != "" {
			child = rel + "/" + child
		}
		p := filepath.Join(dir, d.Name())
		kind, f, problem := classify(realRoot, p, child, d)
		switch kind {
		case entryDir:
			subdirs = append(subdirs, child)
		case entryProblem:
			leaves = append(leaves, FolderLeaf{Path: child, Err: problem})
		case entryLeaf:
			if f.Size < 0 {
				fi, err := os.Lstat(p)
				if err != nil {
					leaves = append(leaves, FolderLeaf{Path: child, Err: err})
					continue
				}
				f.Size = fi.Size()
			}
			n, hash, err := readLeaf(f)
			if err != nil {
				leaves = append(leaves, FolderLeaf{Path: child, Err: err})
				continue
			}
			leaves = append(leaves, FolderLeaf{Path: child, ID: n.ID, Hash: hash})
		}
	}
	return leaves, subdirs, nil
}

// LeafHash returns the LeafSum of the bytes of the leaf at path
// (relative to nodes/), as NodesHash takes it, or "" for no such leaf.
func (t *Tree) LeafHash(path string) string { return t.Hashes[path] }

// LeafOrder orders leaves as NodesHash orders its lines
// "<path>\t<hash>" (UTF-16 code units), without building the lines.
func LeafOrder(a, b FolderLeaf) int {
	pa, pb := a.Path, b.Path
	switch {
	case pa == pb:
		return strings.Compare(a.Hash, b.Hash)
	case strings.HasPrefix(pb, pa):
		return cmpByte('\t', pb[len(pa)]) // the line of a continues with its tab
	case strings.HasPrefix(pa, pb):
		return cmpByte(pa[len(pb)], '\t')
	}
	return CompareUTF16(pa, pb)
}

func cmpByte(a, b byte) int { return int(a) - int(b) }

// HashSorted is NodesHash of a tree whose leaves are ls, given in
// LeafOrder: a record of leaves kept sorted is hashed without sorting it.
func HashSorted(ls []FolderLeaf) string {
	sum := sha256.New()
	w := bufio.NewWriterSize(sum, 64<<10)
	for i, l := range ls {
		if i > 0 {
			w.WriteByte('\n')
		}
		w.WriteString(l.Path)
		w.WriteByte('\t')
		w.WriteString(l.Hash)
	}
	_ = w.Flush() // into a hash, which does not fail
	return hex.EncodeToString(sum.Sum(nil))
}

// HashLeaves is the nodes hash (indexfiles.NodesHash) of a tree whose
// leaves are exactly the keys of hashes (path relative to nodes/ → LeafSum
// of the leaf's bytes): sha256 over the lines "<path>\t<hash>" sorted
// by UTF-16 code units, joined by "\n".
func HashLeaves(hashes map[string]string) string {
	lines := make([]string, 0, len(hashes))
	for p, h := range hashes {
		lines = append(lines, p+"\t"+h)
	}
	return HashLeafLines(lines)
}

// HashLeafLines is HashLeaves of the lines "<path>\t<sha256>" of the
// leaves, in any order (it sorts them in place).
func HashLeafLines(lines []string) string {
	SortLeafLines(lines)
	return HashLines(lines)
}

// SortLeafLines sorts leaf lines in the order HashLeaves hashes them:
// UTF-16 order, which is byte order unless a path holds a character at or
// above U+E000 (whose UTF-8 form starts with a byte of 0xEE or more).
func SortLeafLines(lines []string) {
	for _, l := range lines {
		for i := 0; i < len(l); i++ {
			if l[i] >= 0xEE {
				slices.SortFunc(lines, CompareUTF16)
				return
			}
		}
	}
	slices.Sort(lines)
}

// HashLines is sha256 (hex) over lines joined by "\n".
func HashLines(lines []string) string {
	sum := sha256.New()
	w := bufio.NewWriterSize(sum, 64<<10)
	for i, l := range lines {
		if i > 0 {
			w.WriteByte('\n')
		}
		w.WriteString(l)
	}
	_ = w.Flush() // into a hash, which does not fail
	return hex.EncodeToString(sum.Sum(nil))
}
