// Package txn is the one write path of a knowledge base. Every change of
// the tree, whichever face asks for it (a CLI command, an MCP tool, a hook,
// the HTTP worker), is a function handed to Update, which runs it inside a
// transaction:
//
//  1. take the writer lock, and finish what a killed writer left behind
//     (roll back its journal, remove its temporary files);
//  2. let the function read what it needs once (the tree, the leaves it
//     changes with their bodies, the synced branch index) and stage its
//     changes;
//  3. validate and render every staged leaf; a leaf whose bytes change gets
//     kk_version one above its current version (and kk_updated_at when it
//     records one), whoever asked, so that no optimistic write can skip a
//     version;
//  4. compute the generated index files from the tree as it will be;
//  5. journal the original content of every file the changeset touches,
//     then replace the files atomically; any failure from here on restores
//     them from the journal, so a changeset is present whole or not at all,
//     even after a SIGKILL (the next writer, or the next reader that finds
//     the lock free, rolls the journal back);
//  6. sync the branch's SQLite index, append one audit record, and drop
//     the journal: that is the commit;
//  7. release the lock.
//
// No other package takes the writer lock to change the tree or writes a
// file under nodes/ or conflicts/.
package txn

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/internal/frontmatter"
	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/indexfiles"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/store"
)

// Front matter keys the transaction maintains on every leaf it changes.
const (
	KeyVersion   = "kk_version"
	KeyUpdatedAt = "kk_updated_at"
)

// Meta says who makes a change and through which face. It becomes the
// change's audit record.
type Meta struct {
	// Actor is who asked: the created_by of a changeset, an agent's name,
	// or "" for the local user.
	Actor string
	// Source is the face or provenance: "cli", "mcp", "hook", "http", or
	// the source a changeset names.
	Source string
	// Command is the command or tool, recorded in the lock and the audit
	// record ("kk node write", "manage_graph").
	Command string
	// Changeset names the change; Update makes one up when empty.
	Changeset string
}

// Result is what a committed transaction did.
type Result struct {
	Changeset string
	// Written and Removed list the files the changeset wrote and removed,
	// relative to .ai/kenkeep, generated index files included.
	Written []string
	Removed []string
	Created []string // the files of Written that did not exist before
	// Data holds what was written to each file of Written: a later step
	// (kk serve's commit) can use it after the next transaction changed
	// the files.
	Data map[string][]byte
	// Sums are the sha256 (hex) of the files of Data, hashed once for
	// every later step (the record of generation, kk serve's commit).
	Sums map[string]string
	// Index is the regeneration of the index files; nil when the
	// transaction changed no leaf and was not asked to regenerate.
	Index *indexfiles.RebuildResult
	// Ops are the operations of the audit record.
	Ops []index.AuditOp
	// Generated lists the files of Written and Removed that are
	// generated index files (ENTRY.md, GRAPH.md, nodes/**/index.md).
	Generated []string
	// Tree is the tree as the changeset leaves it (the one the index
	// files were generated from), the transaction's own (see
	// store.Snapshot). A transaction that planned its change on the
	// branch index's kept tree leaves it nil until AfterTree assembles
	// it: read it through AfterTree.
	Tree *store.Tree
	// Before is the nodes hash (store.HashLeaves) of the tree as the
	// transaction read it, as its branch index recorded it; "" when not
	// known (or when the tree has a leaf kk cannot read). With
	// Index.NodesHash, the hash after, it lets kk serve tell that the
	// leaves it read are those of its last commit without comparing
	// every leaf.
	Before string

	after func() *store.Tree // Tree, assembled when first asked (AfterTree)
}

// AfterTree returns Tree, assembling it first when the transaction
// planned its change on the branch index's kept tree without a copy (see
// Tx.planChange); nil when the transaction did not read the tree.
func (r *Result) AfterTree() *store.Tree {
	if r.Tree == nil && r.after != nil {
		r.Tree = r.after()
	}
	return r.Tree
}

// Sum returns the sha256 (hex) of the file of Data at rel.
func (r *Result) Sum(rel string) string {
	if s, ok := r.Sums[rel]; ok {
		return s
	}
	sum := sha256.Sum256(r.Data[rel])
	return hex.EncodeToString(sum[:])
}

// Changed reports whether the transaction changed any file.
func (r *Result) Changed() bool { return len(r.Written)+len(r.Removed) > 0 }

// Tx is one transaction in progress: what the function handed to Update
// reads and stages.
type Tx struct {
	ctx  context.Context
	k    *store.KB
	meta Meta

	cfg       *store.Config      // config.yaml, read once (Config)
	deleted   *[]string          // leaves deleted in the work tree, unstaged, listed once (deletedByHand)
	removedRm *[]string          // leaves in HEAD the index no longer has (git rm), listed once (DeletedByHand)
	tree      *store.Tree        // the tree as read, of the transaction's own (see read)
	snap      store.TreeView     // or the branch index's kept tree or a view of its leaf state, read through its views
	afterTree func() *store.Tree // the tree after the change, assembled on demand (planChange)
	treeHash  string             // the nodes hash of tree as read ("" when not known)
	redirects store.Redirects
	db        *index.DB
	branch    string
	synced    bool

	leaves  []*staged              // in staging order
	byNode  map[*node.Node]*staged // the staged entry of a leaf handed out
	read    map[string]*staged     // by original path (relative to nodes/)
	files   map[string]*fileOp     // other files, by path relative to .ai/kenkeep
	fileSeq []string

	ops          []index.AuditOp
	after        []func(*Result) error
	before       []func(paths []string) error
	adopted      map[string]bool   // skipped leaves (by path under nodes/) the writer replaces (Adopt)
	rawByID      map[string]string // IDKey -> path under nodes/ of the leaves staged as raw files; nil until needed
	misuse       error             // the first staging the transaction refuses (refuse)
	regenerate   bool              // regenerate index files even when no leaf changed
	noIndexFiles bool              // leave the generated index files alone
	// sweep removes the temporary files the sync lists under nodes/
	// (kk index rebuild: see recoverLocked).
	sweep bool
	now   time.Time

	keep     string   // keep the originals under this name (KeepOriginals)
	restored []string // kept originals to drop once committed (RestoreOriginals)
}

// staged is a leaf the transaction writes or removes.
type staged struct {
	n        *node.Node // the leaf as it will be (nil once removed)
	orig     *node.Node // the tree's leaf it replaces; nil for a new leaf
	origPath string     // relative to nodes/; "" for a new leaf
	origData []byte     // the bytes read under the lock
	put      bool       // to be written
	removed  bool       // to be removed
	version  int64      // effective version of the original (0 when new, -1 until looked up)

	// kk_version and kk_updated_at as the original file has them.
	origVersion, origUpdated any
	hadVersion, hadUpdated   bool
}

type fileOp struct {
	data      []byte
	remove    bool
	generated bool // an index file generation found changed
}

// Update runs fn in a transaction on k and commits what it staged. When fn
// returns an error nothing is written and that error is returned.
func Update(ctx context.Context, k *store.KB, m Meta, fn func(tx *Tx) error) (*Result, error) {
	return update(ctx, k, m, false, fn)
}

// update is Update; sweep walks the tree for temporary files even when no
// journal was left (kk index rebuild, the fix kk doctor names for them).
func update(ctx context.Context, k *store.KB, m Meta, sweep bool, fn func(tx *Tx) error) (*Result, error) {
	if m.Command == "" {
		m.Command = "kk"
	}
	release, err := acquire(ctx, k, m.Command, 0)
	if err != nil {
		return nil, err
	}
	defer release()
	return updateLocked(ctx, k, m, sweep, fn)
}

// updateLocked is update, run by a caller that holds the writer lock.
func updateLocked(ctx context.Context, k *store.KB, m Meta, sweep bool, fn func(tx *Tx) error) (*Result, error) {
	if m.Command == "" {
		m.Command = "kk"
	}
	if err := recoverLocked(k, sweep); err != nil {
		return nil, err
	}
	// A write regenerates the index files from the leaves here; where
	// git's sparse checkout left some out, they would drop those leaves.
	if err := index.CheckedOut(ctx, k); err != nil {
		return nil, err
	}
	tx := &Tx{ctx: ctx, k: k, meta: m, byNode: map[*node.Node]*staged{}, read: map[string]*staged{}, files: map[string]*fileOp{}, now: k.Time(), sweep: sweep}
	if tx.meta.Changeset == "" {
		tx.meta.Changeset = NewChangesetID(tx.now)
	}
	if err := fn(tx); err != nil {
		return nil, err
	}
	if tx.misuse != nil {
		return nil, tx.misuse
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res, err := tx.commit()
	if err != nil {
		return nil, err
	}
	for _, name := range tx.restored {
		if err := DropOriginals(k, name); err != nil {
			return res, fmt.Errorf("the originals kept under %s were put back, but dropping them failed: %w", name, err)
		}
	}
	for _, fn := range tx.after {
		if err := fn(res); err != nil {
			return res, err
		}
	}
	if k.AfterWrite != nil && len(res.Written)+len(res.Removed) > 0 {
		k.AfterWrite(ctx)
	}
	return res, nil
}

// BeforeApply registers fn to run with the paths (relative to
// .ai/kenkeep) the changeset is about to write or remove, once they are
// known and before the first of them is touched, under the lock; an
// error from fn ends the transaction with nothing written. kk serve
// announces a job's paths this way, so that recovery can restore them.
func (tx *Tx) BeforeApply(fn func(paths []string) error) { tx.before = append(tx.before, fn) }

// Outside runs fn, a change another program makes to the tree (kk
// serve's git pull --rebase), inside the transaction: under its lock,
// after the recovery of killed writers and before the transaction reads
// anything, so that what the transaction then reads and generates
// follows it. The other program's change is not journaled (its own
// guarantees hold) and its files are not in the Result; the
// transaction's own changes (Regenerate's index files) are.
func (tx *Tx) Outside(fn func() error) error {
	if tx.cfg != nil || tx.tree != nil || tx.snap != nil || tx.db != nil || len(tx.leaves) > 0 || len(tx.files) > 0 {
		return errors.New("txn: a change by another program must come before the transaction reads or stages anything")
	}
	return fn()
}

// KeepOriginals keeps, once the changeset is committed, what each file
// it changes held before, under name (kk serve: the job's id), until
// DropOriginals or a transaction that RestoreOriginals: a step that
// follows the transaction outside it (kk serve's git commit) and fails,
// or a crash before it, can then put back exactly what was there, a
// person's uncommitted edit included.
func (tx *Tx) KeepOriginals(name string) { tx.keep = name }

// RestoreOriginals stages, for every file a changeset kept under name
// (KeepOriginals) changed, what the file held before it: its original
// bytes, or its removal when it did not exist, as long as the file still
// holds what the changeset left there: a file changed since (a person's
// edit after it) stays as it is. The generated index files are generated
// again from the tree as it will be instead (Regenerate).
// The originals are dropped once this transaction commits. It reports
// false, staging nothing, when nothing is kept under name.
func (tx *Tx) RestoreOriginals(name string) (bool, error) {
	p, err := keptPath(tx.k, name)
	if err != nil {
		return false, err
	}
	j, err := readJournal(p)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, c := range j.Changes {
		if c.Generated {
			continue
		}
		// A file changed since the changeset (a person's edit after the
		// job's write) is theirs now, and stays as it is.
		ours, err := holdsChange(filepath.Join(tx.k.Dir, filepath.FromSlash(c.Path)), JournalDir(tx.k), c)
		if err != nil {
			return false, err
		}
		switch {
		case !ours:
		case !c.Existed:
			tx.stageFile(c.Path, &fileOp{remove: true})
		case c.Backup != "":
			data, err := os.ReadFile(filepath.Join(JournalDir(tx.k), c.Backup))
			if err != nil {
				return false, fmt.Errorf("the original of %s: %w", c.Path, err)
			}
			tx.stageFile(c.Path, &fileOp{data: data})
		default:
			tx.stageFile(c.Path, &fileOp{data: c.Orig})
		}
	}
	tx.Regenerate()
	tx.restored = append(tx.restored, name)
	return true, nil
}

// AfterCommit registers fn to run once the changeset is committed, while
// the writer lock is still held: work outside the knowledge tree that must
// follow the change and not interleave with another writer (stamping the
// session logs a curation consumed, a git commit of the change). An error
// from fn is returned by Update with the committed Result; the changeset
// stays committed.
func (tx *Tx) AfterCommit(fn func(*Result) error) { tx.after = append(tx.after, fn) }

// NewChangesetID names one changeset: its time and 8 random hex digits.
func NewChangesetID(now time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "cs-" + now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// Context is the transaction's context.
func (tx *Tx) Context() context.Context { return tx.ctx }

// KB is the knowledge base the transaction changes.
func (tx *Tx) KB() *store.KB { return tx.k }

// Changeset is the id of the change being made.
func (tx *Tx) Changeset() string { return tx.meta.Changeset }

// Now is the transaction's time, the same for every timestamp it writes.
func (tx *Tx) Now() time.Time { return tx.now }

// Timestamp is Now in UTC to the second, as kk records times in leaves.
func (tx *Tx) Timestamp() string { return tx.now.UTC().Format("2006-01-02T15:04:05Z") }

// Tree returns the tree as it was when the transaction read it (under the
// lock), a tree of the caller's own. Leaves are read without their
// bodies; Leaf reads one whole.
func (tx *Tx) Tree() (*store.Tree, error) {
	if err := tx.readTree(); err != nil {
		return nil, err
	}
	if tx.tree == nil {
		tx.tree = tx.snap.Tree()
	}
	return tx.tree, nil
}

// readTree reads the tree from the branch index, synced under the lock (the
// sync Index would make), once, as a store.TreeView: a long-running
// process's index keeps the tree as a store.Snapshot, and a process's
// first read is a view of the index's leaf state that decodes only the
// leaves asked for. The transaction reads it through its lookups (its
// leaves are never handed out), so that a write neither assembles nor
// copies every leaf: the transaction's own lookups, and the plan of the
// index files of a change (indexfiles.PlanChange), read the view; the
// whole tree is made only when a caller asks for it (Tree), or when the
// tree has a leaf kk cannot read.
func (tx *Tx) readTree() error {
	if tx.tree != nil || tx.snap != nil {
		return nil
	}
	db, err := tx.index()
	if err != nil {
		return err
	}
	ex, err := tx.extraction()
	if err != nil {
		return err
	}
	t, snap, st, err := db.TreeOrSnapshot(tx.ctx, tx.k.NodesDir(), ex)
	if err != nil {
		return err
	}
	tx.treeHash = st.Hash
	tx.tree, tx.snap, tx.synced = t, snap, true
	tx.k.NoteSkipped(tx.problems())
	if t != nil {
		tx.removeLeftovers(t.Leftovers)
	} else {
		tx.removeLeftovers(snap.Leftovers())
	}
	return nil
}

// problems are the tree's Problems (see store.Tree.Problems).
func (tx *Tx) problems() []error {
	if tx.tree != nil {
		return tx.tree.Problems
	}
	if tx.snap != nil {
		return tx.snap.Problems()
	}
	return nil
}

// skipped is store.Tree.Skipped of the tree as read.
func (tx *Tx) skipped(rel string) bool {
	if tx.tree != nil {
		return tx.tree.Skipped(rel)
	}
	return tx.snap.Skipped(rel)
}

// claimed is store.Tree.Claimed of the tree as read.
func (tx *Tx) claimed(id string) (string, bool) {
	if tx.tree != nil {
		return tx.tree.Claimed(id)
	}
	return tx.snap.Claimed(id)
}

// pathOf is the path of the leaf with the given id in the tree as read.
func (tx *Tx) pathOf(id string) (string, bool) {
	if tx.tree != nil {
		n, ok := tx.tree.ByID(id)
		if !ok {
			return "", false
		}
		return n.Path, true
	}
	l, ok := tx.snap.ByID(id)
	if !ok {
		return "", false
	}
	return l.Path(), true
}

// origAt is the leaf at rel in the tree as read, for a staged leaf to
// name what it replaces: the tree's own, or a copy of the snapshot's.
func (tx *Tx) origAt(rel string) (*node.Node, bool) {
	if tx.tree != nil {
		return tx.tree.LeafAt(rel)
	}
	l, ok := tx.snap.LeafAt(rel)
	if !ok {
		return nil, false
	}
	return l.Node(), true
}

// RequireV3 is store.RequireV3 of the tree as read, without a copy of it.
func (tx *Tx) RequireV3() error {
	if err := tx.readTree(); err != nil {
		return err
	}
	if tx.tree != nil {
		return store.RequireV3(tx.tree)
	}
	return tx.snap.RequireV3()
}

// LeafPath returns the path (relative to nodes/) of the leaf with the
// given id (compared without regard to case) in the tree as read, without
// a copy of the tree.
func (tx *Tx) LeafPath(id string) (string, bool, error) {
	if err := tx.readTree(); err != nil {
		return "", false, err
	}
	p, ok := tx.pathOf(id)
	return p, ok, nil
}

// removeLeftovers removes, when the transaction sweeps, the temporary
// files of interrupted writes a sync listed under nodes/ (no journal
// accounts for them: recovery rolled back every journal first).
func (tx *Tx) removeLeftovers(rels []string) {
	if !tx.sweep {
		return
	}
	for _, rel := range rels {
		_ = os.Remove(tx.k.NodePath(rel)) // a leftover gone already is what was wanted
	}
}

// current is the plan of a regeneration that changes nothing, when the
// branch index, synced now, says the generated files are current (see
// indexfiles.Current): the tree is then not assembled. nil otherwise.
func (tx *Tx) current() (*indexfiles.Plan, error) {
	if tx.synced || tx.tree != nil || tx.snap != nil {
		return nil, nil
	}
	db, err := tx.index()
	if err != nil {
		return nil, err
	}
	ex, err := tx.extraction()
	if err != nil {
		return nil, err
	}
	_, sh, err := db.SyncShape(tx.ctx, tx.k.NodesDir(), ex)
	if err != nil {
		return nil, err
	}
	tx.synced = true
	tx.removeLeftovers(sh.Leftovers)
	return indexfiles.Current(tx.ctx, tx.k, db, sh)
}

// Skipped lists the leaves the transaction's tree left out because they
// cannot be read, each with its problem.
func (tx *Tx) Skipped() []error { return tx.problems() }

// Redirects returns the redirect ledger (retired id -> successors) as the
// transaction will leave it.
func (tx *Tx) Redirects() (store.Redirects, error) {
	if tx.redirects == nil {
		r, err := tx.k.ReadRedirects()
		if err != nil {
			return nil, err
		}
		tx.redirects = r
	}
	return tx.redirects, nil
}

// SetRedirects stages a new redirect ledger.
func (tx *Tx) SetRedirects(r store.Redirects) {
	tx.redirects = r
	tx.WriteFile("nodes/.redirects.json", r.Render())
}

// Index returns the branch's index, synced with the tree under the lock
// (once per transaction), for reference checks and versions.
func (tx *Tx) Index() (*index.DB, error) {
	if _, err := tx.index(); err != nil {
		return nil, err
	}
	if !tx.synced {
		ex, err := tx.extraction()
		if err != nil {
			return nil, err
		}
		if _, err := tx.db.SyncWith(tx.ctx, tx.k.NodesDir(), ex); err != nil {
			return nil, err
		}
		tx.synced = true
	}
	return tx.db, nil
}

// index opens the branch's index, without syncing it.
func (tx *Tx) index() (*index.DB, error) {
	if tx.db == nil {
		branch, err := tx.Branch()
		if err != nil {
			return nil, err
		}
		db, err := index.OpenSharedWith(tx.ctx, tx.k, branch, tx.Config)
		if err != nil {
			return nil, err
		}
		tx.db, tx.branch = db, branch
	}
	return tx.db, nil
}

// Branch is the branch whose index and audit log the transaction uses.
func (tx *Tx) Branch() (string, error) {
	if tx.branch == "" {
		b, err := index.CurrentBranchWith(tx.ctx, tx.k, tx.Config)
		if err != nil {
			return "", err
		}
		tx.branch = b
	}
	return tx.branch, nil
}

// Config returns the knowledge base's config.yaml as the transaction read
// it, under the lock and once: the branch, the extractors and the checks
// of one changeset all follow the same settings.
func (tx *Tx) Config() (store.Config, error) {
	if tx.cfg == nil {
		cfg, err := tx.k.LoadConfig()
		if err != nil {
			return cfg, err
		}
		tx.cfg = &cfg
	}
	return *tx.cfg, nil
}

// extraction is what the transaction's config asks the index to extract.
func (tx *Tx) extraction() (*index.Extraction, error) {
	cfg, err := tx.Config()
	if err != nil {
		return nil, err
	}
	return index.ExtractionWith(tx.k, cfg), nil
}

// Leaf returns the leaf with the given id (compared without regard to
// case), read whole from its file, for the transaction to change: the same
// node for every call, nil when no leaf has the id. Changes reach the disk
// only through Put.
func (tx *Tx) Leaf(id string) (*node.Node, error) {
	for _, s := range tx.leaves {
		if s.n != nil && !s.removed && store.IDKey(s.n.ID) == store.IDKey(id) {
			return s.n, nil
		}
	}
	if err := tx.readTree(); err != nil {
		return nil, err
	}
	p, ok := tx.pathOf(id)
	if !ok {
		return nil, nil
	}
	return tx.LeafAt(p)
}

// LeafAt returns the leaf at rel (relative to nodes/) like Leaf; nil when
// there is none, and the leaf's *node.Error when the tree skipped it.
func (tx *Tx) LeafAt(rel string) (*node.Node, error) {
	if s, ok := tx.read[rel]; ok {
		if s.removed {
			return nil, nil
		}
		return s.n, nil
	}
	if err := tx.readTree(); err != nil {
		return nil, err
	}
	orig, _ := tx.origAt(rel)
	if orig == nil {
		if tx.skipped(rel) {
			for _, p := range tx.problems() {
				if ne, ok := errors.AsType[*node.Error](p); ok && ne.Path == rel {
					return nil, ne
				}
			}
		}
		return nil, nil
	}
	src, err := os.ReadFile(tx.k.NodePath(rel))
	if err != nil {
		return nil, err
	}
	n, err := node.Parse(rel, src)
	if err != nil {
		return nil, err
	}
	s := &staged{n: n, orig: orig, origPath: rel, origData: src, version: -1}
	s.origVersion, s.hadVersion = n.Extra(KeyVersion)
	s.origUpdated, s.hadUpdated = n.Extra(KeyUpdatedAt)
	tx.read[rel] = s
	tx.byNode[n] = s
	return n, nil
}

// Adopt returns the bytes of the file at rel (relative to nodes/), a leaf
// the tree skipped because it cannot be read (a note written by hand, a
// leaf whose keys are wrong), read under the lock, and lets the writer
// stage a valid leaf in its place: a new leaf Put at rel, or elsewhere
// with rel removed by RemoveFile. It is the one way a writer replaces or
// removes a skipped leaf; without it the transaction refuses to, so that
// nothing a person wrote is lost to a writer that could not read it.
func (tx *Tx) Adopt(rel string) ([]byte, error) {
	if err := tx.readTree(); err != nil {
		return nil, err
	}
	if !tx.skipped(rel) {
		return nil, fmt.Errorf("%s is not a leaf kk skips; there is nothing to adopt", path.Join(store.DirName, "nodes", rel))
	}
	src, err := os.ReadFile(tx.k.NodePath(rel))
	if err != nil {
		return nil, err
	}
	if tx.adopted == nil {
		tx.adopted = map[string]bool{}
	}
	tx.adopted[rel] = true
	return src, nil
}

// Readmit stages the leaf file at rel (relative to nodes/), one the tree
// skipped because another leaf had its id, as it is, byte for byte: the
// writer's change (kk node adopt giving a copy an id of its own) leaves
// it the leaf of that id, so that the tree as the changeset leaves it,
// and the index files generated from it, read it. Nothing in the file
// changes, and it is not written.
func (tx *Tx) Readmit(rel string) error {
	src, err := tx.Adopt(rel)
	if err != nil {
		return err
	}
	if _, err := node.Parse(rel, src); err != nil {
		return fmt.Errorf("readmitting %s: %w", path.Join(store.DirName, "nodes", rel), err)
	}
	tx.stageFile("nodes/"+rel, &fileOp{data: src})
	return nil
}

// Version returns the current version of the leaf n was read as: the
// version the branch index records for it (kk_version, or one more when
// its bytes changed outside kk), 0 for a new leaf.
func (tx *Tx) Version(n *node.Node) (int64, error) {
	s, ok := tx.byNode[n]
	if !ok || s.origPath == "" {
		return 0, nil
	}
	if s.version >= 0 {
		return s.version, nil
	}
	db, err := tx.Index()
	if err != nil {
		return 0, err
	}
	vs, err := db.Versions(tx.ctx, []string{s.origPath})
	if err != nil {
		return 0, err
	}
	v, ok := vs[s.origPath]
	if !ok { // not indexed (unreadable for the index): the file's own word
		v = max(s.fileVersion(), 1)
	}
	s.version = v
	return v, nil
}

// Versions returns the current versions of many leaves at once (see
// Version), by node.
func (tx *Tx) Versions(ns []*node.Node) (map[*node.Node]int64, error) {
	out := make(map[*node.Node]int64, len(ns))
	var paths []string
	for _, n := range ns {
		s, ok := tx.byNode[n]
		switch {
		case !ok || s.origPath == "":
			out[n] = 0
		case s.version >= 0:
			out[n] = s.version
		default:
			paths = append(paths, s.origPath)
		}
	}
	if len(paths) == 0 {
		return out, nil
	}
	db, err := tx.Index()
	if err != nil {
		return nil, err
	}
	vs, err := db.Versions(tx.ctx, paths)
	if err != nil {
		return nil, err
	}
	for _, n := range ns {
		s, ok := tx.byNode[n]
		if !ok || s.origPath == "" || s.version >= 0 {
			continue
		}
		v, ok := vs[s.origPath]
		if !ok {
			v = max(s.fileVersion(), 1)
		}
		s.version = v
		out[n] = v
	}
	return out, nil
}

func (s *staged) fileVersion() int64 {
	if i, ok := s.origVersion.(int64); ok && s.hadVersion {
		return i
	}
	return 0
}

func fileVersion(n *node.Node) int64 {
	if n == nil {
		return 0
	}
	if v, ok := n.Extra(KeyVersion); ok {
		if i, ok := v.(int64); ok {
			return i
		}
	}
	return 0
}

// ConflictError is an optimistic write made with a version that is not
// the leaf's current one.
type ConflictError struct {
	ID      string
	Type    string
	Path    string // relative to nodes/
	Given   int64
	Current int64
	// Changes are the writes the caller did not see, oldest first, as the
	// branch's audit log records them (empty for a change made outside kk:
	// an editor, a git pull).
	Changes []Change
}

// Change is one write of a leaf as the audit log records it.
type Change struct {
	Version   int64    `json:"version"`
	Fields    []string `json:"fields,omitempty"`
	Actor     string   `json:"actor,omitempty"`
	Command   string   `json:"command,omitempty"`
	At        string   `json:"at"`
	Changeset string   `json:"changeset"`
}

// Conflict implements op.ConflictError.
func (e *ConflictError) Conflict() (typ, id string, given, current int64) {
	return e.Type, e.ID, e.Given, e.Current
}

// Missed implements op.ConflictError: the changes, and the newest three
// in a few words each.
func (e *ConflictError) Missed() (any, []string) {
	var missed []string
	for _, c := range e.Changes[max(0, len(e.Changes)-3):] {
		s := fmt.Sprintf("v%d", c.Version)
		if len(c.Fields) > 0 {
			s += " (" + strings.Join(c.Fields, ", ") + ")"
		}
		if c.Command != "" {
			s += " by " + c.Command
		}
		missed = append(missed, s)
	}
	return e.Changes, missed
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s %s is at version %d, not %d: it changed since it was read; re-read it and retry with version %d",
		e.Type, e.ID, e.Current, e.Given, e.Current)
}

// Expect checks that the leaf n was read as is at version want, and
// returns a *ConflictError when it is not.
func (tx *Tx) Expect(n *node.Node, want int64) error {
	v, err := tx.Version(n)
	if err != nil {
		return err
	}
	if v != want {
		s := tx.byNode[n]
		p := ""
		if s != nil {
			p = s.origPath
		}
		return &ConflictError{ID: n.ID, Type: n.Type, Path: p, Given: want, Current: v, Changes: tx.changesSince(n.ID, want)}
	}
	return nil
}

// changesSince lists the audit log's writes of the leaf id after version
// given, so that a CONFLICT says what the caller missed. The log is only
// a help here: a log that cannot be read gives no changes.
func (tx *Tx) changesSince(id string, given int64) []Change {
	branch, err := tx.Branch()
	if err != nil {
		return nil
	}
	recs, err := index.ReadAudit(tx.k, branch)
	if err != nil {
		return nil
	}
	key := store.IDKey(id)
	var out []Change
	for _, r := range recs {
		for _, o := range r.Ops {
			if (o.Op == "update" || o.Op == "create") && store.IDKey(o.ID) == key && o.After > given {
				out = append(out, Change{Version: o.After, Fields: o.Fields, Actor: r.Actor, Command: r.Command, At: r.At, Changeset: r.Changeset})
			}
		}
	}
	const keep = 10 // the newest; a hot leaf's log is long
	if len(out) > keep {
		out = out[len(out)-keep:]
	}
	return out
}

// Put stages leaf n to be written at n.Path: a leaf handed out by Leaf or
// LeafAt (which may have moved), or a new one. Its bytes are rendered at
// commit, with links resolved against the leaves being written.
func (tx *Tx) Put(n *node.Node) {
	s, ok := tx.byNode[n]
	if !ok {
		s = &staged{n: n}
		tx.byNode[n] = s
	}
	s.removed = false
	if !s.put {
		s.put = true
		tx.leaves = append(tx.leaves, s)
	}
}

// Remove stages the removal of leaf n (handed out by Leaf or LeafAt).
func (tx *Tx) Remove(n *node.Node) error {
	s, ok := tx.byNode[n]
	if !ok || s.origPath == "" {
		if ok { // a new leaf staged and dropped again
			s.put = false
			tx.leaves = slices.DeleteFunc(tx.leaves, func(x *staged) bool { return x == s })
			return nil
		}
		return fmt.Errorf("removing %s: the leaf was not read in this transaction", n.Path)
	}
	s.removed = true
	if !s.put {
		s.put = true
		tx.leaves = append(tx.leaves, s)
	}
	return nil
}

// Resolve maps an id to the path (relative to nodes/) its leaf will have
// after the transaction: staged leaves first, then the tree and the
// redirect ledger. It is the resolver leaves are rendered with.
func (tx *Tx) Resolve(id string) (string, bool) {
	if err := tx.readTree(); err != nil {
		return "", false
	}
	r, err := tx.Redirects()
	if err != nil {
		return "", false
	}
	return store.RedirectResolver(tx.livePath, r)(id)
}

// livePath maps an id to the path its leaf will have after the
// transaction, without following redirects.
func (tx *Tx) livePath(id string) (string, bool) {
	key := store.IDKey(id)
	for _, s := range tx.leaves {
		if s.n != nil && store.IDKey(s.n.ID) == key && !s.removed {
			return s.n.Path, true
		}
	}
	if p, ok := tx.rawLeaves()[key]; ok { // a leaf moved whole, or migrated
		return p, true
	}
	p, ok := tx.pathOf(id)
	if !ok {
		return "", false
	}
	if s := tx.read[p]; s != nil && s.put {
		// Staged: removed, or renamed to another id.
		if s.removed || store.IDKey(s.n.ID) != key {
			return "", false
		}
		return s.n.Path, true
	}
	if op, ok := tx.files["nodes/"+p]; ok && op.remove {
		return "", false
	}
	return p, true
}

// rawLeaves maps the ids of the leaves staged as raw files (WriteFile
// under nodes/) to their paths, so that links resolve to where they go.
func (tx *Tx) rawLeaves() map[string]string {
	if tx.rawByID != nil {
		return tx.rawByID
	}
	tx.rawByID = map[string]string{}
	for _, rel := range tx.fileSeq {
		leaf, ok := strings.CutPrefix(rel, "nodes/")
		op := tx.files[rel]
		if !ok || op.remove || !store.IsLeafName(path.Base(leaf)) {
			continue
		}
		if n, err := node.Parse(leaf, op.data); err == nil {
			tx.rawByID[store.IDKey(n.ID)] = leaf
		}
	}
	return tx.rawByID
}

// WriteFile stages a file other than a leaf, rel relative to .ai/kenkeep
// (conflicts/…, FOLDER_SUMMARIES.md, nodes/.redirects.json, .state/…).
// A leaf is staged as a node (Put), so that it is validated and gets its
// new version; its file is moved as it is with MoveLeaf, converted by a
// schema migration with MigrateLeaf, and put back as it was before a
// changeset with RestoreOriginals. WriteFile of a leaf's path fails the
// transaction before anything is written.
func (tx *Tx) WriteFile(rel string, data []byte) {
	if leaf, ok := leafFile(rel); ok {
		tx.refuse(fmt.Errorf("txn: WriteFile %s: a leaf is staged as a node (Put), validated and versioned, not as bytes", path.Join(store.DirName, "nodes", leaf)))
		return
	}
	tx.stageFile(rel, &fileOp{data: data})
}

// RemoveFile stages the removal of a file other than a leaf, or of a leaf
// the tree skipped that the writer adopted (Adopt). A leaf is removed with
// Remove; RemoveFile of another leaf fails the transaction before anything
// is written.
func (tx *Tx) RemoveFile(rel string) {
	if leaf, ok := leafFile(rel); ok && !tx.adopted[leaf] {
		tx.refuse(fmt.Errorf("txn: RemoveFile %s: a leaf is removed with Remove, after it is read", path.Join(store.DirName, "nodes", leaf)))
		return
	}
	tx.stageFile(rel, &fileOp{remove: true})
}

// MoveLeaf stages the move of the leaf at from to to (both relative to
// nodes/) byte for byte: the file as read under the lock, which the tree
// reads as a leaf, so that nothing in it changes, its version included
// (git sees a rename). A leaf whose content changes as it moves is read
// with LeafAt, given its new Path and Put.
func (tx *Tx) MoveLeaf(from, to string) error {
	t, err := tx.Tree()
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(t.Leaves, func(n *node.Node) bool { return n.Path == from }) {
		return fmt.Errorf("moving %s: it is not a leaf of the tree", path.Join(store.DirName, "nodes", from))
	}
	if s := tx.read[from]; s != nil && s.put {
		return fmt.Errorf("moving %s: the leaf is staged already", path.Join(store.DirName, "nodes", from))
	}
	if err := tx.checkInsideTree("", to); err != nil { // the names of the folders it makes
		return err
	}
	data, err := os.ReadFile(tx.k.NodePath(from))
	if err != nil {
		return err
	}
	tx.stageFile("nodes/"+to, &fileOp{data: data})
	if from != to {
		tx.stageFile("nodes/"+from, &fileOp{remove: true})
	}
	return nil
}

// MigrateLeaf stages a leaf file a schema migration writes: data, the leaf
// at from converted to a later schema (kk place apply, kk migrate okf-v3),
// written at to (from when it stays) with from removed. data must read as
// a leaf; the version it carries is kept, since a migration changes the
// format of a leaf, not its knowledge.
func (tx *Tx) MigrateLeaf(from, to string, data []byte) error {
	if _, err := node.Parse(to, data); err != nil {
		return fmt.Errorf("migrating %s: the converted leaf does not read back: %w", path.Join(store.DirName, "nodes", from), err)
	}
	if _, err := os.Lstat(tx.k.NodePath(from)); err != nil {
		return fmt.Errorf("migrating %s: %w", path.Join(store.DirName, "nodes", from), err)
	}
	if err := tx.checkInsideTree("", to); err != nil { // the names of the folders it makes
		return err
	}
	tx.stageFile("nodes/"+to, &fileOp{data: data})
	if from != to {
		tx.stageFile("nodes/"+from, &fileOp{remove: true})
	}
	return nil
}

func (tx *Tx) stageFile(rel string, op *fileOp) {
	tx.rawByID = nil
	if _, ok := tx.files[rel]; !ok {
		tx.fileSeq = append(tx.fileSeq, rel)
	}
	tx.files[rel] = op
}

// leafFile reports whether rel (relative to .ai/kenkeep) is the path of a
// leaf file, and its path relative to nodes/.
func leafFile(rel string) (string, bool) {
	leaf, ok := strings.CutPrefix(rel, "nodes/")
	return leaf, ok && store.IsLeafName(path.Base(leaf))
}

// refuse records a misuse of the transaction, which fails it when fn
// returns: the first one is the error.
func (tx *Tx) refuse(err error) {
	if tx.misuse == nil {
		tx.misuse = err
	}
}

// StagedFile returns the content a file other than a leaf will have: the
// staged content, else the file's current content (nil when absent).
func (tx *Tx) StagedFile(rel string) ([]byte, error) {
	if op, ok := tx.files[rel]; ok {
		if op.remove {
			return nil, nil
		}
		return op.data, nil
	}
	data, err := os.ReadFile(filepath.Join(tx.k.Dir, filepath.FromSlash(rel)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

// Record adds an operation to the audit record, besides the create,
// update and delete operations the transaction records for every leaf.
func (tx *Tx) Record(op index.AuditOp) { tx.ops = append(tx.ops, op) }

// Regenerate asks for the index files to be brought up to date even when
// no leaf changes (kk index rebuild).
func (tx *Tx) Regenerate() { tx.regenerate = true }

// SkipIndexFiles leaves the generated index files as they are, for a
// caller that writes many leaves one transaction at a time and rebuilds
// once at the end (--no-index).
func (tx *Tx) SkipIndexFiles() { tx.noIndexFiles = true }

// planIndexFiles computes the generated index files of tree t as the
// changeset leaves it.
func (tx *Tx) planIndexFiles(t *store.Tree, out []rendered) (*indexfiles.Plan, error) {
	// d is how t changes from the tree as read: the record of the last
	// generation may be brought forward by it alone.
	d := &indexfiles.Delta{Before: tx.treeHash}
	if err := tx.applyRawLeaves(t, d); err != nil {
		return nil, err
	}
	for _, r := range out {
		c := indexfiles.LeafChange{Old: r.s.orig}
		if r.s.orig != nil {
			// By path: the staged leaf's original may be a copy read
			// before the tree was (LeafAt on the snapshot).
			if o, ok := t.LeafAt(r.s.orig.Path); ok {
				t.Remove(o)
			}
		}
		if !r.s.removed {
			n, sum, err := r.leaf()
			if err != nil {
				return nil, err
			}
			t.Put(nil, n, sum)
			c.New = n
		}
		d.Changes = append(d.Changes, c)
	}
	var summaries []byte
	if op, ok := tx.files["FOLDER_SUMMARIES.md"]; ok && !op.remove {
		summaries = op.data
	}
	return indexfiles.PlanFor(tx.ctx, tx.k, tx.db, t, summaries, d)
}

// planChange is planIndexFiles for a transaction that read the branch
// index's kept tree (tx.snap) and staged no raw leaf: the plan reads the
// snapshot and the change (indexfiles.PlanChange), and the tree after the
// change is assembled (a copy of the snapshot, changed) only when the
// plan or a later reader (Result.AfterTree) needs it whole.
func (tx *Tx) planChange(out []rendered) (*indexfiles.Plan, error) {
	d := &indexfiles.Delta{Before: tx.treeHash}
	hashes := map[string]string{}
	for _, r := range out {
		c := indexfiles.LeafChange{Old: r.s.orig}
		if !r.s.removed {
			n, sum, err := r.leaf()
			if err != nil {
				return nil, err
			}
			hashes[n.Path] = sum
			c.New = n
		}
		d.Changes = append(d.Changes, c)
	}
	snap := tx.snap
	var after *store.Tree
	full := func() *store.Tree {
		if after == nil {
			after = snap.Tree()
			for _, c := range d.Changes {
				if c.Old != nil {
					if o, ok := after.LeafAt(c.Old.Path); ok {
						after.Remove(o)
					}
				}
			}
			for _, c := range d.Changes {
				if c.New != nil {
					after.Put(nil, c.New, hashes[c.New.Path])
				}
			}
		}
		return after
	}
	tx.afterTree = full
	var summaries []byte
	if op, ok := tx.files["FOLDER_SUMMARIES.md"]; ok && !op.remove {
		summaries = op.data
	}
	return indexfiles.PlanChange(tx.ctx, tx.k, tx.db, snap, summaries, d, hashes, full)
}

// applyRawLeaves brings tree t in step with the leaf files staged as raw
// bytes (WriteFile and RemoveFile under nodes/: a migration rewrites
// leaves byte for byte), so that the index files are generated from the
// tree as it will be.
func (tx *Tx) applyRawLeaves(t *store.Tree, d *indexfiles.Delta) error {
	var byPath map[string]*node.Node
	for _, rel := range tx.fileSeq {
		leaf, ok := strings.CutPrefix(rel, "nodes/")
		if !ok || !strings.HasSuffix(leaf, ".md") || path.Base(leaf) == "index.md" || path.Base(leaf) == "log.md" || strings.HasPrefix(path.Base(leaf), ".") {
			continue
		}
		if byPath == nil {
			byPath = make(map[string]*node.Node, len(t.Leaves))
			for _, n := range t.Leaves {
				byPath[n.Path] = n
			}
		}
		c := indexfiles.LeafChange{Old: byPath[leaf]}
		if c.Old != nil {
			t.Remove(c.Old)
			delete(byPath, leaf)
		}
		op := tx.files[rel]
		if !op.remove {
			n, err := node.Parse(leaf, op.data)
			if err != nil {
				if len(tx.restored) == 0 {
					return err
				}
				// Put back as it was (RestoreOriginals): a note that
				// cannot be read stays skipped, as a read leaves it.
				t.Skip(leaf, err)
			} else {
				n.Release(false)
				t.Put(nil, n, store.LeafSum(op.data))
				byPath[leaf] = n
				c.New = n
			}
		}
		if c.Old != nil || c.New != nil {
			d.Changes = append(d.Changes, c)
		}
	}
	return nil
}

// refuseSkipped returns an error when rel (relative to nodes/) is a leaf
// the tree skipped and the writer did not Adopt: a writer never
// overwrites or removes a file it could not read.
func (tx *Tx) refuseSkipped(rel string) error {
	if err := tx.readTree(); err != nil {
		return err
	}
	if !tx.skipped(rel) {
		return nil
	}
	return fmt.Errorf("%s is a leaf kk cannot read (%s); kk does not overwrite or remove it: fix it by hand, or run %s",
		path.Join(store.DirName, "nodes", rel), tx.problemOf(rel), store.AdoptCommand(rel))
}

// Unreadable returns the error of a write that changes the leaf with
// the given id (kk node write --update) when the tree as read has no such
// leaf but a leaf it skipped claims the id (a hand edit broke its front
// matter): the file, its problem and what to run, as the write's commit
// would refuse it. It is nil when no skipped leaf claims the id, or when
// the writer adopted it.
func (tx *Tx) Unreadable(id string) error {
	if err := tx.readTree(); err != nil {
		return err
	}
	p, ok := tx.claimed(id)
	if !ok {
		return tx.deletedByHand(id)
	}
	if tx.adopted[p] {
		return nil
	}
	return tx.refuseSkipped(p)
}

// deletedByHand returns the error of an update of the leaf with the given
// id, which the tree does not have, when git's index has a leaf named
// for the id that is deleted in the work tree: a person (or an editor, a
// script) removed the file and did not stage the removal. The update
// would otherwise write a new leaf at the root of nodes/, keeping none of
// the fields, body and folder it meant to keep. Outside git, or with the
// removal staged (git rm), it is nil.
func (tx *Tx) deletedByHand(id string) error {
	tx.listDeleted()
	want := store.IDKey(id) + ".md"
	for _, rel := range *tx.deleted {
		if rel == "" || strings.ToLower(path.Base(filepath.ToSlash(rel))) != want {
			continue
		}
		return fmt.Errorf("%s, the leaf of %s, is deleted in the work tree and the deletion is not staged: --update changes a leaf that exists, keeping what it is not given; restore it with `git checkout -- %s` and update it, or write %s anew without --update",
			rel, id, rel, id)
	}
	return nil
}

// DeletedByHand returns the leaf with the given id as git has it when a
// person removed its file by hand: the work tree has no leaf with the id,
// and a leaf file named for it is deleted in the work tree, the removal
// staged (git rm; the leaf as HEAD has it) or not (rm, an editor, a
// script; the leaf as git's index has it). file is its path relative to
// the root, staged whether the removal is. It is nil outside git, when
// no such file is found, or when git's copy of it does not read as a
// leaf with that id. Path of the leaf is relative to nodes/, as the
// tree's are; the file is not there to read or remove.
func (tx *Tx) DeletedByHand(id string) (n *node.Node, file string, staged bool, err error) {
	if err := tx.readTree(); err != nil {
		return nil, "", false, err
	}
	if _, ok := tx.claimed(id); ok {
		return nil, "", false, nil
	}
	if t, err := tx.Tree(); err != nil {
		return nil, "", false, err
	} else if _, ok := t.ByID(id); ok {
		return nil, "", false, nil
	}
	tx.listDeleted()
	if tx.removedRm == nil {
		var list []string
		if out, err := gitx.Run(tx.ctx, tx.k.Root, "diff", "--cached", "--name-only", "--relative", "--no-renames", "--diff-filter=D", "-z", "HEAD", "--", tx.k.NodesDir()); err == nil {
			list = strings.Split(string(out), "\x00")
		}
		tx.removedRm = &list
	}
	nodesRel := filepath.ToSlash(tx.k.Rel(tx.k.NodesDir())) + "/"
	want := store.IDKey(id) + ".md"
	find := func(list []string, staged bool) (*node.Node, string) {
		for _, f := range list {
			f = filepath.ToSlash(f)
			rel, ok := strings.CutPrefix(f, nodesRel)
			if f == "" || !ok || strings.ToLower(path.Base(rel)) != want {
				continue
			}
			if _, err := os.Lstat(tx.k.NodePath(rel)); !errors.Is(err, fs.ErrNotExist) {
				continue
			}
			rev := ":./" + f
			if staged {
				rev = "HEAD:./" + f
			}
			src, err := gitx.Read(tx.ctx, tx.k.Root, "cat-file", "blob", rev)
			if err != nil {
				continue
			}
			n, err := node.Parse(rel, src)
			if err != nil || store.IDKey(n.ID) != store.IDKey(id) {
				continue
			}
			return n, f
		}
		return nil, ""
	}
	if n, f := find(*tx.deleted, false); n != nil {
		return n, f, false, nil
	}
	n, f := find(*tx.removedRm, true)
	return n, f, n != nil, nil
}

// RemovedInHistory returns the leaf with the given id as it was before the
// last commit of HEAD's history that removed its file (git rm, committed),
// when the work tree has no leaf with the id: commit is that commit's
// hash, file the leaf's path relative to the root. It is nil outside git,
// when no commit removed such a file, or when the file git had does not
// read as a leaf with that id. Path of the leaf is relative to nodes/.
func (tx *Tx) RemovedInHistory(id string) (n *node.Node, file, commit string, err error) {
	t, err := tx.Tree()
	if err != nil {
		return nil, "", "", err
	}
	if _, ok := t.ByID(id); ok {
		return nil, "", "", nil
	}
	if _, ok := tx.claimed(id); ok {
		return nil, "", "", nil
	}
	nodesRel := filepath.ToSlash(tx.k.Rel(tx.k.NodesDir()))
	commit, file, src := gitx.RemovedFile(tx.ctx, tx.k.Root, nodesRel, store.IDKey(id)+".md")
	rel, ok := strings.CutPrefix(file, nodesRel+"/")
	if commit == "" || !ok {
		return nil, "", "", nil
	}
	n, perr := node.Parse(rel, src)
	if perr != nil || store.IDKey(n.ID) != store.IDKey(id) {
		return nil, "", "", nil
	}
	return n, file, commit, nil
}

// listDeleted lists, once, the leaf files git's index has that the work
// tree does not (deletedByHand, DeletedByHand).
func (tx *Tx) listDeleted() {
	if tx.deleted == nil {
		var list []string
		if out, err := gitx.Run(tx.ctx, tx.k.Root, "ls-files", "--deleted", "-z", "--", tx.k.NodesDir()); err == nil {
			list = strings.Split(string(out), "\x00")
		}
		tx.deleted = &list
	}
}

// refuseClaimed returns an error when staged leaf s is new (or takes a
// new id) and its id is the one a skipped leaf names: the two would share
// an id as soon as the skipped one is fixed.
func (tx *Tx) refuseClaimed(s *staged) error {
	if s.orig != nil && store.IDKey(s.orig.ID) == store.IDKey(s.n.ID) {
		return nil
	}
	if err := tx.readTree(); err != nil {
		return err
	}
	p, ok := tx.claimed(s.n.ID)
	if !ok || tx.adopted[p] {
		return nil
	}
	return fmt.Errorf("id %s is taken by %s, a leaf kk cannot read (%s); fix or adopt that leaf (%s), or choose another id",
		s.n.ID, path.Join(store.DirName, "nodes", p), tx.problemOf(p), store.AdoptCommand(p))
}

// problemOf says what is wrong with the skipped leaf at rel.
func (tx *Tx) problemOf(rel string) string {
	for _, p := range tx.problems() {
		if ne, ok := errors.AsType[*node.Error](p); ok && ne.Path == rel {
			return ne.Detail()
		}
	}
	return "it was skipped"
}

// rendered is a staged leaf after rendering.
type rendered struct {
	s    *staged
	data []byte
	op   index.AuditOp
}

// leaf is the written leaf as a tree holds it, a read of the written file
// (graph links included), and the file's hash as a tree takes it
// (store.LeafSum: its sha256, CRLF read as LF).
func (r rendered) leaf() (*node.Node, string, error) {
	n, err := node.Parse(r.s.n.Path, r.data)
	if err != nil {
		return nil, "", err
	}
	n.Release(false)
	return n, store.LeafSum(r.data), nil
}

// commit validates and renders the staged leaves, plans the files the
// changeset writes (the generated index files of the tree as it will be
// among them), journals and applies them, and records the change: the
// branch index and the audit log.
func (tx *Tx) commit() (*Result, error) {
	p := &commitPlan{res: &Result{Changeset: tx.meta.Changeset, Written: []string{}, Removed: []string{}, Created: []string{}},
		files: map[string]*fileOp{}}
	if err := tx.relinkIncoming(); err != nil {
		return nil, err
	}
	if err := tx.renderLeaves(p); err != nil {
		return nil, err
	}
	if err := tx.planFiles(p); err != nil {
		return nil, err
	}
	if err := tx.generate(p); err != nil {
		return nil, err
	}
	tx.auditOps(p)
	if err := tx.prepareChanges(p); err != nil {
		return nil, err
	}
	branch, err := tx.Branch()
	if err != nil {
		return nil, err
	}
	// A changeset that names leaves or operations is recorded even when it
	// leaves every file as it was (it was applied, and changed nothing).
	p.record = len(tx.leaves) > 0 || len(tx.files) > 0 || len(tx.ops) > 0
	if len(p.changes) == 0 {
		return tx.commitUnchanged(p, branch)
	}
	return tx.apply(p, branch)
}

// relinkIncoming stages again the leaves outside the changeset whose
// edges name a leaf it creates or moves, so that their Related blocks are
// rendered with its new path: a block links the path its target has, and
// an edge to an id no leaf had yet links /<id>.md, so a note written into
// a folder after another related to it left that one's link pointing
// where it is not. A leaf whose block renders as it was drops out of the
// changeset (renderLeaves).
func (tx *Tx) relinkIncoming() error {
	keys := map[string]bool{}
	for _, s := range tx.leaves {
		if s.put && !s.removed && s.n != nil && s.origPath != s.n.Path {
			keys[store.IDKey(s.n.ID)] = true
		}
	}
	if len(keys) == 0 {
		return nil
	}
	if err := tx.readTree(); err != nil {
		return err
	}
	var naming []string
	if tx.tree != nil {
		for _, n := range tx.tree.Leaves {
			if store.Names(n, keys) {
				naming = append(naming, n.Path)
			}
		}
	} else {
		naming = tx.snap.Naming(keys)
	}
	for _, rel := range naming {
		if s, ok := tx.read[rel]; ok && (s.put || s.removed) {
			continue // in the changeset already, rendered with the new paths
		}
		n, err := tx.LeafAt(rel)
		if err != nil {
			return err
		}
		if n != nil {
			tx.Put(n)
		}
	}
	return nil
}

// commitPlan is what commit writes, built step by step.
type commitPlan struct {
	res     *Result
	out     []rendered         // the staged leaves that change, rendered
	files   map[string]*fileOp // every file to write or remove, relative to .ai/kenkeep
	order   []string           // the keys of files, in staging order
	gen     *indexfiles.Plan   // the generated index files; nil when not regenerated
	changes []change           // the files whose content changes
	record  bool               // append an audit record
	// rawLeaves is set when a leaf is written or removed as raw bytes.
	rawLeaves bool
}

func (p *commitPlan) add(rel string, op *fileOp) {
	if _, ok := p.files[rel]; !ok {
		p.order = append(p.order, rel)
	}
	p.files[rel] = op
}

// renderLeaves validates and renders every staged leaf, with its new
// version when its bytes change, and plans its file; a leaf that would be
// written as it is drops out.
func (tx *Tx) renderLeaves(p *commitPlan) error {
	// Versions of every changed leaf, in one query.
	var existing []*node.Node
	for _, s := range tx.leaves {
		if s.origPath != "" && s.version < 0 {
			existing = append(existing, s.n)
		}
	}
	if len(existing) > 0 {
		if _, err := tx.Versions(existing); err != nil {
			return err
		}
	}
	// The symlink guard's root, resolved once for every leaf written.
	var root string
	resolved := false
	for _, s := range tx.leaves {
		if s.removed {
			p.add("nodes/"+s.origPath, &fileOp{remove: true})
			p.out = append(p.out, rendered{s: s, op: index.AuditOp{Op: "delete", ID: s.orig.ID, Type: s.orig.Type, Path: s.origPath, Before: s.version}})
			continue
		}
		if !resolved {
			var err error
			if root, err = tx.nodesRoot(); err != nil {
				return err
			}
			resolved = true
		}
		if err := tx.renderLeafFile(p, s, root); err != nil {
			return err
		}
	}
	return nil
}

// renderLeafFile renders staged leaf s and plans its file (and the removal
// of its old file when it moves).
func (tx *Tx) renderLeafFile(p *commitPlan, s *staged, root string) error {
	data, changed, err := tx.render(s, root)
	if err != nil {
		return err
	}
	moved := s.origPath != "" && s.origPath != s.n.Path
	if !changed && !moved {
		return nil
	}
	op := index.AuditOp{Op: "update", ID: s.n.ID, Type: s.n.Type, Path: s.n.Path, Before: s.version, After: fileVersion(s.n)}
	if s.origPath == "" {
		op.Op, op.Before = "create", 0
	} else {
		op.Fields = changedFields(s.origData, data)
	}
	if moved {
		if _, taken := p.files["nodes/"+s.n.Path]; taken {
			return fmt.Errorf("%s: two leaves of the changeset are written to the same file", s.n.Path)
		}
		p.add("nodes/"+s.origPath, &fileOp{remove: true})
	}
	if s.origPath != s.n.Path {
		if _, err := os.Lstat(tx.k.NodePath(s.n.Path)); err == nil && tx.read[s.n.Path] == nil && !tx.adopted[s.n.Path] {
			if err := tx.refuseSkipped(s.n.Path); err != nil {
				return err
			}
			return fmt.Errorf("%s already exists; kk does not overwrite a leaf it did not read", path.Join(store.DirName, "nodes", s.n.Path))
		}
	}
	if err := tx.refuseClaimed(s); err != nil {
		return err
	}
	p.add("nodes/"+s.n.Path, &fileOp{data: data})
	p.out = append(p.out, rendered{s: s, data: data, op: op})
	return nil
}

// planFiles plans the files staged other than as leaves, refusing to
// overwrite or remove a leaf the tree skipped that the writer did not
// Adopt.
func (tx *Tx) planFiles(p *commitPlan) error {
	for _, rel := range tx.fileSeq {
		if leaf, ok := strings.CutPrefix(rel, "nodes/"); ok {
			if !tx.adopted[leaf] {
				if err := tx.refuseSkipped(leaf); err != nil {
					return err
				}
			}
			// A leaf written or removed as raw bytes (moved whole,
			// placed, migrated) changes the tree too.
			p.rawLeaves = p.rawLeaves || store.IsLeafName(path.Base(leaf))
		}
		p.add(rel, tx.files[rel])
	}
	return nil
}

// generate plans the generated index files of the tree as the changeset
// leaves it, when a leaf changes, when asked to (Regenerate), or when the
// folder summaries change.
func (tx *Tx) generate(p *commitPlan) error {
	treeChanged := len(p.out) > 0
	if tx.noIndexFiles || !(treeChanged || p.rawLeaves || tx.regenerate || tx.files["FOLDER_SUMMARIES.md"] != nil) {
		return nil
	}
	// Summaries and raw leaves alone (a placement on a kenkeep v1 tree)
	// regenerate only a tree kk can generate for.
	optional := !treeChanged && !tx.regenerate
	var gen *indexfiles.Plan
	if !treeChanged && !p.rawLeaves && tx.files["FOLDER_SUMMARIES.md"] == nil {
		// Only a regeneration (kk index rebuild): the index may say the
		// files are current without the tree.
		var err error
		if gen, err = tx.current(); err != nil {
			return err
		}
	}
	if gen == nil {
		if err := tx.readTree(); err != nil {
			if optional {
				return nil
			}
			return err
		}
		var err error
		if tx.tree == nil && !p.rawLeaves {
			gen, err = tx.planChange(p.out)
		} else {
			var t *store.Tree
			if t, err = tx.Tree(); err != nil {
				if optional {
					return nil
				}
				return err
			}
			gen, err = tx.planIndexFiles(t, p.out)
		}
		if err != nil {
			if optional && errors.Is(err, store.ErrNeedsMigration) {
				return nil
			}
			return err
		}
	}
	for _, name := range gen.Names() {
		p.add(name, &fileOp{data: gen.Write[name], generated: true})
	}
	for _, name := range gen.Remove {
		p.add(name, &fileOp{remove: true, generated: true})
	}
	p.gen, p.res.Index = gen, gen.Result
	return nil
}

// auditOps lists the operations of the audit record: the leaves', the
// other files', then those the caller recorded.
func (tx *Tx) auditOps(p *commitPlan) {
	for _, r := range p.out {
		p.res.Ops = append(p.res.Ops, r.op)
	}
	for _, rel := range tx.fileSeq {
		op := index.AuditOp{Op: "write", Path: rel}
		if tx.files[rel].remove {
			op.Op = "remove"
		}
		p.res.Ops = append(p.res.Ops, op)
	}
	p.res.Ops = append(p.res.Ops, tx.ops...)
}

// prepareChanges reads what each planned file holds, dropping the writes
// of files whose content is already what they hold (a generated file or a
// conflict file written again unchanged).
func (tx *Tx) prepareChanges(p *commitPlan) error {
	for _, rel := range p.order {
		c, err := tx.prepare(rel, p.files[rel])
		if err != nil {
			return err
		}
		if c != nil {
			p.changes = append(p.changes, *c)
		}
	}
	return nil
}

// commitUnchanged commits a changeset that changes no file: it is
// recorded when it named something.
func (tx *Tx) commitUnchanged(p *commitPlan, branch string) (*Result, error) {
	if p.record {
		if err := tx.audit(branch, p.res.Ops); err != nil {
			return nil, err
		}
	}
	if p.gen != nil {
		// The generated files on disk are already what generation
		// produced: record that, so the next run skips generating.
		p.gen.Written()
	}
	return p.res, nil
}

// apply journals the original content of every file the changeset
// changes, replaces the files, and records the change; any failure after
// the journal is written restores the files from it.
func (tx *Tx) apply(p *commitPlan, branch string) (*Result, error) {
	if err := tx.announce(p.changes); err != nil {
		return nil, err
	}
	for i := range p.changes {
		if c := &p.changes[i]; !c.Remove {
			sum := sha256.Sum256(c.Data)
			c.Sum = hex.EncodeToString(sum[:])
		}
	}
	handEdits, err := tx.keepHandEdits(p)
	if err != nil {
		return nil, err
	}
	auditPath := index.AuditPath(tx.k, branch)
	j := &journal{Changeset: tx.meta.Changeset, Audit: auditPath, AuditSize: fileSize(auditPath), Changes: p.changes}
	jpath, err := writeJournal(tx.ctx, tx.k, j)
	if err != nil {
		return nil, err
	}
	fail := func(cause error) (*Result, error) {
		if rerr := rollback(tx.k, j, func(p string) { at(tx.ctx, p) }); rerr != nil {
			return nil, fmt.Errorf("%w; undoing the changeset also failed: %v (the journal %s is kept; the next kk write retries the undo)", cause, rerr, tx.k.Rel(jpath))
		}
		if err := removeJournal(jpath, j); err != nil {
			return nil, fmt.Errorf("%w; %v", cause, err)
		}
		return nil, fmt.Errorf("%w; nothing was written (the changeset was undone)", cause)
	}
	if err := apply(tx.ctx, tx.k, p.changes); err != nil {
		return fail(err)
	}
	at(tx.ctx, "applied")
	if err := tx.recordChange(p, branch); err != nil {
		return fail(err)
	}
	at(tx.ctx, "recorded")
	if tx.keep != "" {
		err = keepJournal(tx.k, jpath, j, tx.keep)
	} else {
		err = removeJournal(jpath, j)
	}
	if err != nil {
		return fail(err)
	}
	res := p.result(tx.tree)
	res.Before = tx.treeHash
	if tx.tree == nil {
		res.after = tx.afterTree
	}
	if p.gen != nil {
		p.gen.WrittenSums(res.Sums)
	}
	for _, e := range handEdits {
		tx.k.NoteHandEdit(e)
	}
	return res, nil
}

// keepHandEdits copies each generated file the changeset replaces or
// removes that holds a person's edit (indexfiles.Plan.Edited) to
// .state/hand-edits/<changeset>/, before anything is written, and returns
// them, for the knowledge base to note once the changeset is applied (the
// face says where each copy is): the file is generated again from the
// notes, and the person's words are not lost.
func (tx *Tx) keepHandEdits(p *commitPlan) ([]store.HandEdit, error) {
	type candidate struct {
		c       change
		data    []byte
		edited  bool // of the plan's Edited, not FOLDER_SUMMARIES.md's words
		unsure  bool // of the plan's Unsure
		summary bool
	}
	var cands []candidate
	var ask []string
	for _, c := range p.changes {
		if !c.Existed {
			continue
		}
		edited := c.Generated && p.gen != nil && slices.Contains(p.gen.Edited, c.Path)
		// FOLDER_SUMMARIES.md's text after its front matter is rendered
		// from the summaries too (a rebalance, a placement, a migration
		// or a pack import writes it again): a person's words there are
		// kept the same way.
		summaries := c.Path == summariesFile && !c.Remove
		if !edited && !summaries {
			continue
		}
		data := c.Orig
		if c.large {
			var err error
			if data, err = os.ReadFile(filepath.Join(tx.k.Dir, filepath.FromSlash(c.Path))); err != nil {
				return nil, err
			}
		}
		if summaries && (!store.SummariesHandText(data) || store.SummariesHandText(c.Data)) {
			// no words of a person's, or the new text keeps them
			continue
		}
		cand := candidate{c: c, data: data, edited: edited && !summaries, summary: summaries}
		if cand.edited {
			cand.unsure = slices.Contains(p.gen.Unsure, c.Path)
			ask = append(ask, committedNames(c.Path, cand.unsure)...)
		}
		cands = append(cands, cand)
	}
	var blobs map[string][]byte
	if len(ask) > 0 {
		// One git process for every file asked about; outside a git work
		// tree, or before the first commit, no commit holds any.
		blobs, _ = gitx.Blobs(tx.ctx, tx.k.Root, ask)
	}
	var kept []store.HandEdit
	var rec map[string]string // NoteCheckedOut's record, read once when needed
	for _, cand := range cands {
		c, data := cand.c, cand.data
		if cand.edited && committed(blobs, c.Path, cand.unsure, data) {
			// The file as a commit at hand holds it: git's checkout or
			// merge, no one's edit here.
			continue
		}
		if cand.edited {
			if rec == nil {
				rec = checkedOut(tx.k)
			}
			if asCheckedOut(rec, c.Path, data) {
				// kk's generation for a commit it made again, checked
				// out of it (NoteCheckedOut): no one's edit either.
				continue
			}
		}
		rel := path.Join(".state", store.HandEditsDir, tx.meta.Changeset, c.Path)
		dst := filepath.Join(tx.k.Dir, filepath.FromSlash(rel))
		if err := store.InStateFolder(filepath.Dir(dst), func() error { return atomicfile.Write(dst, data, 0o644) }); err != nil {
			return nil, fmt.Errorf("keeping the hand edit of %s: %w", tx.k.Rel(filepath.Join(tx.k.Dir, filepath.FromSlash(c.Path))), err)
		}
		from, _ := node.ConflictMarkers(data)
		kept = append(kept, store.HandEdit{File: c.Path, Copy: rel, Removed: c.Remove, Conflicted: from > 0})
	}
	return kept, nil
}

// committedNames are the git object names of the generated file name
// (relative to .ai/kenkeep) in the commits that may hold it as it is on
// disk: the commit a merge brings in, MERGE_HEAD while the merge is under
// way or the second parent once it is committed (HEAD^2); the tree git's
// last merge wrote (AUTO_MERGE: a git merge --squash or a cherry-pick or
// revert with --no-commit, which leave no MERGE_HEAD, and whose merge
// driver kept one side of the file); and, for a file
// kk could not compare with what it generated (unsure: the files are of
// other leaves, as a checkout or a merge leaves them), HEAD.
//
// kk's record of the files it generated is this branch's; a merge adds,
// say, the index.md of a folder only the other branch had (two branches
// moved one note to different folders, and the person kept one place):
// kk generated it there, and nothing a person wrote is in it. A file
// edited after the merge is not the commit's, and is still taken for an
// edit. HEAD is asked only of an unsure file: a file kk could compare and
// found not to be what it generates holds a person's words even when they
// were committed, and the copy keeps them where the person sees them.
func committedNames(name string, unsure bool) []string {
	revs := []string{"MERGE_HEAD", "HEAD^2", "AUTO_MERGE"}
	if unsure {
		revs = append(revs, "HEAD")
	}
	rel := "./" + path.Join(store.DirName, name)
	out := make([]string, len(revs))
	for i, rev := range revs {
		out[i] = rev + ":" + rel
	}
	return out
}

// committed reports whether data, the generated file name as it is on
// disk, is that file as one of the commits committedNames names holds it
// (the same bytes, or the same text with other line endings:
// store.SameText).
func committed(blobs map[string][]byte, name string, unsure bool, data []byte) bool {
	conflicted := -1
	for _, n := range committedNames(name, unsure) {
		if strings.HasPrefix(n, "AUTO_MERGE:") {
			// A merge that stopped on conflicts wrote the file with
			// git's markers: reported as such (its copy kept), not
			// passed over as git's.
			if conflicted < 0 {
				conflicted, _ = node.ConflictMarkers(data)
			}
			if conflicted > 0 {
				continue
			}
		}
		if blob, ok := blobs[n]; ok && (bytes.Equal(blob, data) || store.SameText(data, blob)) {
			return true
		}
	}
	return false
}

// result is the Result of a committed changeset that changed files.
func (p *commitPlan) result(tree *store.Tree) *Result {
	p.res.Data = make(map[string][]byte, len(p.changes))
	p.res.Sums = make(map[string]string, len(p.changes))
	p.res.Tree = tree
	for _, c := range p.changes {
		if c.Generated {
			p.res.Generated = append(p.res.Generated, c.Path)
		}
		if c.Remove {
			p.res.Removed = append(p.res.Removed, c.Path)
		} else {
			p.res.Written = append(p.res.Written, c.Path)
			p.res.Data[c.Path] = c.Data
			p.res.Sums[c.Path] = c.Sum
			if !c.Existed {
				p.res.Created = append(p.res.Created, c.Path)
			}
		}
	}
	if p.res.Ops == nil {
		p.res.Ops = []index.AuditOp{}
	}
	return p.res
}

// announce hands the paths the changeset is about to write or remove to
// the BeforeApply functions.
func (tx *Tx) announce(changes []change) error {
	if len(tx.before) == 0 {
		return nil
	}
	paths := make([]string, len(changes))
	for i, c := range changes {
		paths[i] = c.Path
	}
	for _, fn := range tx.before {
		if err := fn(paths); err != nil {
			return err
		}
	}
	return nil
}

// recordChange brings the branch index in step with the files the
// changeset wrote and appends the audit record.
func (tx *Tx) recordChange(p *commitPlan, branch string) error {
	if tx.db == nil {
		db, err := index.OpenSharedWith(tx.ctx, tx.k, branch, tx.Config)
		if err != nil {
			return err
		}
		tx.db = db
	}
	// Only the leaves this changeset wrote or removed are read into the
	// index (the index was in sync with the rest; see index.SyncPaths).
	var leaves []string
	for _, c := range p.changes {
		if rel, ok := strings.CutPrefix(c.Path, "nodes/"); ok && store.IsLeafName(path.Base(rel)) {
			leaves = append(leaves, rel)
		}
	}
	ex, err := tx.extraction()
	if err != nil {
		return err
	}
	if _, err := tx.db.SyncPaths(tx.ctx, tx.k.NodesDir(), ex, leaves); err != nil {
		return err
	}
	// The audit log records changes of knowledge: leaves, conflict files,
	// summaries, redirects. A transaction that only brought the generated
	// index files up to date has nothing to record.
	if p.record {
		return tx.audit(branch, p.res.Ops)
	}
	return nil
}

// audit appends the transaction's record to the branch's audit log.
func (tx *Tx) audit(branch string, ops []index.AuditOp) error {
	rec := index.AuditRecord{Changeset: tx.meta.Changeset, Actor: tx.meta.Actor, At: tx.Timestamp(), Source: tx.meta.Source,
		Command: tx.meta.Command, Branch: branch, Ops: ops}
	if rec.Ops == nil {
		rec.Ops = []index.AuditOp{}
	}
	return index.AppendAudit(tx.k, branch, rec)
}

// changedFields names the front matter keys whose values differ between
// two renderings of a leaf, and "body" when the bodies differ; kk's own
// version keys are left out. Either side that does not parse gives nil.
func changedFields(before, after []byte) []string {
	if before == nil {
		return nil
	}
	a, err := frontmatter.Parse(before)
	if err != nil {
		return nil
	}
	b, err := frontmatter.Parse(after)
	if err != nil {
		return nil
	}
	av, bv := a.Values(), b.Values()
	var out []string
	for _, key := range append(a.Keys(), b.Keys()...) {
		if key == KeyVersion || key == KeyUpdatedAt || slices.Contains(out, key) {
			continue
		}
		if !reflect.DeepEqual(av[key], bv[key]) {
			out = append(out, key)
		}
	}
	if !bytes.Equal(a.Body(), b.Body()) {
		out = append(out, "body")
	}
	return out
}

// render validates staged leaf s and renders it. A leaf whose bytes change
// gets its new version (one above its current version; 1 when new) and,
// when it records one, kk_updated_at. changed is false when the leaf would
// be written exactly as it is.
func (tx *Tx) render(s *staged, root string) ([]byte, bool, error) {
	n := s.n
	if err := checkText(s); err != nil {
		return nil, false, err
	}
	if err := n.Validate(); err != nil {
		return nil, false, err
	}
	if err := tx.checkInsideTree(root, n.Path); err != nil {
		return nil, false, err
	}
	if s.origPath == "" {
		// A new leaf starts at version 1, or keeps the version it arrives
		// with (a leaf imported from a pack).
		if fileVersion(n) < 1 {
			if err := setExtra(n, KeyVersion, int64(1)); err != nil {
				return nil, false, err
			}
		}
		data, err := tx.renderLeaf(n)
		return data, true, err
	}
	// Unchanged when rendering with the original version (and time)
	// gives the original bytes.
	if err := restoreExtra(n, KeyVersion, s.origVersion, s.hadVersion); err != nil {
		return nil, false, err
	}
	if _, has := n.Extra(KeyUpdatedAt); has && s.hadUpdated {
		if err := n.SetExtra(KeyUpdatedAt, s.origUpdated); err != nil {
			return nil, false, err
		}
	}
	data, err := tx.renderLeaf(n)
	if err != nil {
		return nil, false, err
	}
	if bytes.Equal(data, s.origData) {
		return data, false, nil
	}
	if err := setExtra(n, KeyVersion, s.version+1); err != nil {
		return nil, false, err
	}
	if _, has := n.Extra(KeyUpdatedAt); has {
		if err := n.SetExtra(KeyUpdatedAt, tx.Timestamp()); err != nil {
			return nil, false, err
		}
	}
	data, err = tx.renderLeaf(n)
	return data, true, err
}

// checkText holds staged leaf s to the text rule of every writer
// (node.CheckText). A problem the leaf had as read, in a field the
// transaction leaves as it was, is let through: a hand-written leaf stays
// writable (its status changed, its Related block rendered again). The
// original is parsed only then.
func checkText(s *staged) error {
	err := s.n.CheckText(nil)
	if err == nil || s.origPath == "" {
		return err
	}
	orig, perr := node.Parse(s.origPath, s.origData)
	if perr != nil {
		return err
	}
	return s.n.CheckText(orig)
}

// evalSymlinks is filepath.EvalSymlinks (a test counts its calls).
var evalSymlinks = filepath.EvalSymlinks

// nodesRoot is nodes/ with its links resolved, the root the symlink
// guard measures leaves against: "" when nodes/ does not exist (it is
// made by the write, with no link in it, and there is nothing to check).
func (tx *Tx) nodesRoot() (string, error) {
	root, err := evalSymlinks(tx.k.NodesDir())
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	return root, err
}

// checkInsideTree refuses to write the leaf rel through a symlink that
// leads out of the knowledge tree (or nowhere): a folder on its way, or
// the leaf file itself. A repository can commit such a link; the tree's
// readers skip what is under it, and no writer may write through it. root
// is nodesRoot, resolved once per transaction; "" means no link to check.
// The folders (and the file) the write creates are held to
// node.NameProblem; those there already are taken as they are.
func (tx *Tx) checkInsideTree(root, rel string) error {
	segs := strings.Split(path.Clean(filepath.ToSlash(rel)), "/")
	p := tx.k.NodesDir()
	for i, seg := range segs {
		p = filepath.Join(p, seg)
		fi, err := os.Lstat(p)
		if err != nil {
			// Not there yet: created as a real folder or file.
			if i < len(segs)-1 {
				if err := caseTwin(filepath.Dir(p), segs, i); err != nil {
					return &node.Error{Path: rel, Field: "folder", Msg: err.Error()}
				}
			}
			return newNames(rel, segs, i)
		}
		if root == "" || fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		target, err := evalSymlinks(p)
		where := "nowhere (a broken link)"
		if err == nil {
			if r, err := filepath.Rel(root, target); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && !filepath.IsAbs(r) {
				continue
			}
			where = target
		}
		what := "the folder " + tx.k.Rel(p)
		if p == tx.k.NodePath(rel) {
			what = "the leaf file"
		}
		return &node.Error{Path: rel, Field: "folder", Msg: fmt.Sprintf("%s is a link out of the knowledge tree (to %s); kk writes nothing through it: replace the link with a real folder or file", what, where)}
	}
	return nil
}

// caseTwin refuses the folder segs[:i+1] a write would create in dir
// when dir holds a folder whose name differs from segs[i] only in case:
// on macOS and Windows, whose file systems ignore case, the two are one
// folder, and git cannot check both out there (kk lint's
// folder-case-collision).
func caseTwin(dir string, segs []string, i int) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil // the folder is new too: nothing to collide with
	}
	for _, e := range entries {
		if e.IsDir() && e.Name() != segs[i] && strings.EqualFold(e.Name(), segs[i]) {
			there := strings.Join(append(slices.Clone(segs[:i]), e.Name()), "/")
			return fmt.Errorf("folder %q differs only in case from the folder %q there: macOS and Windows, whose file systems ignore case, take the two for one, and git cannot check both out there; write into --folder %s",
				strings.Join(segs[:i+1], "/"), there, there)
		}
	}
	return nil
}

// newNames refuses a name among segs[from:], the folders and the file of
// the leaf rel that the write creates, that node.NameProblem refuses,
// naming the folder (or file) and why.
func newNames(rel string, segs []string, from int) error {
	for j := from; j < len(segs); j++ {
		msg := node.NameProblem(segs[j])
		if msg == "" {
			continue
		}
		if j == len(segs)-1 {
			return &node.Error{Path: rel, Field: node.KeyID, Msg: fmt.Sprintf("leaf file %q: %s; give the entity another id", rel, msg)}
		}
		return &node.Error{Path: rel, Field: "folder", Msg: fmt.Sprintf("folder %q: %s; choose another name", strings.Join(segs[:j+1], "/"), msg)}
	}
	return nil
}

func (tx *Tx) renderLeaf(n *node.Node) ([]byte, error) {
	data, err := n.Render(tx.Resolve)
	if err != nil {
		return nil, err
	}
	if len(data) > node.MaxSize {
		return nil, &node.Error{Path: n.Path, Msg: fmt.Sprintf("the leaf would be %d bytes; the limit is %d", len(data), node.MaxSize)}
	}
	return data, nil
}

func setExtra(n *node.Node, key string, v int64) error { return n.SetExtra(key, v) }

func restoreExtra(n *node.Node, key string, v any, had bool) error {
	if !had {
		if _, has := n.Extra(key); has {
			return n.DeleteExtra(key)
		}
		return nil
	}
	return n.SetExtra(key, v)
}

// prepare reads the current content of a file the changeset touches; it
// returns nil when the change would leave the file as it is.
func (tx *Tx) prepare(rel string, op *fileOp) (*change, error) {
	abs := filepath.Join(tx.k.Dir, filepath.FromSlash(rel))
	fi, err := os.Lstat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if op.remove {
			return nil, nil
		}
		return &change{Path: rel, Data: op.data, Generated: op.generated}, nil
	case err != nil:
		return nil, err
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s is not a regular file; kk writes only regular files", tx.k.Rel(abs))
	case fi.Size() >= linkMin && (op.remove || int64(len(op.data)) != fi.Size() || op.generated):
		// Not read: the journal keeps a hard link to it (writeJournal).
		// Only a file of the same size can be unchanged, and generation
		// already dropped the generated files that are.
		return &change{Path: rel, Data: op.data, Remove: op.remove, Existed: true, Generated: op.generated, large: true, origStat: fi}, nil
	}
	orig, err := os.ReadFile(abs)
	if err != nil {
		return nil, err
	}
	if !op.remove && bytes.Equal(orig, op.data) {
		return nil, nil
	}
	return &change{Path: rel, Data: op.data, Remove: op.remove, Existed: true, Orig: orig, Generated: op.generated, origStat: fi}, nil
}

func fileSize(p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		return -1
	}
	return fi.Size()
}

// under reports whether rel (relative to .ai/kenkeep) lies in one of the
// knowledge folders whose emptied sub-folders a removal prunes.
func under(rel string) bool {
	return strings.HasPrefix(rel, "nodes/") || strings.HasPrefix(rel, "conflicts/")
}
