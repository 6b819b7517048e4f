//go:build linux

package store

import (
	"bytes"
	"encoding/binary"
	"errors"

	"golang.org/x/sys/unix"
)

// inotify is the Linux notifier.
type inotify struct {
	fd   int
	root string
	wds  map[int32]string // watch → folder relative to nodes/
	buf  []byte
}

// watchMask is every change of a folder's entries, and of the folder.
const watchMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MODIFY | unix.IN_CLOSE_WRITE | unix.IN_ATTRIB |
	unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW

func newNotifier(root string) (notifier, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, err
	}
	return &inotify{fd: fd, root: root, wds: map[int32]string{}, buf: make([]byte, 64<<10)}, nil
}

func (n *inotify) add(rel string) error {
	abs := n.root
	if rel != "" {
		abs += "/" + rel
	}
	wd, err := unix.InotifyAddWatch(n.fd, abs, watchMask)
	if err != nil {
		return err
	}
	// A folder moved within the tree keeps its watch: it answers to its
	// new name now.
	n.wds[int32(wd)] = rel
	return nil
}

func (n *inotify) drain(dirty, named, unwatched map[string]bool) (lost bool, err error) {
	for {
		k, err := unix.Read(n.fd, n.buf)
		switch {
		case errors.Is(err, unix.EAGAIN):
			return lost, nil
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return true, err
		case k <= 0:
			return lost, nil
		}
		for off := 0; off+unix.SizeofInotifyEvent <= k; {
			wd := int32(binary.NativeEndian.Uint32(n.buf[off:]))
			mask := binary.NativeEndian.Uint32(n.buf[off+4:])
			size := int(binary.NativeEndian.Uint32(n.buf[off+12:]))
			name := n.buf[off+unix.SizeofInotifyEvent : min(k, off+unix.SizeofInotifyEvent+size)]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			off += unix.SizeofInotifyEvent + size
			if mask&unix.IN_Q_OVERFLOW != 0 {
				lost = true
				continue
			}
			rel, ok := n.wds[wd]
			if !ok {
				continue
			}
			if mask&unix.IN_IGNORED != 0 {
				delete(n.wds, wd)
				unwatched[rel] = true
			}
			if rel == "" && mask&(unix.IN_IGNORED|unix.IN_DELETE_SELF|unix.IN_MOVE_SELF) != 0 {
				lost = true // nodes/ itself went
			}
			dirty[rel] = true
			switch {
			case len(name) == 0:
				named[rel] = true // the folder itself
			case rel == "":
				named[string(name)] = true
			default:
				named[rel+"/"+string(name)] = true
			}
		}
	}
}

func (n *inotify) close() error { return unix.Close(n.fd) }
