// Package index keeps the derived per-branch index of a knowledge base: a
// SQLite database (.ai/kenkeep/.state/branches/<branch>/index.db) holding
// every leaf's parsed fields, its typed edges, atom patterns and changelog,
// and a full-text table used for ranked search. The tree is the source of
// truth; the index can always be deleted and rebuilt by a sync.
package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"modernc.org/sqlite" // registers the "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/kk-project/kk/internal/embed"
	"github.com/kk-project/kk/internal/store"
)

// SchemaVersion is the version of the database layout. A database written
// with another version is emptied and rebuilt by the next sync. Version 15
// holds as unreadable a leaf whose id has white space or a quote mark at
// its start or end (node.Parse): a database of 14 holds it as read, and
// keeps it so while its bytes do not change. Version 14
// counts, for each term, the search docs holding it outside the phrasings
// (search_df.authored), which the hook's gate reads. Version 13
// holds a run of a script written without spaces (Chinese, Japanese,
// Korean, Thai, Lao, Khmer, Burmese) as its bigrams (see analyzeUnspaced):
// a database of 12 holds the whole run as one term.
// Version 12 folds accents in the terms it holds (see analyze): a database of 11
// holds café where a search now looks for cafe. Version 11 hashes a leaf
// with its CRLF read as LF (store.LeafSum) and measures its body so.
const SchemaVersion = 15

// busyTimeoutMS bounds how long a writer waits for another writer (another
// kk process syncing the same branch) before failing.
const busyTimeoutMS = 5000

// walLimit bounds the write-ahead log a checkpoint leaves behind (bytes).
// A process that opens the database after another one exited without
// closing it reads the whole log to rebuild its index of it: a first sync
// of 100,000 leaves leaves a log as large as the database (370 MB), which
// every later command would read again (see also the checkpoint after a
// bulk sync).
const walLimit = 16 << 20

// DB is an open branch index. Writes go through one connection that takes
// SQLite's write lock at BEGIN; reads use a separate pool and never wait
// for a writer (WAL).
type DB struct {
	Path   string
	Branch string

	w *sql.DB // writer: one connection, BEGIN IMMEDIATE
	r *sql.DB // readers

	shared bool // an OpenShared handle: Close does nothing

	// scratch is the temporary folder holding the database when the
	// branch's index folder cannot be written (openBranch); Close removes
	// it. Empty for the index in .state/.
	scratch string

	// kb is the knowledge base the handle indexes (nil for a bare file):
	// search reads its redirects ledger.
	kb *store.KB

	embedder embed.Embedder // nil: lexical search only
	minSim   float64        // least similarity of a vector-only match
	embedMu  sync.Mutex
	embedErr error // the provider's last error met by a search

	// kept is the leaf state as this handle last read or wrote it (see
	// DB.state); never changed once set, only replaced.
	kept struct {
		sync.Mutex
		s *treeState
		// tree is the tree of a leaf state as a snapshot (see DB.tree);
		// asked records that the handle assembled a tree before;
		// patches counts the snapshots made by a patch.
		tree struct {
			s    *treeState
			snap *store.Snapshot
		}
		asked   bool
		patches int
		// lines are the leaf lines of the state whose nodes hash is
		// hash, made for a state read without them (see leafLines).
		lines struct {
			hash string
			l    []string
		}
		// generated are the bytes of generated files this handle's
		// process wrote, by name, with their sha256 (KeepGenerated).
		generated map[string]keptFile
	}

	recent struct { // SyncRecent's last check of the tree
		sync.Mutex
		st Stats
		at time.Time
	}

	watch watchState // what tells the syncs where the tree changed (Watch)
}

// ftsTriggers keep the full-text table in step with search_docs (whose
// rows go when their node's row goes).
var ftsTriggers = []string{
	`CREATE TRIGGER search_docs_ai AFTER INSERT ON search_docs BEGIN
		INSERT INTO search_fts(rowid, title, description, tags, phrasings, body) VALUES (new.rid, new.title, new.description, new.tags, new.phrasings, new.body);
	END`,
	`CREATE TRIGGER search_docs_ad AFTER DELETE ON search_docs BEGIN
		INSERT INTO search_fts(search_fts, rowid, title, description, tags, phrasings, body) VALUES ('delete', old.rid, old.title, old.description, old.tags, old.phrasings, old.body);
	END`,
}

// ftsTriggerNames are the names of ftsTriggers, for dropping them.
var ftsTriggerNames = []string{"search_docs_ai", "search_docs_ad"}

var schema = []string{
	`CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`,
	`CREATE TABLE nodes (
		rid INTEGER PRIMARY KEY,
		path TEXT NOT NULL UNIQUE,
		id TEXT NOT NULL COLLATE NOCASE,
		type TEXT NOT NULL,
		title TEXT NOT NULL,
		description TEXT NOT NULL,
		tags TEXT NOT NULL,
		body TEXT NOT NULL,
		folder TEXT NOT NULL,
		status TEXT NOT NULL,
		confidence TEXT NOT NULL,
		molecule TEXT NOT NULL COLLATE NOCASE,
		priority TEXT NOT NULL,
		severity TEXT NOT NULL,
		owner TEXT NOT NULL,
		origin TEXT NOT NULL,
		graph TEXT NOT NULL DEFAULT '',
		meta TEXT NOT NULL DEFAULT '',
		version INTEGER NOT NULL,
		file_version INTEGER NOT NULL DEFAULT 0,
		mtime INTEGER NOT NULL,
		size INTEGER NOT NULL,
		sha256 TEXT NOT NULL
	)`,
	`CREATE INDEX nodes_id ON nodes(id)`,
	// folders holds the leaf state (see leafstate.go): one row per
	// folder under nodes/.
	`CREATE TABLE folders (dir TEXT PRIMARY KEY, stat BLOB NOT NULL, facts BLOB NOT NULL)`,
	// generated and ranks record the generated index files (see
	// generated.go).
	`CREATE TABLE generated (file TEXT PRIMARY KEY, key TEXT NOT NULL, size INTEGER NOT NULL, mtime INTEGER NOT NULL, sha256 TEXT NOT NULL, at INTEGER NOT NULL)`,
	`CREATE TABLE ranks (tag TEXT PRIMARY KEY, fp TEXT NOT NULL, ids TEXT NOT NULL)`,
	`CREATE INDEX nodes_type ON nodes(type)`,
	`CREATE INDEX nodes_origin ON nodes(origin)`,
	`CREATE TABLE kk_paths (rid INTEGER NOT NULL REFERENCES nodes(rid) ON DELETE CASCADE, seq INTEGER NOT NULL, pattern TEXT NOT NULL, bucket TEXT NOT NULL, PRIMARY KEY (rid, seq))`,
	`CREATE INDEX kk_paths_bucket ON kk_paths(bucket)`,
	`CREATE INDEX nodes_molecule ON nodes(molecule)`,
	`CREATE TABLE edges (rid INTEGER NOT NULL REFERENCES nodes(rid) ON DELETE CASCADE, src TEXT NOT NULL COLLATE NOCASE, type TEXT NOT NULL, dst TEXT NOT NULL COLLATE NOCASE, created_at TEXT NOT NULL, created_by TEXT NOT NULL, source TEXT NOT NULL, confidence TEXT NOT NULL)`,
	`CREATE INDEX edges_src ON edges(src, type)`,
	`CREATE INDEX edges_dst ON edges(dst, type)`,
	`CREATE INDEX edges_rid ON edges(rid)`,
	`CREATE TABLE changelog (rid INTEGER NOT NULL REFERENCES nodes(rid) ON DELETE CASCADE, seq INTEGER NOT NULL, at TEXT NOT NULL, task TEXT NOT NULL, summary TEXT NOT NULL, PRIMARY KEY (rid, seq))`,
	// search_docs holds each node's analyzed text (see analyze.go), one
	// column per field, and the number of terms of each field; the
	// full-text table indexes it.
	`CREATE TABLE search_docs (
		rid INTEGER PRIMARY KEY REFERENCES nodes(rid) ON DELETE CASCADE,
		len_title INTEGER NOT NULL,
		len_description INTEGER NOT NULL,
		len_tags INTEGER NOT NULL,
		len_phrasings INTEGER NOT NULL,
		len_body INTEGER NOT NULL,
		title TEXT NOT NULL,
		description TEXT NOT NULL,
		tags TEXT NOT NULL,
		phrasings TEXT NOT NULL,
		body TEXT NOT NULL,
		raw_phrasings TEXT NOT NULL DEFAULT '',
		embed_sha TEXT NOT NULL DEFAULT ''
	)`,
	// embeddings holds each node's vector when an embedding provider is
	// configured: text_sha is the embed_sha of the text it was computed
	// from and model the provider's model, so a vector is recomputed only
	// when either changes.
	`CREATE TABLE embeddings (
		rid INTEGER PRIMARY KEY REFERENCES nodes(rid) ON DELETE CASCADE,
		text_sha TEXT NOT NULL,
		model TEXT NOT NULL,
		vec BLOB NOT NULL
	)`,
	`CREATE INDEX search_docs_lens ON search_docs(len_title, len_description, len_tags, len_phrasings, len_body)`,
	`CREATE VIRTUAL TABLE search_fts USING fts5(title, description, tags, phrasings, body, content='search_docs', content_rowid='rid', tokenize='unicode61 remove_diacritics 0')`,
	`INSERT INTO search_fts(search_fts, rank) VALUES ('rank', '` + poolRank + `')`,
	`CREATE VIRTUAL TABLE search_vocab USING fts5vocab(search_fts, 'row')`,
	// search_df holds how many search docs hold each term, in any field:
	// the document frequency ranking weighs terms by; authored counts
	// those holding it in a field other than the phrasings (the notes'
	// own words, which the hook's gate judges a text against). The writer keeps it
	// as it inserts and deletes docs (writer.df), so a search reads a
	// term's count in one lookup instead of walking its posting list
	// (which is what search_vocab does, at a cost that grows with the
	// tree).
	`CREATE TABLE search_df (term TEXT PRIMARY KEY, docs INTEGER NOT NULL, authored INTEGER NOT NULL) WITHOUT ROWID`,
}

func dsn(path string, readOnly bool) string {
	q := "_pragma=" + url.QueryEscape("busy_timeout("+strconv.Itoa(busyTimeoutMS)+")") +
		"&_pragma=" + url.QueryEscape("journal_mode(WAL)") +
		"&_pragma=" + url.QueryEscape("foreign_keys(1)") +
		"&_pragma=" + url.QueryEscape("synchronous(NORMAL)")
	if readOnly {
		q += "&_pragma=" + url.QueryEscape("query_only(1)")
	} else {
		q += "&_txlock=immediate&_pragma=" + url.QueryEscape("cache_size(-65536)") +
			"&_pragma=" + url.QueryEscape("journal_size_limit("+strconv.Itoa(walLimit)+")")
	}
	return "file:" + uriPath(path) + "?" + q
}

// uriPath is path as the path of a file: URI. The characters URIs give a
// meaning are escaped (branch folders contain %XX sequences).
func uriPath(path string) string {
	return strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23").Replace(filepath.ToSlash(path))
}

// openFile opens the database at path, creating it (and its folder) when
// missing, and brings its schema to SchemaVersion. A file there that is
// not a SQLite database, or one SQLite finds damaged on opening (a cache
// restored half way, a disk that filled up), is removed with its
// write-ahead log and a new index is made in its place: the index is
// derived from the tree, and the first sync fills it again.
func openFile(ctx context.Context, path, branch string) (*DB, error) {
	db, err := openFileOnce(ctx, path, branch)
	if err == nil || !damagedErr(err) {
		return db, err
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if rerr := os.Remove(p); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w (and removing it to build it again: %v)", err, rerr)
		}
	}
	return openFileOnce(ctx, path, branch)
}

// damagedErr reports whether err is SQLite's "file is not a database" or
// "database disk image is malformed".
func damagedErr(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT:
		return true
	}
	return false
}

func openFileOnce(ctx context.Context, path, branch string) (*DB, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("creating the index folder: %w", err)
	}
	openStep("created")
	w, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		return nil, fmt.Errorf("opening index %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxIdleTime(0)
	db := &DB{Path: path, Branch: branch, w: w}
	if err := db.ensureSchema(ctx); err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("index %s: %w", path, err)
	}
	openStep("schema")
	// The writer's connection holds the database open. A reader opened
	// now opens it again by name: git clean may have removed it (and
	// its write-ahead log) in between, and SQLite would make an empty
	// one in its place. The readers are opened here and kept (idle
	// connections stay open), and the files are checked to be the same
	// before and after: a command's reads then go on in the files it synced even
	// if they are removed later (the next command makes them again).
	before, err := walFiles(path)
	if err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("index %s: %w", path, err)
	}
	r, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("opening index %s: %w", path, err)
	}
	r.SetMaxIdleConns(keptReaders)
	db.r = r
	if err := db.openReaders(ctx); err != nil {
		_ = db.close()
		return nil, fmt.Errorf("reading index %s: %w", path, err)
	}
	after, err := walFiles(path)
	if err == nil && !(os.SameFile(before[0], after[0]) && os.SameFile(before[1], after[1])) {
		err = fmt.Errorf("removed while it was opened: %w", fs.ErrNotExist)
	}
	if err != nil {
		_ = db.close()
		return nil, fmt.Errorf("index %s: %w", path, err)
	}
	openStep("readers")
	return db, nil
}

// keptReaders is how many reader connections an index keeps open: a
// search reads while the sync before it runs (SearchDuring).
const keptReaders = 2

// openReaders opens keptReaders reader connections, which stay open idle.
func (db *DB) openReaders(ctx context.Context) error {
	var conns []*sql.Conn
	defer func() {
		for _, c := range conns {
			_ = c.Close() // back to the pool, kept open
		}
	}()
	for range keptReaders {
		c, err := db.r.Conn(ctx)
		if err != nil {
			return err
		}
		conns = append(conns, c)
		if err := c.PingContext(ctx); err != nil {
			return err
		}
	}
	return nil
}

// walFiles stats the database at path and its write-ahead log.
func walFiles(path string) ([2]fs.FileInfo, error) {
	var fi [2]fs.FileInfo
	for i, p := range []string{path, path + "-wal"} {
		var err error
		if fi[i], err = os.Stat(p); err != nil {
			return fi, err
		}
	}
	return fi, nil
}

// Close releases the database (but not a handle of OpenShared, which lives
// as long as its knowledge base value: store.KB.Close releases it).
func (db *DB) Close() error {
	if db.shared {
		return nil
	}
	err := db.close()
	if db.scratch != "" {
		scratches.Lock()
		delete(scratches.dbs, db)
		scratches.Unlock()
		err = errors.Join(err, os.RemoveAll(db.scratch))
	}
	return err
}

// close closes the database's connections.
func (db *DB) close() error { return errors.Join(db.r.Close(), db.w.Close()) }

// scratches are the scratch indexes of this process that are still open
// (see openBranch), for CloseScratch.
var scratches struct {
	sync.Mutex
	dbs map[*DB]bool
}

// CloseScratch closes every scratch index this process opened and has not
// closed yet, shared handles included, and removes their temporary
// folders. A command-line process, which leaves its shared handles open
// until it exits, calls it before it exits.
func CloseScratch() error {
	scratches.Lock()
	dbs := make([]*DB, 0, len(scratches.dbs))
	for db := range scratches.dbs {
		dbs = append(dbs, db)
	}
	scratches.Unlock()
	var errs []error
	for _, db := range dbs {
		db.shared = false
		errs = append(errs, db.Close())
	}
	return errors.Join(errs...)
}

// openStep is called at the named steps of opening an index, for tests
// that remove the index folder there (git clean).
var openStep = func(step string) {}

// openBranch opens the index of branch at path, copying the default
// branch's index first when path does not exist yet (seedFromDefault).
// When the index folder cannot be written (a read-only checkout, a cache
// restored without write access), it builds a scratch index instead, in a
// temporary folder that Close removes: the index is derived, so a command
// that only reads gives the same answer, from a first sync of the tree,
// and nothing is written in the knowledge base.
//
// `git clean -fdx` (or -fdX) removes the index folder with .state/ at any
// moment, also between the steps of opening it: when opening fails and the
// index is not there, or a file of it went (goneErr), it starts over
// (openAttempts times at most), since the index is derived and the sync
// that follows fills it again.
func openBranch(ctx context.Context, k *store.KB, branch, path string, config func() (store.Config, error)) (*DB, error) {
	// The index is written under .state/ by reads too (a sync): a
	// .state linked out of the repository would have it written there.
	if err := k.CheckContained(); err != nil {
		return nil, err
	}
	var err error
	for range openAttempts {
		var db *DB
		if db, err = openBranchOnce(ctx, k, branch, path, config); err == nil {
			return db, nil
		}
		if _, serr := os.Stat(path); !errors.Is(serr, fs.ErrNotExist) && !goneErr(err) {
			break
		}
	}
	return nil, err
}

// goneErr reports whether err is what a file of the index removed while
// it was opened gives: no such file, or SQLite unable to open a file or
// to read or write one (a git clean that listed the write-ahead log of the
// last command removes the one just made beside a new database, and
// leaves the database).
func goneErr(err error) bool {
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_IOERR:
		return true
	}
	return false
}

// openAttempts bounds how often openBranch starts over.
const openAttempts = 8

func openBranchOnce(ctx context.Context, k *store.KB, branch, path string, config func() (store.Config, error)) (*DB, error) {
	werr := writableIndex(path)
	if werr == nil {
		openStep("probed")
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			if err := seedFromDefault(ctx, k, branch, path, config); err != nil {
				return nil, err
			}
		}
		return openFile(ctx, path, branch)
	}
	if !readOnlyErr(werr) {
		return nil, werr
	}
	dir, err := os.MkdirTemp("", "kk-index-")
	if err != nil {
		return nil, fmt.Errorf("%v, and the temporary folder cannot be written either (%v): kk needs one of them for the search index of branch %s; make %s writable or set TMPDIR to a writable folder", werr, err, branch, k.StateDir())
	}
	db, err := openFile(ctx, filepath.Join(dir, FileName), branch)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	db.scratch = dir
	scratches.Lock()
	if scratches.dbs == nil {
		scratches.dbs = map[*DB]bool{}
	}
	scratches.dbs[db] = true
	scratches.Unlock()
	return db, nil
}

// writableIndex returns nil when the index at path can be opened for
// writing: its folder exists or can be created, a file can be created in
// it (SQLite's write-ahead log), and the database, its write-ahead log and
// its shared-memory file, those that exist, can be opened for writing.
func writableIndex(path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating the index folder: %w", err)
	}
	openStep("folder")
	probe, err := os.CreateTemp(dir, ".kk-write-*")
	if err != nil {
		return fmt.Errorf("the index folder %s cannot be written: %w", dir, err)
	}
	name := probe.Name()
	_ = probe.Close()
	if err := os.Remove(name); err != nil {
		return fmt.Errorf("the index folder %s cannot be written: %w", dir, err)
	}
	// The database, and its write-ahead log and shared-memory file when
	// they were left beside it: SQLite cannot write the index when any of
	// them is read-only (a cache restored with its files read-only).
	for _, name := range []string{path, path + "-wal", path + "-shm"} {
		f, err := os.OpenFile(name, os.O_RDWR, 0)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("the index %s cannot be written: %w", name, err)
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}

// readOnlyErr reports whether err says a file cannot be written for want
// of permission or because its file system is mounted read-only.
func readOnlyErr(err error) bool {
	return errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS)
}

// ReadOnlyDBErr reports whether err is SQLite refusing to write an index
// ("attempt to write a readonly database"): its file, or its folder, may
// not be written.
func ReadOnlyDBErr(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_READONLY
}

// ensureSchema creates the tables of an empty database and rebuilds one
// written with another schema version (every table dropped, then created).
// It runs in one write transaction, so two processes opening a new index at
// once do not both create it.
func (db *DB) ensureSchema(ctx context.Context) error {
	if v, err := db.schemaVersion(ctx, db.w); err == nil && v == SchemaVersion {
		return nil
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	v, err := db.schemaVersion(ctx, tx)
	if err == nil && v == SchemaVersion {
		return nil
	}
	// Triggers first (dropping a table deletes its rows, which could fire
	// a trigger writing to a table already dropped), then virtual tables
	// (dropping one drops its shadow tables).
	triggers, err := schemaNames(ctx, tx, "trigger", "1")
	if err != nil {
		return err
	}
	for _, name := range triggers {
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("DROP TRIGGER IF EXISTS %q", name)); err != nil {
			return fmt.Errorf("dropping trigger %s of an old index: %w", name, err)
		}
	}
	for _, kind := range []string{"sql LIKE 'CREATE VIRTUAL TABLE%'", "1"} {
		names, err := schemaNames(ctx, tx, "table", kind)
		if err != nil {
			return err
		}
		for _, name := range names {
			if _, err := tx.ExecContext(ctx, fmt.Sprintf("DROP TABLE IF EXISTS %q", name)); err != nil {
				return fmt.Errorf("dropping table %s of an old index: %w", name, err)
			}
		}
	}
	for _, stmt := range append(slices.Clone(schema), ftsTriggers...) {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("creating the schema: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES ('schema_version', ?)`, strconv.Itoa(SchemaVersion)); err != nil {
		return err
	}
	return tx.Commit()
}

func schemaNames(ctx context.Context, tx *sql.Tx, typ, where string) ([]string, error) {
	rows, err := tx.QueryContext(ctx, "SELECT name FROM sqlite_master WHERE type = ? AND name NOT LIKE 'sqlite_%' AND "+where+" ORDER BY name", typ)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	return names, rows.Err()
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (db *DB) schemaVersion(ctx context.Context, q querier) (int, error) {
	var s string
	if err := q.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'schema_version'`).Scan(&s); err != nil {
		return 0, err
	}
	return strconv.Atoi(s)
}

// Meta returns a value of the meta table ("" when unset): schema_version,
// last_sync (RFC 3339 time of the last sync that changed something or
// found nothing to do), leaves.
func (db *DB) Meta(ctx context.Context, key string) (string, error) {
	var v string
	err := db.r.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, err
}
