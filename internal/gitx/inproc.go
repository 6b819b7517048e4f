package gitx

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// A knowledge worker's commit ends with two small updates: the branch
// moves to the new commit, and git's index learns the commit's entries.
// Run as git update-ref and git update-index they cost two processes per
// job (about 6 ms at 1,000 notes, 15 ms at 10,000, where git rewrites a
// 1.5 MB index). Here both are done in this process, the way git does
// them: under git's own lock files (refs/heads/<branch>.lock,
// index.lock, created exclusively, so a concurrent git command and this
// one exclude each other), with the branch compared and swapped, a
// reflog line appended where git would append one, and the index
// rewritten whole with its checksum. Whatever this does not handle (a
// detached HEAD, reftable refs, a reference-transaction hook, an index
// of version 4, a split or sparse index, a path that would replace a
// folder) sends the caller to the git commands, as does a lock some
// other git command holds, so that git reports it in its own words.

// repoSettings is what the in-process updates need to know of a
// repository's configuration.
type repoSettings struct {
	logRefs bool   // core.logAllRefUpdates: append reflog lines
	hooks   string // the hooks folder
	stamp   string // the config file's size and mtime when read
}

var settingsCache sync.Map // git folder → *repoSettings

// settingsOf returns the repository's settings, read again when its
// config file changed.
func settingsOf(ctx context.Context, gitDir, top string) (*repoSettings, error) {
	stamp := ""
	if fi, err := os.Stat(filepath.Join(gitDir, "config")); err == nil {
		stamp = fmt.Sprintf("%d/%d", fi.Size(), fi.ModTime().UnixNano())
	}
	if v, ok := settingsCache.Load(gitDir); ok && v.(*repoSettings).stamp == stamp {
		return v.(*repoSettings), nil
	}
	s := &repoSettings{logRefs: true, hooks: filepath.Join(gitDir, "hooks"), stamp: stamp}
	out, err := Read(ctx, top, "config", "-z", "--get-regexp", `^(core\.(logallrefupdates|bare|hookspath)|extensions\.refstorage)$`)
	if err != nil && len(out) > 0 {
		return nil, err
	}
	for _, kv := range splitNUL(out) {
		key, raw, _ := strings.Cut(kv, "\n")
		val := strings.ToLower(strings.TrimSpace(raw))
		switch key {
		case "core.logallrefupdates":
			s.logRefs = val == "always" || val == "true" || val == "yes" || val == "on" || val == "1" || val == ""
		case "core.bare":
			if val == "true" {
				return nil, errSlowPath
			}
		case "core.hookspath":
			s.hooks = strings.TrimSpace(raw)
			if !filepath.IsAbs(s.hooks) {
				s.hooks = filepath.Join(top, s.hooks)
			}
		case "extensions.refstorage":
			if val != "files" {
				return nil, errSlowPath
			}
		}
	}
	settingsCache.Store(gitDir, s)
	return s, nil
}

// lockFile creates path+".lock" exclusively, as git does. A lock another
// git process holds is waited for, as the git commands are (LockWait);
// one still there then is reported in git's words.
func lockFile(ctx context.Context, path string) (*os.File, error) {
	var f *os.File
	err := waitingForLocks(ctx, func() error {
		var err error
		f, err = os.OpenFile(path+".lock", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("unable to create '%s.lock': File exists. Another git process seems to be running in this repository; if none is, remove the file", path)
		}
		return err
	})
	return f, err
}

// commitLock writes data to an open lock file, syncs it if asked, and
// renames it over the file it locks; on any error the lock goes.
func commitLock(f *os.File, target string, data []byte, sync bool) (err error) {
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if sync {
		if err = f.Sync(); err != nil {
			return err
		}
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), target)
}

// updateHead moves the branch HEAD names from old to next (hex ids), as
// git update-ref -m msg HEAD next old does.
func updateHead(ctx context.Context, gitDir, top, next, old string, who Author, msg string) error {
	s, err := settingsOf(ctx, gitDir, top)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(filepath.Join(s.hooks, "reference-transaction")); err == nil && fi.Mode()&0o111 != 0 {
		return errSlowPath // git runs it; so must this update
	}
	if _, err := os.Stat(filepath.Join(gitDir, "reftable")); err == nil {
		return errSlowPath
	}
	data, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return err
	}
	ref, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "ref: ")
	if !ok || !strings.HasPrefix(ref, "refs/heads/") || strings.Contains(ref, "..") {
		return errSlowPath // detached, or not a branch
	}
	refPath := filepath.Join(gitDir, filepath.FromSlash(ref))
	f, err := lockFile(ctx, refPath)
	if err != nil {
		return err
	}
	current, err := readRef(gitDir, ref)
	if err != nil || current != old {
		_ = f.Close()
		_ = os.Remove(f.Name())
		if err != nil {
			return err
		}
		return fmt.Errorf("cannot lock ref 'HEAD': is at %s but expected %s", current, old)
	}
	// As git does, the reflog lines are written under the lock, before
	// the branch moves.
	if s.logRefs {
		now := time.Now()
		line := fmt.Sprintf("%s %s %s <%s> %d %s\t%s\n", old, next, who.Name, who.Email, now.Unix(), now.Format("-0700"), strings.ReplaceAll(msg, "\n", " "))
		for _, log := range []string{ref, "HEAD"} {
			if err := appendLine(filepath.Join(gitDir, "logs", filepath.FromSlash(log)), line); err != nil {
				_ = f.Close()
				_ = os.Remove(f.Name())
				return fmt.Errorf("writing the reflog of %s: %w", log, err)
			}
		}
	}
	if err := commitLock(f, refPath, []byte(next+"\n"), true); err != nil {
		return fmt.Errorf("updating %s: %w", ref, err)
	}
	return nil
}

// readRef returns a branch's id from its loose file or packed-refs; ""
// when it has none.
func readRef(gitDir, ref string) (string, error) {
	data, err := os.ReadFile(filepath.Join(gitDir, filepath.FromSlash(ref)))
	if err == nil {
		id := strings.TrimSpace(string(data))
		if strings.HasPrefix(id, "ref: ") {
			return "", errSlowPath
		}
		return id, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	packed, err := os.Open(filepath.Join(gitDir, "packed-refs"))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer func() { _ = packed.Close() }() // read only
	sc := bufio.NewScanner(packed)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		id, name, ok := strings.Cut(sc.Text(), " ")
		if ok && name == ref && !strings.HasPrefix(id, "#") && !strings.HasPrefix(id, "^") {
			return id, nil
		}
	}
	return "", sc.Err()
}

func appendLine(path, line string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(line); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// indexChange is one path's new index entry (stage 0), or its removal.
type indexChange struct {
	path   string
	mode   uint32
	id     []byte // 20 bytes
	remove bool
}

// indexEntry is one entry of an index file: its raw bytes, name and
// stage.
type indexEntry struct {
	raw   []byte
	name  string
	stage int
}

// updateIndex gives git's index the changes, as git update-index
// --index-info does: the new entries carry no stat data, so git checks
// them against the work tree by content the next time it looks.
func updateIndex(ctx context.Context, gitDir string, changes []indexChange) error {
	indexPath := filepath.Join(gitDir, "index")
	f, err := lockFile(ctx, indexPath)
	if err != nil {
		return err
	}
	data, err := writeIndex(indexPath, changes)
	if err != nil {
		_ = f.Close()
		_ = os.Remove(f.Name())
		return err
	}
	return commitLock(f, indexPath, data, false)
}

// writeIndex returns the index at indexPath with changes applied.
func writeIndex(indexPath string, changes []indexChange) ([]byte, error) {
	data, err := os.ReadFile(indexPath)
	if err != nil {
		return nil, errSlowPath
	}
	if len(data) < 12+20 || string(data[:4]) != "DIRC" {
		return nil, errSlowPath
	}
	version := binary.BigEndian.Uint32(data[4:8])
	if version != 2 && version != 3 {
		return nil, errSlowPath
	}
	count := int(binary.BigEndian.Uint32(data[8:12]))
	body := data[:len(data)-20]
	entries := make([]indexEntry, 0, count+len(changes))
	pos := 12
	for range count {
		if pos+62 > len(body) {
			return nil, errSlowPath
		}
		flags := binary.BigEndian.Uint16(body[pos+60:])
		head := 62
		if flags&0x4000 != 0 {
			if version < 3 {
				return nil, errSlowPath
			}
			head += 2
		}
		nameLen := int(flags & 0xfff)
		if nameLen == 0xfff {
			nul := bytes.IndexByte(body[pos+head:], 0)
			if nul < 0 {
				return nil, errSlowPath
			}
			nameLen = nul
		}
		size := (head + nameLen + 8) &^ 7
		if pos+size > len(body) {
			return nil, errSlowPath
		}
		name := string(body[pos+head : pos+head+nameLen])
		entries = append(entries, indexEntry{raw: body[pos : pos+size], name: name, stage: int(flags>>12) & 3})
		pos += size
	}
	// Extensions: the resolve-undo record is kept; the caches git
	// rebuilds when they are missing (the cache tree, the untracked
	// cache, fsmonitor's token, the offset tables) are dropped, as they
	// would be wrong now; one git requires (a split or sparse index)
	// sends the caller to git.
	var keep []byte
	for pos+8 <= len(body) {
		sig := body[pos : pos+4]
		size := int(binary.BigEndian.Uint32(body[pos+4:]))
		if pos+8+size > len(body) {
			return nil, errSlowPath
		}
		if sig[0] >= 'a' && sig[0] <= 'z' {
			return nil, errSlowPath
		}
		if string(sig) == "REUC" {
			keep = append(keep, body[pos:pos+8+size]...)
		}
		pos += 8 + size
	}
	if pos != len(body) {
		return nil, errSlowPath
	}

	slices.SortFunc(changes, func(a, b indexChange) int { return strings.Compare(a.path, b.path) })
	changed := make(map[string]bool, len(changes))
	for _, c := range changes {
		changed[c.path] = true
	}
	out := make([]indexEntry, 0, len(entries)+len(changes))
	for _, e := range entries {
		if !changed[e.name] {
			out = append(out, e)
		}
	}
	for _, c := range changes {
		if c.remove {
			continue
		}
		// A file where a folder of entries is, or under a path that is a
		// file: git replaces the others; leave that to it.
		byName := func(e indexEntry, p string) int { return strings.Compare(e.name, p) }
		i, _ := slices.BinarySearchFunc(out, c.path, byName)
		if j, _ := slices.BinarySearchFunc(out, c.path+"/", byName); j < len(out) && strings.HasPrefix(out[j].name, c.path+"/") {
			return nil, errSlowPath
		}
		for d := c.path; ; {
			j := strings.LastIndexByte(d, '/')
			if j < 0 {
				break
			}
			d = d[:j]
			if _, found := slices.BinarySearchFunc(out, d, byName); found {
				return nil, errSlowPath
			}
		}
		out = slices.Insert(out, i, indexEntry{raw: newIndexEntry(c), name: c.path})
	}

	var b bytes.Buffer
	b.Grow(len(data) + len(changes)*100)
	b.Write(data[:8])
	b.Write(binary.BigEndian.AppendUint32(nil, uint32(len(out))))
	for _, e := range out {
		b.Write(e.raw)
	}
	b.Write(keep)
	sum := sha1.Sum(b.Bytes())
	b.Write(sum[:])
	return b.Bytes(), nil
}

// newIndexEntry encodes a stage-0 entry without stat data.
func newIndexEntry(c indexChange) []byte {
	nameLen := min(len(c.path), 0xfff)
	size := (62 + len(c.path) + 8) &^ 7
	e := make([]byte, size)
	binary.BigEndian.PutUint32(e[24:], c.mode)
	copy(e[40:60], c.id)
	binary.BigEndian.PutUint16(e[60:], uint16(nameLen))
	copy(e[62:], c.path)
	return e
}

// parseIndexInfo turns git update-index --index-info input (as
// fastCommit builds it) into changes.
func parseIndexInfo(info []byte) ([]indexChange, error) {
	var out []indexChange
	for _, line := range strings.Split(strings.TrimSuffix(string(info), "\n"), "\n") {
		meta, path, ok := strings.Cut(line, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 2 {
			return nil, errSlowPath
		}
		id, err := hex.DecodeString(f[1])
		if err != nil || len(id) != 20 {
			return nil, errSlowPath
		}
		c := indexChange{path: path, id: id}
		switch f[0] {
		case "0":
			c.remove = true
		case "100644":
			c.mode = 0o100644
		case "100755":
			c.mode = 0o100755
		default:
			return nil, errSlowPath
		}
		out = append(out, c)
	}
	return out, nil
}
