// Package serve is kk serve's core: the service.Backend over a knowledge
// base. Reads come from the tree on disk (a note is one file read), search
// from the branch's full-text index (internal/index), and every write is
// one store transaction (internal/txn) followed, while the writer lock is
// still held, by exactly one git commit that touches only the job's paths.
//
// The organizer places a posted note: without a model, in the folder whose
// notes are most like it by kk's search, else in inbox/; with a model
// (internal/llm), where a serve-placement decision puts it, having seen the
// folder summaries and the candidate folders. The query engine ranks with
// kk's search, reranked by the model when there is one, and answers from
// the notes it read.
package serve

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/llm"
	"github.com/kk-project/kk/internal/lock"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/service"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/treewatch"
	"github.com/kk-project/kk/internal/txn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// DefaultAuthor is the identity of the commits kk serve makes, unless
// Options.Author names another.
func DefaultAuthor() gitx.Author { return gitx.Author{Name: "kk serve", Email: "kk-serve@kk.invalid"} }

// Defaults of Options.
const (
	// DefaultMaintainEvery is how many commits kk serve makes between two
	// runs of git gc --auto. Its commits are made with git's plumbing (or
	// in the process), which never starts git's automatic maintenance the
	// way a person's git commit does: without it, a server that only ever
	// posts leaves every object it writes loose, some ten per job, for
	// good. git gc --auto does nothing until there are enough loose
	// objects (gc.auto, 6,700 by default; 0 turns it off), and then packs
	// them in the background (gc.autoDetach).
	DefaultMaintainEvery = 200
	// DefaultMaintainLimit is how long a run of git gc --auto may last
	// (its pre-auto-gc hook included, and the packing itself where
	// gc.autoDetach is false) before it is ended.
	DefaultMaintainLimit = 10 * time.Minute
	// DefaultRecheckWithin is how long a tree read for a tag request is
	// reused before its files are stat'ed again. A job makes it stale at
	// once.
	DefaultRecheckWithin = 2 * time.Second
)

// Options set up a Backend.
type Options struct {
	KB *store.KB
	// Provider is the model the organizer and the query engine ask; nil
	// keeps kk serve offline.
	Provider llm.Provider
	Logger   *slog.Logger
	// Author is the identity of kk serve's commits; zero: DefaultAuthor.
	Author gitx.Author
	// MaintainEvery is how many commits are made between two runs of
	// git gc --auto; 0: DefaultMaintainEvery, negative: never.
	MaintainEvery int
	// MaintainLimit is how long a run of git gc --auto may last; 0:
	// DefaultMaintainLimit.
	MaintainLimit time.Duration
	// RecheckWithin is how long a tree read for a tag request is reused;
	// 0: DefaultRecheckWithin, negative: never reused.
	RecheckWithin time.Duration
	// Delay, when set, holds the worker three times in every job: before
	// it writes, between the transaction and the git commit, and after the
	// commit. Only the crash test sets it (KK_SERVE_TEST_DELAY).
	Delay time.Duration
	// NoWatch has every sync of the served branch's index (each job's,
	// and the reads') find what changed in the tree by a walk that stats
	// every leaf, instead of from the kernel's reports of the folders
	// that changed since the last sync (internal/treewatch, inotify:
	// Linux, not on network file systems). kk serve --no-watch.
	NoWatch bool
	// Watch sets the watch of the tree up (its barrier's timeout; the
	// faults tests inject).
	Watch treewatch.Options
	// LockWait is how long a start waits for kk serve's own lock before
	// it says another server holds it; 0: DefaultLockWait. A server killed
	// a moment before may hold it a little longer than its own life: a
	// git command it was starting holds a copy of its files until that
	// command has started, which on a busy machine a restart can overtake.
	LockWait time.Duration
}

// DefaultLockWait is Options.LockWait's default.
const DefaultLockWait = 5 * time.Second

// Backend is the service.Backend of kk serve.
type Backend struct {
	// repairMu serialises the rebuilds of a damaged branch index.
	repairMu sync.Mutex

	k     *store.KB
	llm   llm.Provider
	log   *slog.Logger
	delay time.Duration
	// author, maintainEvery and recheckWithin are Options'.
	author        gitx.Author
	maintainEvery int
	maintainLimit time.Duration
	recheckWithin time.Duration
	noWatch       bool
	watchOpts     treewatch.Options
	lockWait      time.Duration
	// watch reports where the tree changed to the served branch's index
	// handle (Warm), watched; nil when the tree is not watched.
	watch   *treewatch.Watcher
	watched *index.DB

	mu     sync.Mutex // guards the fields below
	top    string     // the git work tree's root
	prefix string     // the knowledge base's root relative to top, "" or ending in "/"
	// repo is the repository, pinned to the branch served; held is kk
	// serve's own lock; stop ends the waits of a job's commit (Open).
	repo *gitx.Repo
	held *lock.Lock
	stop context.Context
	// view is what the served branch's tip holds under the knowledge
	// base's folder, for the generated files of each commit (view.go).
	view *view
	// inflight is the transaction of the job whose commit is made while
	// the next job is written (nil once it landed or failed): what the
	// branch holds once it lands, for a check of the next job's
	// refactors (branchHolds). inflightJob is its job's id: a job put
	// back (Restore) before its commit ran is in flight no more.
	inflight    *txn.Result
	inflightJob string
	// warned are the problems of unreadable leaves already logged.
	warned map[string]bool
	tree   *store.Tree
	treeAt time.Time
	// treeGen is the served index's generation the tree was read at,
	// when the tree is watched ("" otherwise).
	treeGen string
	gen     uint64 // bumped by every job; a tree read before is stale
	// timing adds up the time the worker spent placing, writing (the
	// transaction and the commit) and committing, for the benchmarks.
	timing  struct{ place, write, commit time.Duration }
	commits int // commits made since the last git gc --auto
	// maintaining is when the run of git gc --auto under way started
	// (zero: none runs); maint waits for it, maintCtx (the server's stop,
	// ended by Close too) ends it.
	maintaining time.Time
	maint       sync.WaitGroup
	maintCtx    context.Context
	maintCancel context.CancelFunc
	// shortcuts counts the commit plans that knew the commit's leaves to
	// be the work tree's by the nodes hash (view.leaves); with
	// checkShortcut (set by tests) each is checked by the comparison of
	// every leaf, and a disagreement is kept in shortcutErr.
	shortcuts     int
	checkShortcut bool
	shortcutErr   []string

	waitMu     sync.Mutex
	waitingFor string // what the job in progress waits for
	// gits knows the git commands the jobs run (untilStop), for
	// /healthz while one does not end.
	gits       gitx.Tracker
	waitLogged string // the last reason logged, while its commit lasts
	// shareFail is the --push-every ticks failing in a row: since when,
	// how many, and the last one's error (SharingProblem).
	shareFail struct {
		since time.Time
		ticks int
		err   string
	}
}

var _ service.Backend = (*Backend)(nil)

// GCPercent is kk serve's garbage collection target (GOGC) unless the
// environment sets one: see internal/cli/serve.go.
const GCPercent = 200

// New returns the backend over o.KB.
func New(o Options) *Backend {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Author == (gitx.Author{}) {
		o.Author = DefaultAuthor()
	}
	if o.MaintainEvery == 0 {
		o.MaintainEvery = DefaultMaintainEvery
	}
	if o.MaintainLimit <= 0 {
		o.MaintainLimit = DefaultMaintainLimit
	}
	if o.RecheckWithin == 0 {
		o.RecheckWithin = DefaultRecheckWithin
	}
	if o.LockWait <= 0 {
		o.LockWait = DefaultLockWait
	}
	return &Backend{k: o.KB, llm: o.Provider, log: o.Logger, delay: o.Delay, author: o.Author, maintainEvery: o.MaintainEvery, maintainLimit: o.MaintainLimit, recheckWithin: o.RecheckWithin,
		noWatch: o.NoWatch, watchOpts: o.Watch, lockWait: o.LockWait}
}

// readTree returns the tree, without bodies, through the branch index
// (one stat per leaf); a tree read less than Options.RecheckWithin ago,
// with no job applied since, is reused as it is. Where the served
// branch's tree is watched, its sync costs a barrier: every read syncs,
// and the tree is reused while the index is the one it was read from.
func (b *Backend) readTree() (*store.Tree, error) {
	t, err := b.readTreeOnce()
	if b.dropDamagedIndex(err) {
		t, err = b.readTreeOnce()
	}
	return t, err
}

func (b *Backend) readTreeOnce() (*store.Tree, error) {
	if err := b.gone(); err != nil {
		return nil, err
	}
	ctx := context.Background()
	b.mu.Lock()
	t, at, gen, treeGen := b.tree, b.treeAt, b.gen, b.treeGen
	b.mu.Unlock()
	var stat string
	if db, err := b.openIndex(ctx, false); err == nil && b.isWatched(db) {
		if _, err := b.indexDB(ctx); err != nil {
			return nil, err
		}
		if stat, err = db.Meta(ctx, "stat_gen"); err == nil && t != nil && stat != "" && stat == treeGen {
			return t, nil
		}
	} else if t != nil && treeGen == "" && time.Since(at) < b.recheckWithin {
		return t, nil
	}
	start := time.Now()
	t, err := index.ReadTree(ctx, b.k)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	if b.gen == gen {
		b.tree, b.treeAt, b.treeGen = t, start, stat
	}
	b.mu.Unlock()
	return t, nil
}

// damagedDB reports whether err is SQLite's "database disk image is
// malformed" or "file is not a database".
func damagedDB(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
			return true
		}
	}
	return err != nil && (strings.Contains(err.Error(), "database disk image is malformed") || strings.Contains(err.Error(), "file is not a database"))
}

// dropDamagedIndex reports whether err says the branch index is damaged
// (a disk's fault, a copy restored half way, pages overwritten), and then
// removes its files, so that the next read opens it anew and builds it
// again from the tree (as an open that finds it damaged does): kk serve
// keeps its index open for its life, and every read and every placement
// met the damage until a restart, each failing while /healthz said ok.
// The index is derived from the tree: nothing of a person's is in it.
func (b *Backend) dropDamagedIndex(err error) bool {
	if !damagedDB(err) {
		return false
	}
	ctx := context.Background()
	branch, berr := index.CurrentBranch(ctx, b.k)
	if berr != nil {
		return false
	}
	b.repairMu.Lock()
	defer b.repairMu.Unlock()
	path := index.Path(b.k, branch)
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if rerr := os.Remove(p); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			b.log.Warn("the branch index is damaged and could not be removed to be built again", "index", path, "error", rerr)
			return false
		}
	}
	b.log.Warn("the branch index was damaged; it is built again from the tree", "index", path, "error", err)
	db, oerr := index.OpenShared(ctx, b.k, branch)
	b.mu.Lock()
	if oerr == nil && b.watch != nil && b.watched != nil && b.watched.Path == db.Path {
		b.watched = db // the new handle took the watch's changes over
	}
	b.gen++
	b.tree = nil
	b.mu.Unlock()
	return oerr == nil
}

// RepairIndex is dropDamagedIndex for the web page's searches
// (web.Options.Repair): it reports whether err was a damaged branch
// index, now removed to be built again from the tree.
func (b *Backend) RepairIndex(err error) bool { return b.dropDamagedIndex(err) }

// isWatched reports whether db is the served branch's index handle and
// the tree is watched for it: its syncs cost a barrier, not a walk.
func (b *Backend) isWatched(db *index.DB) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.watch != nil && db == b.watched
}

// changed drops the tree kept for reads: a job changed the tree.
func (b *Backend) changed() {
	b.mu.Lock()
	b.gen++
	b.tree = nil
	b.mu.Unlock()
}

// Read returns the file at p (relative to nodes/): a leaf or a generated
// index.md, whole, a body posted through the API ending as it was posted
// (asPosted). Only regular files inside the tree are read: not a
// symlink, and not through a folder that is a symlink leading out of it.
func (b *Backend) Read(_ context.Context, p string) (string, error) {
	if err := b.gone(); err != nil {
		return "", err
	}
	abs := b.k.NodePath(p)
	fi, err := os.Lstat(abs)
	if noSuchFile(err) {
		return "", fmt.Errorf("%s: %w", p, service.ErrNotFound)
	}
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() || fi.Size() > node.MaxSize || !b.inTree(abs) {
		return "", fmt.Errorf("%s is not a note: %w", p, service.ErrNotFound)
	}
	data, err := os.ReadFile(abs)
	if noSuchFile(err) {
		return "", fmt.Errorf("%s: %w", p, service.ErrNotFound)
	}
	return asPosted(string(data)), err
}

// noSuchFile reports whether err says there is no file at a path: none
// is there, or none can be (a name longer than the file system takes, a
// path through a file as if it were a folder). A read of such a path is
// a note not found, not a failure to log: a client names the path.
func noSuchFile(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENAMETOOLONG) || errors.Is(err, syscall.ENOTDIR)
}

// indexDB returns this process's handle to the current branch's index,
// synced with the tree (at most once per Options.RecheckWithin unless a
// writer changed it; at every call when the tree is watched for it, so
// that a read sees every change made before it).
func (b *Backend) indexDB(ctx context.Context) (*index.DB, error) {
	return b.openIndex(ctx, true)
}

// openIndex returns the index handle, synced with the tree when sync is
// set. The worker's own search (placement) does without: every job's
// transaction leaves the index in step with the tree, and a placement
// that misses a note edited by hand a moment ago is still a placement.
func (b *Backend) openIndex(ctx context.Context, sync bool) (*index.DB, error) {
	if err := b.gone(); err != nil {
		return nil, err
	}
	branch, err := index.CurrentBranch(ctx, b.k)
	if err != nil {
		return nil, err
	}
	db, err := index.OpenShared(ctx, b.k, branch)
	if err != nil {
		return nil, err
	}
	if !sync {
		return db, nil
	}
	ex, err := index.ExtractionFor(b.k)
	if err != nil {
		return nil, err
	}
	within := max(b.recheckWithin, 0)
	if b.isWatched(db) {
		within = 0
	}
	if _, err := db.SyncRecent(ctx, b.k.NodesDir(), ex, within); err != nil {
		return nil, err
	}
	return db, nil
}

// leafHits runs kk's search and keeps the hits that are leaves of the
// tree (not extracted documents), best first. A query search (sync) asks
// kk's relevance threshold whether the best hit answers the text; the
// organizer's similarity search (!sync) wants the nearest notes whatever
// their score.
func (b *Backend) leafHits(ctx context.Context, r index.Request, sync bool) ([]index.Hit, error) {
	if !index.Searchable(r.Text) {
		return nil, nil
	}
	hits, err := b.leafHitsOnce(ctx, r, sync)
	if b.dropDamagedIndex(err) {
		hits, err = b.leafHitsOnce(ctx, r, sync)
	}
	return hits, err
}

func (b *Backend) leafHitsOnce(ctx context.Context, r index.Request, sync bool) ([]index.Hit, error) {
	db, err := b.openIndex(ctx, sync)
	if err != nil {
		return nil, err
	}
	r.NoSnippets = true // kk serve answers with whole notes
	hits, err := db.Search(ctx, r)
	if err != nil {
		return nil, err
	}
	// Entities extractors read from elsewhere in the repository have
	// paths "@<file>#<id>": they are not notes.
	return slices.DeleteFunc(hits, func(h index.Hit) bool { return strings.HasPrefix(h.Path, "@") }), nil
}

// rerankPool is how many of kk's hits the model reranks.
const rerankPool = 20

// Search returns the paths of the notes that best answer query, at most
// limit: kk's search, reranked by the model when there is one. A failed
// rerank falls back to kk's order (and is logged): search never fails for
// the model's sake. The notes are not read: the HTTP face reads and
// writes them one at a time, so that an answer never holds them all.
func (b *Backend) Search(ctx context.Context, query string, limit int) ([]string, error) {
	pool := limit
	if b.llm != nil {
		pool = max(limit, rerankPool)
	}
	hits, err := b.leafHits(ctx, index.Request{Text: query, Limit: pool}, true)
	if err != nil {
		return nil, err
	}
	paths := make([]string, len(hits))
	for i, h := range hits {
		paths[i] = h.Path
	}
	if b.llm != nil && len(hits) > 1 {
		ranked, err := b.rerank(ctx, query, hits)
		if err != nil {
			b.log.Warn("rerank failed; kk's order is kept", "query", query, "error", err)
		} else {
			paths = ranked
		}
	}
	out := make([]string, 0, min(limit, len(paths)))
	for _, p := range paths {
		if len(out) == limit {
			break
		}
		if _, err := os.Lstat(b.k.NodePath(p)); errors.Is(err, fs.ErrNotExist) {
			continue // removed since the index saw it
		}
		out = append(out, p)
	}
	return out, nil
}

// searchDocs returns the notes Search finds, read whole.
func (b *Backend) searchDocs(ctx context.Context, query string, limit int) ([]service.Doc, error) {
	paths, err := b.Search(ctx, query, limit)
	if err != nil {
		return nil, err
	}
	var docs []service.Doc
	for _, p := range paths {
		content, err := b.Read(ctx, p)
		if errors.Is(err, service.ErrNotFound) {
			continue // removed since
		}
		if err != nil {
			return nil, err
		}
		docs = append(docs, service.Doc{Path: p, Content: content})
	}
	return docs, nil
}

// lowerTags returns a leaf's tags lower-cased, distinct and sorted.
func lowerTags(tags []string) []string {
	out := make([]string, 0, len(tags))
	for _, t := range tags {
		if t = strings.ToLower(strings.TrimSpace(t)); t != "" {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// ByTags returns the notes carrying any (or all) of tags, most recently
// modified first, then by path. A note's modified time is the one it
// records (kk_updated_at, else kk_created_at: what knowledged's modified
// became), else its file's: a checkout or a clone gives every file the
// same time, which orders nothing.
func (b *Backend) ByTags(ctx context.Context, tags []string, all bool) ([]service.TagDoc, error) {
	t, err := b.readTree()
	if err != nil {
		return nil, err
	}
	want := make(map[string]bool, len(tags))
	for _, t := range tags {
		want[t] = true
	}
	var matches []*node.Node
	for _, n := range t.Leaves {
		// Each of the note's tags looked up among the wanted ones: the
		// cost follows the note's tags, not the query's.
		matched := 0
		for _, have := range lowerTags(n.Tags) {
			if want[have] {
				matched++
			}
		}
		if matched == 0 || all && matched < len(want) {
			continue
		}
		matches = append(matches, n)
	}
	recorded := b.recordedTimes(ctx, matches)
	var out []service.TagDoc
	for _, n := range matches {
		fi, err := os.Stat(b.k.NodePath(n.Path))
		if err != nil {
			continue // removed since the tree was read
		}
		modified, ok := recorded[n.Path]
		if !ok {
			modified = fi.ModTime()
		}
		out = append(out, service.TagDoc{Path: n.Path, Title: n.Title, Description: n.Description, Tags: lowerTags(n.Tags), Modified: modified.UTC().Truncate(time.Second)})
	}
	slices.SortFunc(out, func(a, b service.TagDoc) int {
		if c := b.Modified.Compare(a.Modified); c != 0 {
			return c
		}
		return strings.Compare(a.Path, b.Path)
	})
	return out, nil
}

// recordedTimes returns the time each of leaves records as its last
// change (kk_updated_at, else kk_created_at), by path, from the branch's
// index (the tree kept for reads has no such keys); a leaf that records
// none, or whose time does not parse, is left out.
func (b *Backend) recordedTimes(ctx context.Context, leaves []*node.Node) map[string]time.Time {
	out := map[string]time.Time{}
	if len(leaves) == 0 {
		return out
	}
	db, err := b.openIndex(ctx, false) // readTree synced it
	if err != nil {
		return out
	}
	ids := make([]string, len(leaves))
	for i, n := range leaves {
		ids[i] = n.ID
	}
	rows, err := db.GraphKeysByID(ctx, ids)
	if err != nil {
		b.log.Warn("reading the notes' times from the index", "error", err)
		return out
	}
	for _, r := range rows {
		for _, key := range []string{keyUpdatedAt, keyCreatedAt} {
			if at, ok := recordedTime(r.Extra(key)); ok {
				out[r.Path] = at
				break
			}
		}
	}
	return out
}

// recordedTime is a front matter time value (a string in RFC 3339, or a
// time), when v is one.
func recordedTime(v any, ok bool) (time.Time, bool) {
	switch v := v.(type) {
	case time.Time:
		return v, ok && !v.IsZero()
	case string:
		at, err := time.Parse(time.RFC3339, strings.TrimSpace(v))
		return at, ok && err == nil
	}
	return time.Time{}, false
}

// Tags counts the notes per tag (lower-cased), sorted by tag.
func (b *Backend) Tags(context.Context) ([]service.TagCount, error) {
	t, err := b.readTree()
	if err != nil {
		return nil, err
	}
	counts := map[string]int{}
	for _, n := range t.Leaves {
		for _, tag := range lowerTags(n.Tags) {
			counts[tag]++
		}
	}
	out := make([]service.TagCount, 0, len(counts))
	for tag, c := range counts {
		out = append(out, service.TagCount{Tag: tag, Count: c})
	}
	slices.SortFunc(out, func(a, b service.TagCount) int { return strings.Compare(a.Tag, b.Tag) })
	return out, nil
}

// Recent returns the newest notes stored through the service (the store
// commits of the branch's history), newest first, with the tags their
// leaves have now.
func (b *Backend) Recent(ctx context.Context, n int) ([]service.Post, error) {
	if err := b.gone(); err != nil {
		return nil, err
	}
	commits, err := gitx.RecentJobCommits(ctx, b.k.Root, service.OpStore, b.author, n)
	if err != nil {
		return nil, err
	}
	var byPath map[string]*node.Node
	if len(commits) > 0 {
		t, err := b.readTree()
		if err != nil {
			return nil, err
		}
		byPath = make(map[string]*node.Node, len(t.Leaves))
		for _, l := range t.Leaves {
			byPath[l.Path] = l
		}
	}
	posts := make([]service.Post, 0, len(commits))
	for _, c := range commits {
		p := service.Post{JobID: c.ID, Path: c.Path, CreatedAt: c.Time}
		if l := byPath[c.Path]; l != nil && len(l.Tags) > 0 {
			p.Tags = slices.Clone(l.Tags)
		}
		posts = append(posts, p)
	}
	return posts, nil
}

// Warm reads the tree and brings the branch's index up to date, so that
// the first request does not pay for it, and reads what the branch's tip
// holds (a failure of git's there is logged: the first commit reads it).
func (b *Backend) Warm(ctx context.Context) error {
	if err := b.watchTree(ctx); err != nil {
		return err
	}
	if _, err := b.readTree(); err != nil {
		return err
	}
	if _, err := b.indexDB(ctx); err != nil {
		return err
	}
	// What the branch's tip holds, for the first commit (view.go). A
	// git that fails to read it now (for a moment: a repack replacing a
	// pack, a full process table) is no reason not to serve: the first
	// commit reads it again, and takes the tip's generated files for
	// unknown until then.
	r, err := b.gitRepo()
	if err != nil {
		return err
	}
	if err := b.settleView(ctx, r); err != nil {
		if ctx.Err() != nil {
			return err
		}
		b.mu.Lock()
		b.view = nil
		b.mu.Unlock()
		b.log.Warn("reading what the branch's tip holds failed; the first commit reads it again", "error", err)
	}
	return nil
}

// inTree reports whether abs, its symlinks resolved, lies inside nodes/
// (its symlinks resolved now: nodes/ may have been made a symlink, or
// one to another folder, since the start).
func (b *Backend) inTree(abs string) bool {
	nodes, err := filepath.EvalSymlinks(b.k.NodesDir())
	if err != nil {
		return false
	}
	real, err := filepath.EvalSymlinks(abs)
	return err == nil && strings.HasPrefix(real, nodes+string(filepath.Separator))
}

// watchTree has the syncs of the served branch's index learn where the
// tree changed from the kernel (index.DB.Watch), unless Options.NoWatch;
// where the tree cannot be watched, they walk it, as they do without.
// The watches are set before the first sync, which walks.
func (b *Backend) watchTree(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.watch != nil {
		return nil
	}
	if b.noWatch {
		b.log.Info("every job walks the tree to find what changed (--no-watch)")
		return nil
	}
	w, err := treewatch.New(b.k.NodesDir(), b.k.StateDir(), b.watchOpts)
	if err != nil {
		b.log.Info("every job walks the tree to find what changed: it is not watched", "reason", err)
		return nil
	}
	branch, err := index.CurrentBranch(ctx, b.k)
	if err != nil {
		_ = w.Close()
		return err
	}
	db, err := index.OpenShared(ctx, b.k, branch)
	if err != nil {
		_ = w.Close()
		return err
	}
	db.Watch(w)
	b.watch, b.watched = w, db
	b.log.Info("the tree is watched: each job reads only the folders the kernel reports changed", "folders", w.Stats().Watches)
	return nil
}

// watchGaveUp logs, once, that the watch of the tree stopped (a watch
// the kernel refused): every job walks the tree from then on.
func (b *Backend) watchGaveUp() {
	b.mu.Lock()
	w := b.watch
	b.mu.Unlock()
	if w == nil {
		return
	}
	if why := w.Broken(); why != "" {
		b.log.Warn("the tree is no longer watched; every job walks it until kk serve restarts", "reason", why)
		b.mu.Lock()
		b.watch = nil
		b.mu.Unlock()
	}
}
