// Package treewatch tells a long-running process (kk serve) which folders
// of the knowledge tree (nodes/) may have changed since it last asked, from
// the kernel's reports (inotify on Linux), so that the branch index's sync
// looks at those folders instead of stat'ing every leaf (index.DB.Watch).
//
// It keeps no derived state: it only says "something may have changed in
// these folders, or under these folders, since the last Changes", or "I
// cannot tell: walk everything". A Changes call is a barrier: it writes a
// cookie file in a watched folder of the knowledge base's private state
// (.state/, never committed, never a leaf) and waits for the kernel's
// report of it; one inotify instance reports events in the order they
// happened, so every change completed before the call (by this process or
// any other on this machine) has been reported when the cookie's report
// arrives. The cookie is removed right after.
//
// It cannot tell, and Changes reports All, after: its start (the first
// sync walks the tree, after the watches are set); an overflow of the
// kernel's queue; a folder renamed or moved (the watches under it would
// name the old paths), nodes/ itself removed or replaced (or a folder
// above it: the folders at the paths are checked to be the ones watched
// at every Changes), the cookie's folder replaced, or a file system
// unmounted (the watches are then set again); a barrier that timed out; a
// folder kk may not read (a person's chmod: it cannot be watched, and the
// watches are set again at every Changes until it can); a watch the
// kernel refused (fs.inotify.max_user_watches reached: the watcher then
// gives up, and every sync walks); Unsure (the caller could not apply the
// changes last reported). A folder created is watched, and
// reported as a subtree to read whole: what was put in it before the watch
// was set has no report.
//
// What the kernel does not report is not seen: changes made through
// another machine's mount of a network file system (New refuses those file
// systems), writes through a shared memory mapping of a leaf, and changes
// to a leaf through a hard link made later from outside the tree (a leaf
// with more than one link when a folder is read is read at every sync: see
// store.Listing.Linked). kk serve --no-watch walks instead.
package treewatch

import (
	"errors"
	"time"
)

// Changes is what may have changed under nodes/ since the last Changes.
// Paths are folders relative to nodes/ ("" for nodes/ itself), sorted.
type Changes struct {
	// All is set when the watcher cannot tell: every folder must be read
	// (Reason says why). Folders and Subtrees are then empty.
	All    bool
	Reason string
	// Folders are the folders in which an entry may have been created,
	// changed or removed: each must be read again (its entries, not its
	// subfolders' ones).
	Folders []string
	// Subtrees are the folders created or removed: each must be read
	// with everything under it (their parents are in Folders).
	Subtrees []string
}

// Options set up a Watcher.
type Options struct {
	// Barrier bounds the wait for the report of the cookie (see
	// Changes); 0: DefaultBarrier. After it, Changes reports All.
	Barrier time.Duration
	// MaxFolders is the most folders (and subtrees) Changes reports
	// before it reports All instead: so many folders changed that the
	// walk costs as much; 0: DefaultMaxFolders.
	MaxFolders int
	// Doubt, when set, is asked at every Changes; true makes the watcher
	// report All, as after an overflow of the kernel's queue. Tests use it
	// to force the fallback.
	Doubt func() bool
	// AddFault, when set, is called before each folder is watched; an
	// error it returns is taken as the kernel's refusal (as when
	// fs.inotify.max_user_watches is reached). Tests use it.
	AddFault func(dir string) error
}

// Defaults of Options.
const (
	DefaultBarrier    = 2 * time.Second
	DefaultMaxFolders = 2048
)

// ErrUnsupported is returned by New where the kernel's reports are not
// available or not complete: not Linux, or a network file system.
var ErrUnsupported = errors.New("watching the tree is not supported here")

// Stats count what the watcher reported, for tests and benchmarks.
type Stats struct {
	Barriers int            // Changes calls
	Watched  int            // of them, those that named folders (not All)
	All      map[string]int // of them, those that reported All, by reason
	Folders  int            // folders reported, in all
	Subtrees int            // subtrees reported, in all
	Watches  int            // folders watched now
}

// Reasons for All.
const (
	ReasonStart    = "the first sync since the watch started"
	ReasonOverflow = "the kernel's queue of reports overflowed"
	ReasonMoved    = "a folder was renamed or moved"
	ReasonRoot     = "nodes/ was removed, replaced or unmounted"
	ReasonRootMode = "the mode, owner or times of nodes/ changed"
	ReasonBarrier  = "the cookie's report did not arrive in time"
	ReasonCookie   = "the cookie could not be written"
	ReasonStateDir = "the cookie's folder was replaced"
	ReasonRefused  = "the kernel refused a watch"
	ReasonUnread   = "a folder kk may not read is not watched"
	ReasonUnsure   = "the changes last reported were not applied"
	ReasonTooMany  = "too many folders changed"
	ReasonDoubt    = "told to doubt (Options.Doubt)"
	ReasonClosed   = "the watcher is closed"
	ReasonError    = "reading the kernel's reports failed"
)
