package index

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
)

// The generated index files (every nodes/**/index.md, ENTRY.md and
// GRAPH.md) are derived from the leaves like the rows of this database,
// and the database records how they were made (package indexfiles makes
// them; this file only keeps the record):
//
//   - for each file, the key of the inputs it was rendered from, and its
//     size, mtime and sha256 when kk wrote it or last read it whole, and
//     when that was (generated table): a file still as recorded, by
//     store.Unchanged or by the sha256 of its bytes, is the one kk
//     rendered;
//   - for the generation as a whole (meta gen_*), the key of all its
//     inputs, the nodes hash and the number of leaves it was made for,
//     the folders that got an index.md and those without a summary;
//   - for each tag, the first leaves of its "By topic" ranking and a
//     fingerprint of its cohort (ranks table), so that a generation ranks
//     only the cohorts that changed.
//
// Like every table here it can be dropped at any time: the next
// generation renders everything and records it again.

// GeneratedFile is the record of one generated file.
type GeneratedFile struct {
	Key         string // hash of the inputs it was rendered from
	Size, Mtime int64  // of the file as written or last read
	Sum         string // sha256 (hex) of its bytes
	At          int64  // when its bytes were known to hash to Sum (Unix nanoseconds)
}

// Generation is the record of the last generation.
type Generation struct {
	Key       string // hash of every input of the generation
	NodesHash string // of the leaves it was made for
	Nodes     int    // how many leaves
	Folders   []string
	Missing   []string                 // folders without a summary
	Files     map[string]GeneratedFile // by path relative to .ai/kenkeep
}

// Ranked is a tag's "By topic" ranking as recorded: the fingerprint of
// its cohort and the ids of its first leaves.
type Ranked struct {
	FP  string
	IDs []string
}

// GenerationUpdate changes the record: the generation's own values, the
// files of Put written (or checked) and those of Drop gone, and the
// rankings of Ranks made and those of DropRanks gone. With Replace every
// file not in Put is dropped (rankings stay: their fingerprints tell
// whether they still hold).
type GenerationUpdate struct {
	Key, NodesHash   string
	Nodes            int
	Folders, Missing []string
	Put              map[string]GeneratedFile
	Drop             []string
	Ranks            map[string]Ranked
	DropRanks        []string
	Replace          bool
}

// Generation reads the record of the last generation; nil when there is
// none.
func (db *DB) Generation(ctx context.Context) (*Generation, error) {
	tx, err := db.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	m, err := metaValues(ctx, tx, "gen_key", "gen_nodes_hash", "gen_nodes", "gen_folders", "gen_missing")
	if err != nil {
		return nil, fmt.Errorf("reading index %s: %w", db.Path, err)
	}
	if m["gen_key"] == "" {
		return nil, nil
	}
	g := &Generation{Key: m["gen_key"], NodesHash: m["gen_nodes_hash"], Folders: lines(m["gen_folders"]), Missing: lines(m["gen_missing"]),
		Files: map[string]GeneratedFile{}}
	g.Nodes, _ = strconv.Atoi(m["gen_nodes"])
	rows, err := tx.QueryContext(ctx, `SELECT file, key, size, mtime, sha256, at FROM generated`)
	if err != nil {
		return nil, fmt.Errorf("reading index %s: %w", db.Path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var f GeneratedFile
		if err := rows.Scan(&name, &f.Key, &f.Size, &f.Mtime, &f.Sum, &f.At); err != nil {
			return nil, fmt.Errorf("reading index %s: %w", db.Path, err)
		}
		g.Files[name] = f
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading index %s: %w", db.Path, err)
	}
	return g, nil
}

// Ranks reads the recorded rankings of tags (every tag when tags is nil).
func (db *DB) Ranks(ctx context.Context, tags []string) (map[string]Ranked, error) {
	out := map[string]Ranked{}
	scan := func(rows *sql.Rows) error {
		defer rows.Close()
		for rows.Next() {
			var tag, fp, ids string
			if err := rows.Scan(&tag, &fp, &ids); err != nil {
				return err
			}
			out[tag] = Ranked{FP: fp, IDs: lines(ids)}
		}
		return rows.Err()
	}
	if tags == nil {
		rows, err := db.r.QueryContext(ctx, `SELECT tag, fp, ids FROM ranks`)
		if err == nil {
			err = scan(rows)
		}
		if err != nil {
			return nil, fmt.Errorf("reading index %s: %w", db.Path, err)
		}
		return out, nil
	}
	for chunk := range chunks(tags, 500) {
		args := make([]any, len(chunk))
		for i, t := range chunk {
			args[i] = t
		}
		rows, err := db.r.QueryContext(ctx, `SELECT tag, fp, ids FROM ranks WHERE tag IN (`+placeholders(len(chunk))+`)`, args...)
		if err == nil {
			err = scan(rows)
		}
		if err != nil {
			return nil, fmt.Errorf("reading index %s: %w", db.Path, err)
		}
	}
	return out, nil
}

// RecordGeneration applies u to the record, in one transaction.
func (db *DB) RecordGeneration(ctx context.Context, u GenerationUpdate) error {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("recording the index files in %s: %w", db.Path, err)
	}
	defer tx.Rollback()
	w := newWriter(ctx, tx)
	defer w.close()
	if u.Replace {
		w.exec(`DELETE FROM generated`)
	}
	for _, name := range u.Drop {
		w.exec(`DELETE FROM generated WHERE file = ?`, name)
	}
	for name, f := range u.Put {
		w.exec(`INSERT INTO generated(file, key, size, mtime, sha256, at) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT(file) DO UPDATE SET key = excluded.key, size = excluded.size, mtime = excluded.mtime, sha256 = excluded.sha256, at = excluded.at`,
			name, f.Key, f.Size, f.Mtime, f.Sum, f.At)
	}
	for _, tag := range u.DropRanks {
		w.exec(`DELETE FROM ranks WHERE tag = ?`, tag)
	}
	for tag, r := range u.Ranks {
		w.exec(`INSERT INTO ranks(tag, fp, ids) VALUES (?, ?, ?) ON CONFLICT(tag) DO UPDATE SET fp = excluded.fp, ids = excluded.ids`,
			tag, r.FP, strings.Join(r.IDs, "\n"))
	}
	w.setMeta("gen_key", u.Key)
	w.setMeta("gen_nodes_hash", u.NodesHash)
	w.setMeta("gen_nodes", strconv.Itoa(u.Nodes))
	w.setMeta("gen_folders", strings.Join(u.Folders, "\n"))
	w.setMeta("gen_missing", strings.Join(u.Missing, "\n"))
	if w.err != nil {
		return fmt.Errorf("recording the index files in %s: %w", db.Path, w.err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("recording the index files in %s: %w", db.Path, err)
	}
	return nil
}

// ForgetGeneration drops the record, as when the generated files are
// changed by something that does not record them.
func (db *DB) ForgetGeneration(ctx context.Context) error {
	_, err := db.w.ExecContext(ctx, `DELETE FROM meta WHERE key = 'gen_key'`)
	return err
}

// metaValues reads keys of the meta table ("" for those unset).
func metaValues(ctx context.Context, q queryer, keys ...string) (map[string]string, error) {
	args := make([]any, len(keys))
	for i, k := range keys {
		args[i] = k
	}
	rows, err := q.QueryContext(ctx, `SELECT key, value FROM meta WHERE key IN (`+placeholders(len(keys))+`)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	m := make(map[string]string, len(keys))
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		m[k] = v
	}
	return m, rows.Err()
}

// lines splits a newline-joined list ("" is none).
func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}

// chunks yields s in slices of at most n.
func chunks[T any](s []T, n int) func(func([]T) bool) {
	return func(yield func([]T) bool) {
		for len(s) > 0 {
			m := min(n, len(s))
			if !yield(s[:m]) {
				return
			}
			s = s[m:]
		}
	}
}

// keptFile is a generated file's bytes and their sha256 (hex).
type keptFile struct {
	sum  string
	data []byte
}

// KeepGenerated keeps, in a long-running process's handle, the bytes of
// the generated file name (relative to the knowledge base's folder)
// whose sha256 (hex) is sum, as written by this process and recorded in
// the generation record: a later write that brings that generation
// forward takes the bytes from here (KeptGenerated) instead of reading
// and hashing the file (GRAPH.md is megabytes at 10,000 leaves). It is
// kept for the record, whose sha256 it must match: a generation recorded
// with other bytes leaves it unused.
//
// The bytes are kept as they are, not copied (GRAPH.md is 47 MB at
// 100,000 leaves, and a one-shot process never reads them back): the
// caller hands over bytes that nothing changes any more, as a
// generation's output is never changed once made.
func (db *DB) KeepGenerated(name, sum string, data []byte) {
	f := keptFile{sum: sum, data: data}
	db.kept.Lock()
	defer db.kept.Unlock()
	if db.kept.generated == nil {
		db.kept.generated = map[string]keptFile{}
	}
	db.kept.generated[name] = f
}

// KeptGenerated returns the bytes kept of the generated file name when
// they are those whose sha256 (hex) is sum (the generation record's).
// They are the kept bytes themselves, which the caller only reads.
func (db *DB) KeptGenerated(name, sum string) ([]byte, bool) {
	if db == nil {
		return nil, false
	}
	db.kept.Lock()
	defer db.kept.Unlock()
	f, ok := db.kept.generated[name]
	if !ok || sum == "" || f.sum != sum {
		return nil, false
	}
	return f.data, true
}
