package gitx

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The objects of a worker's commit (the changed blobs, the trees along
// the changed paths, the commit) are written by this process as loose
// objects: git add and git commit --only refresh and rewrite the whole
// index and build a temporary one, which at 10,000 notes cost ten times
// what writing the few objects does. Everything around the objects (the
// branch, the reflog, git's index and their locks) is left to git: see
// Repo.Commit. git fsck --strict checks these objects in the tests, in
// SHA-1 and SHA-256 repositories.

// hashAlgo is a repository's object format.
type hashAlgo struct {
	name string // "sha1" or "sha256"
	size int    // bytes in an id
	new  func() hash.Hash
}

var (
	algoSHA1   = hashAlgo{name: "sha1", size: sha1.Size, new: sha1.New}
	algoSHA256 = hashAlgo{name: "sha256", size: sha256.Size, new: sha256.New}
)

// hexLen is the length of an id in hex.
func (a hashAlgo) hexLen() int { return 2 * a.size }

// zeroID is the all-zero id git uses for "no object".
func (a hashAlgo) zeroID() string { return strings.Repeat("0", a.hexLen()) }

// objectStore writes loose objects into a repository's objects folder
// (the common one of all its work trees).
type objectStore struct {
	dir  string
	algo hashAlgo
}

// zwriter compresses loose objects. The compressor's state (about 1 MB)
// is reused instead of allocated per object, and its output, which the
// compressor emits in pieces of a few hundred bytes, reaches the file
// through a buffer instead of a write call per piece.
type zwriter struct {
	zw  *zlib.Writer
	buf *bufio.Writer
}

// zwriters is process-wide on purpose: a pool of scratch compressors
// holds no state a caller could observe.
var zwriters = sync.Pool{New: func() any {
	zw, err := zlib.NewWriterLevel(nil, zlib.BestSpeed)
	if err != nil {
		panic(err) // BestSpeed is a valid level
	}
	return &zwriter{zw: zw, buf: bufio.NewWriterSize(nil, 64<<10)}
}}

// id returns the id of an object without writing it.
func (s objectStore) id(typ string, data []byte) []byte {
	h := s.algo.new()
	h.Write([]byte(typ + " " + strconv.Itoa(len(data)) + "\x00"))
	h.Write(data)
	return h.Sum(nil)
}

// write stores a loose object (zlib at the fastest level; a large one in
// pieces that the next version reuses: see zchunk.go; git gc packs it
// later) unless the repository has it loose already, and returns its id.
// An object it has loose already gets its modification time brought to
// now instead, as git's own writes freshen it: git gc and git prune
// delete unreachable loose objects older than their grace period, and one
// a new tree is about to name is reachable again a moment later. Where
// its time cannot be set (a file of another user), it is written anew.
func (s objectStore) write(typ string, data []byte) ([]byte, error) {
	header := typ + " " + strconv.Itoa(len(data)) + "\x00"
	id := s.id(typ, data)
	hexID := hex.EncodeToString(id)
	folder := filepath.Join(s.dir, hexID[:2])
	final := filepath.Join(folder, hexID[2:])
	if _, err := os.Stat(final); err == nil {
		now := time.Now()
		if os.Chtimes(final, now, now) == nil {
			return id, nil
		}
	}
	tmp, err := createIn(folder, "tmp_obj_")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	z := zwriters.Get().(*zwriter)
	defer zwriters.Put(z)
	z.buf.Reset(tmp)
	if len(data) >= chunkedMin {
		err = chunks.writeZlib(z.buf, []byte(header), data)
	} else {
		z.zw.Reset(z.buf)
		if _, err = z.zw.Write([]byte(header)); err == nil {
			_, err = z.zw.Write(data)
		}
		if err == nil {
			err = z.zw.Close()
		}
	}
	if err == nil {
		err = z.buf.Flush()
	}
	if err == nil {
		err = tmp.Chmod(0o444)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	if err := os.Rename(tmp.Name(), final); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	return id, nil
}

// createIn creates a temporary file named pattern in the object folder
// dir, making the folder first. git gc (its prune-packed step) removes an
// object folder it empties, and may do so between the folder's making and
// the file's creation: the folder is then made again, as git's own object
// writes do, a bounded number of times.
func createIn(dir, pattern string) (*os.File, error) {
	for try := 0; ; try++ {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		f, err := os.CreateTemp(dir, pattern)
		if err == nil || !errors.Is(err, fs.ErrNotExist) || try == 100 {
			return f, err
		}
	}
}

// catFile is a running git cat-file --batch.
type catFile struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func startCatFile(dir string) (*catFile, error) {
	cmd, in, out, err := startKept(dir, nil, []string{"GIT_OPTIONAL_LOCKS=0"}, "cat-file", "--batch")
	if err != nil {
		if _, lerr := exec.LookPath("git"); lerr != nil {
			return nil, ErrNoGit
		}
		return nil, err
	}
	return &catFile{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 64<<10)}, nil
}

// startKept starts a git process kk keeps for many requests (cat-file,
// update-ref, check-attr with --stdin), in its own process group, with
// pipes to its standard input and output; stderr, when not nil, takes
// its standard error.
func startKept(dir string, stderr io.Writer, env []string, args ...string) (*exec.Cmd, io.WriteCloser, io.Reader, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "LC_ALL=C", "GIT_TERMINAL_PROMPT=0"), env...)
	cmd.Stderr = stderr
	ownGroup(cmd)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, nil, err
	}
	return cmd, in, out, nil
}

func (c *catFile) close() {
	_ = c.in.Close()
	_ = c.cmd.Wait()
}

// get returns an object's id (hex), type and content; typ is "missing"
// for a name that names no object.
func (c *catFile) get(name string) (id, typ string, body []byte, err error) {
	if strings.ContainsAny(name, "\n") {
		return "", "", nil, fmt.Errorf("gitx: object name %q", name)
	}
	if _, err := io.WriteString(c.in, name+"\n"); err != nil {
		return "", "", nil, err
	}
	line, err := c.out.ReadString('\n')
	if err != nil {
		return "", "", nil, err
	}
	f := strings.Fields(line)
	if len(f) >= 2 && f[len(f)-1] == "missing" || len(f) >= 2 && f[len(f)-1] == "ambiguous" {
		return "", "missing", nil, nil
	}
	if len(f) != 3 {
		return "", "", nil, fmt.Errorf("git cat-file: unexpected %q", line)
	}
	size, err := strconv.Atoi(f[2])
	if err != nil {
		return "", "", nil, err
	}
	body = make([]byte, size+1) // the content and a newline
	if _, err := io.ReadFull(c.out, body); err != nil {
		return "", "", nil, err
	}
	return f[0], f[1], body[:size], nil
}

// treeEntry is one entry of a tree object.
type treeEntry struct {
	mode string // 100644, 100755, 120000, 40000, 160000
	name string
	id   []byte
}

func parseTree(body []byte, idSize int) ([]treeEntry, error) {
	var out []treeEntry
	for len(body) > 0 {
		sp := bytes.IndexByte(body, ' ')
		nul := bytes.IndexByte(body, 0)
		if sp < 0 || nul < sp || len(body) < nul+1+idSize {
			return nil, errors.New("gitx: malformed tree object")
		}
		out = append(out, treeEntry{mode: string(body[:sp]), name: string(body[sp+1 : nul]), id: slices.Clone(body[nul+1 : nul+1+idSize])})
		body = body[nul+1+idSize:]
	}
	return out, nil
}

// treeKey is the name a tree entry sorts by: git compares a folder's
// name as if it ended in "/".
func treeKey(e treeEntry) string {
	if e.mode == "40000" {
		return e.name + "/"
	}
	return e.name
}

// cached is what the object cache keeps of a tree (its entries) or a
// commit (its tree). Objects never change, so an entry is never stale.
type cached struct {
	entries []treeEntry
	tree    []byte
}

// objectCache keeps the trees and commits this process wrote or read,
// so that a worker's next commit, which builds on its last one, reads no
// object from git. Ids of both formats differ in length, so one cache
// serves both.
type objectCache struct {
	mu sync.Mutex
	m  map[string]cached
}

// maxCachedObjects bounds the cache; past it, it starts over.
const maxCachedObjects = 1 << 14

// objects is process-wide on purpose: it is keyed by object id, and an
// object never changes, so no caller can see a stale entry or needs its own.
var objects objectCache

func (c *objectCache) get(id string) (cached, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[id]
	return v, ok
}

func (c *objectCache) put(id string, v cached) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxCachedObjects {
		c.m = map[string]cached{}
	}
	c.m[id] = v
}

// treeReader reads trees and commits through a cat-file, with the
// object cache in front.
type treeReader struct {
	get  func(name string) (id, typ string, body []byte, err error) // Repo.get
	algo hashAlgo
}

// tree returns the entries of tree id.
func (r treeReader) tree(id []byte) ([]treeEntry, error) {
	key := hex.EncodeToString(id)
	if c, ok := objects.get(key); ok && c.entries != nil {
		return slices.Clone(c.entries), nil
	}
	_, typ, body, err := r.get(key)
	if err != nil {
		return nil, err
	}
	if typ != "tree" {
		return nil, fmt.Errorf("gitx: %s is a %s, not a tree", key, typ)
	}
	entries, err := parseTree(body, r.algo.size)
	if err != nil {
		return nil, err
	}
	objects.put(key, cached{entries: slices.Clone(entries)})
	return entries, nil
}

// commitTree returns the tree of commit id (hex).
func (r treeReader) commitTree(id string) ([]byte, error) {
	if c, ok := objects.get(id); ok && c.tree != nil {
		return c.tree, nil
	}
	_, typ, body, err := r.get(id)
	if err != nil {
		return nil, err
	}
	if typ != "commit" {
		return nil, fmt.Errorf("gitx: %s is a %s, not a commit", id, typ)
	}
	rest, ok := strings.CutPrefix(string(body), "tree ")
	if !ok || len(rest) < r.algo.hexLen() {
		return nil, fmt.Errorf("gitx: commit %s has no tree", id)
	}
	tree, err := hex.DecodeString(rest[:r.algo.hexLen()])
	if err != nil {
		return nil, fmt.Errorf("gitx: commit %s: %w", id, err)
	}
	objects.put(id, cached{tree: tree})
	return tree, nil
}

// pathTree returns the id of the tree at folder path (slash-separated)
// in commit id, nil when the commit has none there.
func (r treeReader) pathTree(id, path string) ([]byte, error) {
	tree, err := r.commitTree(id)
	if err != nil {
		return nil, err
	}
	for name := range strings.SplitSeq(strings.Trim(path, "/"), "/") {
		entries, err := r.tree(tree)
		if err != nil {
			return nil, err
		}
		tree = nil
		for _, e := range entries {
			if e.name == name && e.mode == "40000" {
				tree = e.id
				break
			}
		}
		if tree == nil {
			return nil, nil
		}
	}
	return tree, nil
}

// errShape is a change that would turn a file into a folder or a folder
// into a file: kk never makes one (a leaf and a folder of the same name
// are refused before), and the commit refuses it too.
var errShape = errors.New("gitx: the commit would replace a folder with a file or a file with a folder")

// rewriteTree writes the tree at path base (id, or none when id is nil)
// with changes applied to the paths below it, and returns its id; empty
// is true when nothing is left in it.
func rewriteTree(s objectStore, r treeReader, id []byte, base string, changes map[string]*treeEntry) ([]byte, bool, error) {
	var entries []treeEntry
	if id != nil {
		var err error
		if entries, err = r.tree(id); err != nil {
			return nil, false, err
		}
	}
	byName := map[string]int{}
	for i, e := range entries {
		byName[e.name] = i
	}
	// Direct children changed, and the folders below holding changes.
	files := map[string]*treeEntry{}
	folders := map[string]bool{}
	for p, e := range changes {
		rest, ok := strings.CutPrefix(p, base)
		if !ok {
			continue
		}
		if name, _, deeper := strings.Cut(rest, "/"); deeper {
			folders[name] = true
		} else {
			files[rest] = e
		}
	}
	remove := map[string]bool{}
	for name, e := range files {
		i, had := byName[name]
		switch {
		case had && entries[i].mode == "40000" && e != nil, folders[name]:
			return nil, false, fmt.Errorf("%w: %s%s", errShape, base, name)
		case e == nil && had && entries[i].mode != "40000":
			remove[name] = true
		case e != nil && had:
			entries[i].mode, entries[i].id = e.mode, e.id
		case e != nil:
			entries = append(entries, treeEntry{mode: e.mode, name: name, id: e.id})
			byName[name] = len(entries) - 1
		}
	}
	for name := range folders {
		var sub []byte
		i, had := byName[name]
		if had {
			if entries[i].mode != "40000" {
				return nil, false, fmt.Errorf("%w: %s%s", errShape, base, name)
			}
			sub = entries[i].id
		}
		newID, empty, err := rewriteTree(s, r, sub, base+name+"/", changes)
		if err != nil {
			return nil, false, err
		}
		switch {
		case empty && had:
			remove[name] = true
		case empty:
		case had:
			entries[i].id = newID
		default:
			entries = append(entries, treeEntry{mode: "40000", name: name, id: newID})
			byName[name] = len(entries) - 1
		}
	}
	entries = slices.DeleteFunc(entries, func(e treeEntry) bool { return remove[e.name] })
	if len(entries) == 0 {
		return nil, true, nil
	}
	slices.SortFunc(entries, func(a, b treeEntry) int { return strings.Compare(treeKey(a), treeKey(b)) })
	var buf bytes.Buffer
	for _, e := range entries {
		buf.WriteString(e.mode)
		buf.WriteByte(' ')
		buf.WriteString(e.name)
		buf.WriteByte(0)
		buf.Write(e.id)
	}
	newID, err := s.write("tree", buf.Bytes())
	if err == nil {
		objects.put(hex.EncodeToString(newID), cached{entries: entries})
	}
	return newID, false, err
}

// Blobs returns the content of each object name ("<rev>:<path>", a path
// beginning with ./ taken relative to dir) that names a blob, from one git
// cat-file --batch; a name that names nothing (no such revision, no such
// path in it) or no blob is left out of the map.
func Blobs(ctx context.Context, dir string, names []string) (map[string][]byte, error) {
	var in bytes.Buffer
	for _, n := range names {
		if strings.ContainsAny(n, "\n") {
			return nil, fmt.Errorf("gitx: object name %q", n)
		}
		in.WriteString(n + "\n")
	}
	out, err := RunWith(ctx, dir, []string{"GIT_OPTIONAL_LOCKS=0"}, in.Bytes(), "cat-file", "--batch")
	if err != nil {
		return nil, err
	}
	blobs := map[string][]byte{}
	for _, n := range names {
		line, rest, ok := bytes.Cut(out, []byte("\n"))
		if !ok {
			return nil, fmt.Errorf("git cat-file: output ends before %q", n)
		}
		out = rest
		f := strings.Fields(string(line))
		if len(f) != 3 {
			continue // "<name> missing", "<name> ambiguous"
		}
		size, err := strconv.Atoi(f[2])
		if err != nil || size+1 > len(out) {
			return nil, fmt.Errorf("git cat-file: unexpected %q", line)
		}
		if f[1] == "blob" {
			blobs[n] = out[:size:size]
		}
		out = out[size+1:]
	}
	return blobs, nil
}
