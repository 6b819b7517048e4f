//go:build linux

package treewatch

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// treeMask is every change of a folder's entries, and of the folder.
const treeMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MODIFY | unix.IN_CLOSE_WRITE | unix.IN_ATTRIB |
	unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW

// cookieMask is what the cookie's folder is watched for.
const cookieMask = unix.IN_CLOSE_WRITE | unix.IN_ONLYDIR

// Watcher watches nodes/ (see the package comment).
type Watcher struct {
	opts       Options
	root       string // nodes/
	cookieDir  string // .state/
	cookieName string // a name of this watcher's own in cookieDir

	mu       sync.Mutex
	f        *os.File // the inotify instance; nil once closed or broken
	wds      map[int32]string
	cookieWD int32 // -1 until the cookie's folder is watched
	// written counts the cookies written since the instance was made,
	// seen the reports of them read.
	written, seen int
	folders       map[string]bool
	subtrees      map[string]bool
	all           string // why the next Changes reports All; "" when it can tell
	reset         bool   // the watches must be set again (a new instance)
	resetWhy      string // why
	broken        string // why the watcher gave up; "" while it works
	// unreadable is a folder kk may not read, found unwatched since the
	// watches were set; "" when there is none.
	unreadable string
	// rootID and cookieID are the folders watched as nodes/ and as the
	// cookie's folder: a folder above them moved aside and another put
	// in its place reports nothing to the watches, which follow the old.
	rootID, cookieID fileID
	buf              []byte
	stats            Stats
}

// New watches nodes/ (nodesDir), every folder of the tree in it, and
// stateDir, where the barrier's cookie is written. The first Changes
// reports All: the caller's first sync walks the tree after the watches
// are set. It returns ErrUnsupported (wrapped, saying why) on a network
// file system, whose changes made elsewhere the kernel does not report.
func New(nodesDir, stateDir string, o Options) (*Watcher, error) {
	if o.Barrier <= 0 {
		o.Barrier = DefaultBarrier
	}
	if o.MaxFolders <= 0 {
		o.MaxFolders = DefaultMaxFolders
	}
	if name := remoteFS(nodesDir); name != "" {
		return nil, fmt.Errorf("%w: %s is on %s, whose changes made on other machines the kernel does not report", ErrUnsupported, nodesDir, name)
	}
	if err := os.MkdirAll(stateDir, 0o755); err != nil {
		return nil, err
	}
	var r [4]byte
	_, _ = rand.Read(r[:])
	w := &Watcher{opts: o, root: nodesDir, cookieDir: stateDir, cookieName: fmt.Sprintf("watch-%d-%s.cookie", os.Getpid(), hex.EncodeToString(r[:])),
		buf: make([]byte, 64<<10), stats: Stats{All: map[string]int{}}}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.setAll(); err != nil {
		_ = w.closeLocked() // the instance is given up: its close error changes nothing
		return nil, err
	}
	w.all = ReasonStart
	return w, nil
}

// remoteFS names the file system of dir when the kernel does not see
// every change to it (a network or cluster file system, FUSE, a share of
// a virtual machine's host); "" otherwise.
func remoteFS(dir string) string {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return ""
	}
	switch uint32(st.Type) {
	case unix.NFS_SUPER_MAGIC:
		return "NFS"
	case unix.SMB_SUPER_MAGIC, unix.SMB2_SUPER_MAGIC, unix.CIFS_SUPER_MAGIC:
		return "SMB/CIFS"
	case unix.FUSE_SUPER_MAGIC:
		return "a FUSE file system"
	case unix.CEPH_SUPER_MAGIC:
		return "CephFS"
	case unix.AFS_SUPER_MAGIC, unix.AFS_FS_MAGIC:
		return "AFS"
	case unix.CODA_SUPER_MAGIC:
		return "Coda"
	case unix.V9FS_MAGIC:
		return "9P"
	case unix.NCP_SUPER_MAGIC:
		return "NCP"
	case unix.OCFS2_SUPER_MAGIC:
		return "OCFS2"
	case 0x01161970:
		return "GFS2"
	case 0x0bd00bd0:
		return "Lustre"
	case 0x6a656a63:
		return "virtiofs"
	case 0x786f4256:
		return "vboxsf"
	}
	return ""
}

// setAll makes a new inotify instance and watches the cookie's folder
// and every folder of the tree, each before it is read, so that a folder
// made meanwhile is reported. The caller reports All.
func (w *Watcher) setAll() error {
	if w.f != nil {
		_ = w.f.Close()
		w.f = nil
	}
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return fmt.Errorf("watching %s: %w", w.root, err)
	}
	// Non-blocking: the runtime's poller waits for it, with deadlines.
	w.f = os.NewFile(uintptr(fd), "inotify")
	w.wds = map[int32]string{}
	w.cookieWD = -1
	w.written, w.seen = 0, 0
	w.folders, w.subtrees = map[string]bool{}, map[string]bool{}
	w.unreadable = ""
	if err := w.watchCookie(); err != nil {
		return err
	}
	w.rootID = idOf(w.root) // before the watch, as for the cookie's folder
	if err := w.addTree(""); err != nil {
		return err
	}
	if !slices.Contains(slices.Collect(maps.Values(w.wds)), "") {
		// nodes/ is not there: nothing reports its making. Until it is
		// watched, every Changes sets the watches again and reports All.
		w.resetFor(ReasonRoot)
	}
	return nil
}

func (w *Watcher) watchCookie() error {
	id := idOf(w.cookieDir) // before the watch: a folder put in its place meanwhile differs
	wd, err := unix.InotifyAddWatch(w.fd(), w.cookieDir, cookieMask)
	if err != nil {
		return fmt.Errorf("watching %s: %w", w.cookieDir, err)
	}
	w.cookieWD, w.cookieID = int32(wd), id
	return nil
}

// fileID is a file's identity: its device and inode numbers.
type fileID struct{ dev, ino uint64 }

// idOf returns the identity of the file at p (not following a symlink),
// the zero fileID when there is none.
func idOf(p string) fileID {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return fileID{}
	}
	return fileID{uint64(st.Dev), st.Ino}
}

func (w *Watcher) fd() int { return int(w.f.Fd()) }

func (w *Watcher) abs(rel string) string {
	if rel == "" {
		return w.root
	}
	return w.root + "/" + rel
}

// addTree watches folder rel and every folder under it, each before it
// is read. A folder gone meanwhile is left out (its parent reports it);
// a watch the kernel refuses is an error.
func (w *Watcher) addTree(rel string) error {
	level := []string{rel}
	for len(level) > 0 {
		var next []string
		for _, d := range level {
			if w.opts.AddFault != nil {
				if err := w.opts.AddFault(d); err != nil {
					return fmt.Errorf("watching %s: %w", w.abs(d), err)
				}
			}
			wd, err := unix.InotifyAddWatch(w.fd(), w.abs(d), treeMask)
			if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
				continue
			}
			if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) {
				// A folder kk may not read (a person's chmod): nothing
				// reports what happens in it, or to its mode. Until every
				// folder is watched, each Changes sets the watches again.
				w.unreadable = d
				continue
			}
			if err != nil {
				if errors.Is(err, unix.ENOSPC) {
					err = fmt.Errorf("%w (fs.inotify.max_user_watches is reached)", err)
				}
				return fmt.Errorf("watching %s: %w", w.abs(d), err)
			}
			w.wds[int32(wd)] = d
			entries, err := os.ReadDir(w.abs(d))
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				continue
			}
			if errors.Is(err, fs.ErrPermission) {
				w.unreadable = d
				continue
			}
			if err != nil {
				return err
			}
			for _, e := range entries {
				// The folders the tree's walk reads: not dot folders, not
				// symlinks to folders (store's classify).
				if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
					next = append(next, join(d, e.Name()))
				}
			}
		}
		level = next
	}
	return nil
}

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// Changes returns what may have changed under nodes/ since the last
// Changes, once every change completed before the call has been reported
// (the barrier: see the package comment).
func (w *Watcher) Changes(ctx context.Context) Changes {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stats.Barriers++
	if w.f == nil {
		reason := w.broken
		if reason == "" {
			reason = ReasonClosed
		}
		return w.report(reason)
	}
	if w.opts.Doubt != nil && w.opts.Doubt() {
		w.doubt(ReasonDoubt)
	}
	if w.unreadable != "" && !w.reset {
		w.resetFor(ReasonUnread)
	}
	if !w.reset {
		// The folders watched must be the ones at the paths.
		if id := idOf(w.root); id != w.rootID {
			w.resetFor(ReasonRoot)
		} else if id := idOf(w.cookieDir); w.cookieWD >= 0 && id != w.cookieID && id != (fileID{}) {
			w.resetFor(ReasonStateDir)
		}
	}
	if !w.reset {
		if err := w.touchCookie(); err != nil {
			// What is queued is read at the next Changes (the folders it
			// names are read again then, needlessly but soundly).
			w.doubt(ReasonCookie)
		} else if !w.drain(time.Now().Add(w.opts.Barrier)) && !w.reset && w.f != nil {
			w.resetFor(ReasonBarrier)
		}
	}
	if w.reset {
		// The answer is All whenever the watches are set again, for the
		// reason they are.
		w.doubt(w.resetWhy)
		w.reset = false
		if err := w.setAll(); err != nil {
			w.giveUp(err)
		}
	}
	return w.report(w.all)
}

// report is the answer of Changes: All (for reason) when reason is set,
// else the folders reported; the watcher starts collecting anew.
func (w *Watcher) report(reason string) Changes {
	defer func() {
		w.all = ""
		clear(w.folders)
		clear(w.subtrees)
	}()
	if reason != "" {
		w.stats.All[reason]++
		return Changes{All: true, Reason: reason}
	}
	c := Changes{Folders: slices.Sorted(maps.Keys(w.folders)), Subtrees: slices.Sorted(maps.Keys(w.subtrees))}
	w.stats.Watched++
	w.stats.Folders += len(c.Folders)
	w.stats.Subtrees += len(c.Subtrees)
	return c
}

// touchCookie writes (and removes) this watcher's cookie in its folder.
func (w *Watcher) touchCookie() error {
	if w.cookieWD < 0 {
		if err := w.watchCookie(); err != nil {
			return err
		}
	}
	p := filepath.Join(w.cookieDir, w.cookieName)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	err = f.Close()
	_ = os.Remove(p) // transient: its report is queued already
	if err != nil {
		return err
	}
	w.written++
	return nil
}

// drain reads the reports queued until the report of every cookie
// written has been read (true), or deadline passed. It stops early once
// the watches must be set again, or the watcher gave up.
func (w *Watcher) drain(deadline time.Time) bool {
	for !w.reset && w.f != nil {
		if w.seen >= w.written {
			return true
		}
		_ = w.f.SetReadDeadline(deadline)
		n, err := w.f.Read(w.buf)
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			return false
		case err != nil:
			w.resetFor(ReasonError)
			return false
		}
		w.parse(w.buf[:n])
	}
	return false
}

// parse handles each report in buf.
func (w *Watcher) parse(buf []byte) {
	for off := 0; off+unix.SizeofInotifyEvent <= len(buf); {
		wd := int32(binary.NativeEndian.Uint32(buf[off:]))
		mask := binary.NativeEndian.Uint32(buf[off+4:])
		size := int(binary.NativeEndian.Uint32(buf[off+12:]))
		name := buf[off+unix.SizeofInotifyEvent : min(len(buf), off+unix.SizeofInotifyEvent+size)]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		off += unix.SizeofInotifyEvent + size
		w.event(wd, mask, string(name))
	}
}

// event handles one report: of the cookie's folder, or of a folder of the
// tree.
func (w *Watcher) event(wd int32, mask uint32, name string) {
	if mask&unix.IN_Q_OVERFLOW != 0 {
		// Reports were lost, the cookie's perhaps: a new instance
		// starts the count again.
		w.resetFor(ReasonOverflow)
		return
	}
	if wd == w.cookieWD {
		switch {
		case mask&unix.IN_IGNORED != 0:
			w.cookieWD = -1 // the folder went: watched again at the next cookie
		case mask&unix.IN_CLOSE_WRITE != 0 && name == w.cookieName:
			w.seen++
		}
		return
	}
	rel, ok := w.wds[wd]
	if !ok {
		return
	}
	switch {
	case mask&unix.IN_IGNORED != 0:
		// The folder was removed (its parent reports it) or unmounted.
		delete(w.wds, wd)
		if rel == "" {
			w.resetFor(ReasonRoot)
		}
		return
	case mask&unix.IN_UNMOUNT != 0:
		w.resetFor(ReasonRoot)
		return
	case mask&unix.IN_MOVE_SELF != 0:
		if rel == "" {
			w.resetFor(ReasonRoot)
		} else {
			w.resetFor(ReasonMoved)
		}
		return
	case mask&unix.IN_DELETE_SELF != 0:
		if rel == "" {
			w.resetFor(ReasonRoot)
		}
		return // a subfolder's removal is its parent's report
	case name == "" && mask&unix.IN_ATTRIB != 0:
		// The folder's own mode, owner or times: its mode decides
		// whether what is under it can be read at all (a person's
		// chmod), so it is read whole.
		if rel == "" {
			w.doubt(ReasonRootMode)
			return
		}
		w.subtree(rel)
		w.folder(rel)
		return
	case name == "":
		w.folder(rel)
		return
	}
	if mask&unix.IN_ISDIR != 0 {
		child := join(rel, name)
		switch {
		case mask&unix.IN_ATTRIB != 0:
			w.subtree(child)
		case mask&(unix.IN_MOVED_FROM|unix.IN_MOVED_TO) != 0:
			// The watches under a moved folder would name its old path.
			w.resetFor(ReasonMoved)
			return
		case mask&unix.IN_CREATE != 0:
			if !strings.HasPrefix(name, ".") {
				if err := w.addTree(child); err != nil {
					w.giveUp(err)
					return
				}
			}
			w.subtree(child)
		case mask&unix.IN_DELETE != 0:
			w.subtree(child)
		}
	}
	w.folder(rel)
}

func (w *Watcher) folder(rel string) {
	if w.all == "" {
		w.folders[rel] = true
		w.tooMany()
	}
}

func (w *Watcher) subtree(rel string) {
	if w.all == "" {
		w.subtrees[rel] = true
		w.tooMany()
	}
}

func (w *Watcher) tooMany() {
	if len(w.folders)+len(w.subtrees) > w.opts.MaxFolders {
		w.doubt(ReasonTooMany)
	}
}

// doubt makes the next Changes report All, for reason (the first reason
// given stands).
func (w *Watcher) doubt(reason string) {
	if w.all == "" {
		w.all = reason
	}
	clear(w.folders)
	clear(w.subtrees)
}

// resetFor is doubt, with the watches set again before the answer.
func (w *Watcher) resetFor(reason string) {
	w.doubt(reason)
	w.reset, w.resetWhy = true, reason
}

// giveUp stops watching for good (a watch the kernel refused: every later
// Changes reports All, and the caller walks).
func (w *Watcher) giveUp(err error) {
	w.broken = ReasonRefused + ": " + err.Error()
	w.doubt(w.broken)
	w.all = w.broken
	w.reset = false
	_ = w.closeLocked() // the instance is given up: its close error changes nothing
}

// Unsure makes the next Changes report All: the changes it reported last
// were not applied (the caller's sync failed).
func (w *Watcher) Unsure() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.doubt(ReasonUnsure)
}

// Broken says why the watcher gave up ("" while it works).
func (w *Watcher) Broken() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.broken
}

// Stats returns the counts so far.
func (w *Watcher) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.stats
	s.All = maps.Clone(s.All)
	s.Watches = len(w.wds)
	return s
}

// Close stops watching; a later Changes reports All.
func (w *Watcher) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.closeLocked()
}

func (w *Watcher) closeLocked() error {
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	w.wds = map[int32]string{}
	return err
}
