package gitx

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
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

// fastCommit makes CommitChanges' commit without the work that grows with
// the repository: git add and git commit --only refresh and rewrite the
// whole index (and build a temporary one), so a commit of three files in a
// repository of 10,000 costs a quarter of a second. Here the new blobs,
// the trees along the changed paths and the commit are written as loose
// objects from Go, the branch moves (compare and swap against the HEAD
// read) and the index learns the new entries, both in this process where
// it can (inproc.go), else with git update-ref and git update-index
// --index-info. The trees of HEAD are read through one git cat-file
// --batch.
//
// It handles what a knowledge worker commits: regular files, in a SHA-1
// repository with a commit at HEAD. Anything else returns errSlowPath and
// the caller commits with porcelain git. committed tells whether the
// branch moved (an error after that is the index update's).
func fastCommit(ctx context.Context, dir string, author Author, message string, written, removed []string) (committed bool, err error) {
	return fastCommitFrom(ctx, dir, author, message, written, removed, nil)
}

// fastCommitFrom is fastCommit; with contents set, the written files'
// contents come from it (by path) instead of the work tree.
func fastCommitFrom(ctx context.Context, dir string, author Author, message string, written, removed []string, contents map[string][]byte) (committed bool, err error) {
	err = fastCommitObjects(ctx, dir, author, message, written, removed, contents, func(top, cid, head string, indexInfo *bytes.Buffer) error {
		subject, _, _ := strings.Cut(message, "\n")
		gitDir, _, err := repoDirs(ctx, dir)
		if err != nil {
			return err
		}
		switch err := updateHead(ctx, gitDir, top, cid, head, author, "commit: "+subject); {
		case errors.Is(err, errSlowPath):
			if _, err := run(ctx, top, nil, []string{"update-ref", "-m", "commit: " + subject, "HEAD", cid, head}); err != nil {
				return err
			}
		case err != nil:
			return err
		}
		committed = true
		if indexInfo.Len() == 0 {
			return nil
		}
		if changes, err := parseIndexInfo(indexInfo.Bytes()); err == nil {
			if err := updateIndex(ctx, gitDir, changes); !errors.Is(err, errSlowPath) {
				return err
			}
		}
		info := indexInfo.Bytes()
		return waitingForLocks(ctx, func() error {
			cmd := exec.CommandContext(ctx, "git", "-c", "core.quotepath=off", "update-index", "--index-info")
			cmd.Dir = top
			cmd.Env = append(os.Environ(), "LC_ALL=C", "GIT_TERMINAL_PROMPT=0")
			cmd.Stdin = bytes.NewReader(info)
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("git update-index: %s", strings.TrimSpace(string(out)))
			}
			return nil
		})
	})
	return committed, err
}

func fastCommitObjects(ctx context.Context, dir string, author Author, message string, written, removed []string, contents map[string][]byte, land func(top, cid, head string, indexInfo *bytes.Buffer) error) error {
	gitDir, top, err := repoDirs(ctx, dir)
	if err != nil {
		return err
	}
	prefix, err := filepath.Rel(top, dir)
	if err != nil {
		return errSlowPath
	}
	prefix = filepath.ToSlash(prefix)
	if prefix == "." {
		prefix = ""
	} else {
		prefix += "/"
	}
	cat := &lazyCat{ctx: ctx, dir: dir}
	defer cat.close()
	head, rootTree, err := cat.head(gitDir)
	if err != nil {
		return err
	}

	changes := map[string]*treeEntry{} // repository path → new entry; nil removes it
	var indexInfo bytes.Buffer
	for _, p := range written {
		mode := "100644"
		data, ok := contents[p]
		fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(p)))
		switch {
		case ok:
			// The file may have changed since (the next job): only its
			// executable bit is taken from it.
			if err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				mode = "100755"
			}
		case err != nil || !fi.Mode().IsRegular():
			return errSlowPath
		default:
			if data, err = os.ReadFile(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
				return err
			}
			if fi.Mode()&0o111 != 0 {
				mode = "100755"
			}
		}
		id, err := writeObject(gitDir, "blob", data)
		if err != nil {
			return err
		}
		changes[prefix+p] = &treeEntry{mode: mode, id: id}
		fmt.Fprintf(&indexInfo, "%s %s\t%s\n", mode, hex.EncodeToString(id), prefix+p)
	}
	for _, p := range removed {
		if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(p))); err == nil && contents == nil {
			return errSlowPath // "removed" but there: let git decide
		}
		changes[prefix+p] = nil
		fmt.Fprintf(&indexInfo, "0 %s\t%s\n", strings.Repeat("0", 40), prefix+p)
	}
	newRoot, _, err := rewriteTree(gitDir, cat, rootTree, "", changes)
	if err != nil {
		return err
	}
	now := time.Now()
	sig := fmt.Sprintf("%s <%s> %d %s", author.Name, author.Email, now.Unix(), now.Format("-0700"))
	commit := fmt.Sprintf("tree %s\nparent %s\nauthor %s\ncommitter %s\n\n%s\n", hex.EncodeToString(newRoot), head, sig, sig, message)
	cid, err := writeObject(gitDir, "commit", []byte(commit))
	if err != nil {
		return err
	}
	objects.put(hex.EncodeToString(cid), cached{tree: newRoot})
	return land(top, hex.EncodeToString(cid), head, &indexInfo)
}

// errSlowPath sends CommitChanges to porcelain git.
var errSlowPath = errors.New("gitx: fast commit does not apply")

// repoDirsCache remembers each folder's git folder and work tree root: a
// worker commits from the same folder again and again.
var repoDirsCache sync.Map // dir → [2]string

// repoDirs returns the git folder and the work tree's root of dir.
func repoDirs(ctx context.Context, dir string) (gitDir, top string, err error) {
	if v, ok := repoDirsCache.Load(dir); ok {
		d := v.([2]string)
		if _, err := os.Stat(d[0]); err == nil {
			return d[0], d[1], nil
		}
	}
	out, err := Read(ctx, dir, "rev-parse", "--absolute-git-dir", "--show-toplevel")
	if err != nil {
		return "", "", err
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		return "", "", errSlowPath
	}
	repoDirsCache.Store(dir, [2]string{lines[0], lines[1]})
	return lines[0], lines[1], nil
}

// catFile is a running git cat-file --batch.
type catFile struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func startCatFile(ctx context.Context, dir string) (*catFile, error) {
	cmd := exec.CommandContext(ctx, "git", "cat-file", "--batch")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0")
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		if _, lerr := exec.LookPath("git"); lerr != nil {
			return nil, ErrNoGit
		}
		return nil, err
	}
	return &catFile{cmd: cmd, in: in, out: bufio.NewReader(out)}, nil
}

func (c *catFile) close() {
	_ = c.in.Close() // git cat-file ends at the end of its input
	_ = c.cmd.Wait()
}

// get returns an object's id (hex), type and content; typ is "missing"
// for an object that does not exist.
func (c *catFile) get(name string) (id, typ string, body []byte, err error) {
	if _, err := io.WriteString(c.in, name+"\n"); err != nil {
		return "", "", nil, err
	}
	line, err := c.out.ReadString('\n')
	if err != nil {
		return "", "", nil, err
	}
	f := strings.Fields(line)
	if len(f) == 2 && f[1] == "missing" {
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

func parseTree(body []byte) ([]treeEntry, error) {
	var out []treeEntry
	for len(body) > 0 {
		sp := bytes.IndexByte(body, ' ')
		nul := bytes.IndexByte(body, 0)
		if sp < 0 || nul < sp || len(body) < nul+21 {
			return nil, errors.New("gitx: malformed tree object")
		}
		out = append(out, treeEntry{mode: string(body[:sp]), name: string(body[sp+1 : nul]), id: slices.Clone(body[nul+1 : nul+21])})
		body = body[nul+21:]
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

// rewriteTree writes the tree at path base (id, or none when id is nil)
// with changes applied to the paths below it, and returns its id; empty
// is true when nothing is left in it.
func rewriteTree(gitDir string, cat *lazyCat, id []byte, base string, changes map[string]*treeEntry) ([]byte, bool, error) {
	var entries []treeEntry
	if id != nil {
		var err error
		if entries, err = cat.tree(id); err != nil {
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
		case had && entries[i].mode == "40000", folders[name]:
			return nil, false, errSlowPath // a file replacing a folder, or both
		case e == nil && had:
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
				return nil, false, errSlowPath // a folder replacing a file
			}
			sub = entries[i].id
		}
		newID, empty, err := rewriteTree(gitDir, cat, sub, base+name+"/", changes)
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
	newID, err := writeObject(gitDir, "tree", buf.Bytes())
	if err == nil {
		objects.put(hex.EncodeToString(newID), cached{entries: entries})
	}
	return newID, false, err
}

// cached is what the object cache keeps of a tree (its entries) or a
// commit (its tree). Objects never change, so an entry is never stale.
type cached struct {
	entries []treeEntry
	tree    []byte
}

// objectCache keeps the trees and commits this process wrote or read,
// so that a worker's next commit, which builds on its last one, reads no
// object from git.
type objectCache struct {
	mu sync.Mutex
	m  map[string]cached
}

// maxCachedObjects bounds the cache; past it, it starts over.
const maxCachedObjects = 1 << 14

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

// lazyCat reads objects through git cat-file --batch, started on first
// need.
type lazyCat struct {
	ctx context.Context
	dir string
	cf  *catFile
}

func (l *lazyCat) get(name string) (id, typ string, body []byte, err error) {
	if l.cf == nil {
		if l.cf, err = startCatFile(l.ctx, l.dir); err != nil {
			return "", "", nil, err
		}
	}
	return l.cf.get(name)
}

func (l *lazyCat) close() {
	if l.cf != nil {
		l.cf.close()
	}
}

// tree returns the entries of tree id.
func (l *lazyCat) tree(id []byte) ([]treeEntry, error) {
	key := hex.EncodeToString(id)
	if c, ok := objects.get(key); ok && c.entries != nil {
		return slices.Clone(c.entries), nil
	}
	_, typ, body, err := l.get(key)
	if err != nil {
		return nil, err
	}
	if typ != "tree" {
		return nil, errSlowPath
	}
	entries, err := parseTree(body)
	if err != nil {
		return nil, err
	}
	objects.put(key, cached{entries: slices.Clone(entries)})
	return entries, nil
}

// head returns HEAD's commit (hex) and its tree. A branch whose ref is a
// loose file is read from it; otherwise git answers.
func (l *lazyCat) head(gitDir string) (string, []byte, error) {
	commit := ""
	if data, err := os.ReadFile(filepath.Join(gitDir, "HEAD")); err == nil {
		if ref, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "ref: "); ok && strings.HasPrefix(ref, "refs/heads/") {
			if id, err := os.ReadFile(filepath.Join(gitDir, filepath.FromSlash(ref))); err == nil {
				commit = strings.TrimSpace(string(id))
			}
		}
	}
	if c, ok := objects.get(commit); ok && len(commit) == 40 && c.tree != nil {
		return commit, c.tree, nil
	}
	id, typ, body, err := l.get("HEAD")
	if err != nil {
		return "", nil, err
	}
	if typ != "commit" || len(id) != 40 {
		return "", nil, errSlowPath // unborn branch or a SHA-256 repository
	}
	rest, ok := strings.CutPrefix(string(body), "tree ")
	if !ok || len(rest) < 40 {
		return "", nil, errSlowPath
	}
	tree, err := hex.DecodeString(rest[:40])
	if err != nil {
		return "", nil, errSlowPath
	}
	objects.put(id, cached{tree: tree})
	return id, tree, nil
}

// zwriter compresses loose objects. The compressor's state (about 1 MB)
// is reused instead of allocated per object, and its output, which the
// compressor emits in pieces of a few hundred bytes, reaches the file
// through a buffer instead of a write call per piece.
type zwriter struct {
	zw  *zlib.Writer
	buf *bufio.Writer
}

var zwriters = sync.Pool{New: func() any {
	zw, err := zlib.NewWriterLevel(nil, zlib.BestSpeed)
	if err != nil {
		panic(err) // BestSpeed is a valid level
	}
	return &zwriter{zw: zw, buf: bufio.NewWriterSize(nil, 64<<10)}
}}

// writeObject stores a loose object (zlib at the fastest level, a large
// one in pieces that the next version reuses: see zchunk.go; git gc packs
// it later) unless the repository has it loose already, and
// returns its id.
func writeObject(gitDir, typ string, data []byte) ([]byte, error) {
	header := typ + " " + strconv.Itoa(len(data)) + "\x00"
	h := sha1.New()
	h.Write([]byte(header))
	h.Write(data)
	id := h.Sum(nil)
	hexID := hex.EncodeToString(id)
	folder := filepath.Join(gitDir, "objects", hexID[:2])
	final := filepath.Join(folder, hexID[2:])
	if _, err := os.Stat(final); err == nil {
		return id, nil
	}
	if err := os.MkdirAll(folder, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(folder, "tmp_obj_")
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
