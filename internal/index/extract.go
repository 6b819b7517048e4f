package index

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kk-project/kk/internal/extract"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/workpool"
)

// Extracted entities are rows of the nodes table like the leaves, told
// apart by their origin: the repository-relative file an extractor read
// them from. Their path is "@<origin>#<id>" (unique, and never a leaf's
// path), their version 0; their edges are rows of the edges table whose
// source is the origin and whose creator is "extractor:<name>". The
// sources table remembers every file an extractor read: its size, mtime
// and hash (so unchanged files are not read again), the problem that kept
// it out of the index, and the id clashes that kept some of its entities
// out.
//
// Id clashes: a tree leaf always wins over an extracted entity of the same
// id; between two extracted files, the one whose path sorts first wins.
// The loser's entity is left out and the clash is reported on every sync
// until it is resolved.

// Extraction is what a sync reads besides the leaves: the repository
// files the extractors name.
type Extraction struct {
	// Root is the repository root the extractors' paths are relative to.
	Root string
	// Config is the repository-relative config file, named in problems
	// with the extractors' settings.
	Config     string
	Extractors []extract.Extractor
}

// ExtractionFor returns the extraction a knowledge base's config asks for.
func ExtractionFor(k *store.KB) (*Extraction, error) {
	cfg, err := k.LoadConfig()
	if err != nil {
		return nil, err
	}
	return ExtractionWith(k, cfg), nil
}

// ExtractionWith returns the extraction cfg, k's config as a caller
// already read it, asks for.
func ExtractionWith(k *store.KB, cfg store.Config) *Extraction {
	return &Extraction{Root: k.Root, Config: filepath.ToSlash(k.Rel(k.ConfigPath())), Extractors: extract.FromConfig(cfg)}
}

// ExtractStats tells what a sync did with the extractors' source files.
type ExtractStats struct {
	Sources   int `json:"sources"`   // source files read into the index after the sync
	Entities  int `json:"entities"`  // extracted entities in the index after the sync
	Edges     int `json:"edges"`     // their edges
	Added     int `json:"added"`     // new source files
	Updated   int `json:"updated"`   // source files whose content changed
	Touched   int `json:"touched"`   // size or mtime changed, content the same
	Removed   int `json:"removed"`   // source files that are gone (their entities removed)
	Unchanged int `json:"unchanged"` // source files trusted by size and mtime alone
}

const sourcesTable = `CREATE TABLE IF NOT EXISTS sources (
	path TEXT PRIMARY KEY,
	extractor TEXT NOT NULL,
	size INTEGER NOT NULL,
	mtime INTEGER NOT NULL,
	sha256 TEXT NOT NULL,
	problem TEXT NOT NULL,
	clashes TEXT NOT NULL
)`

type sourceRow struct {
	extractor   string
	size, mtime int64
	sha         string
}

// sourceWork is one source file a sync has to read.
type sourceWork struct {
	f      fileStat // rel is repository-relative
	ex     extract.Extractor
	stored *sourceRow

	sha  string
	ents []extract.Entity
	err  error
	same bool // the hash and extractor match the stored row
}

// syncExtracted brings the extracted entities up to date inside a sync's
// transaction. leavesChanged says whether the leaf pass changed any row
// (a new or removed leaf may start or end an id clash). It returns whether
// a file was too recent to be trusted by its stat.
// files and problems are listSources' answer; the problems the sources
// table keeps are stored in kept.
func (db *DB) syncExtracted(w *writer, ex *Extraction, files []*sourceWork, problems []Problem, trustBefore int64, leavesChanged bool, st *Stats, kept *[]Problem) (racy bool, err error) {
	w.exec(sourcesTable)
	if w.err != nil {
		return false, w.err
	}
	st.Skipped = append(st.Skipped, problems...)
	stored, err := readSources(w.ctx, w.tx)
	if err != nil {
		return false, err
	}
	var work []*sourceWork
	seen := make(map[string]bool, len(files))
	for _, sf := range files {
		seen[sf.f.rel] = true
		s, ok := stored[sf.f.rel]
		if ok && s.extractor == sf.ex.Name() && s.size == sf.f.size && s.mtime == sf.f.mtime {
			if sf.f.mtime < trustBefore {
				st.Extracted.Unchanged++
				continue
			}
			racy = true
		}
		if ok {
			sf.stored = &s
		}
		work = append(work, sf)
	}
	workpool.Run(0, len(work), func(i int) { work[i].read(ex.Root) })

	// Gone first, so that their ids are free for the files read below.
	var gone []string
	for rel := range stored {
		if !seen[rel] {
			gone = append(gone, rel)
		}
	}
	slices.Sort(gone)
	for _, rel := range gone {
		w.deleteNodes(`origin = ?`, rel)
		w.exec(`DELETE FROM sources WHERE path = ?`, rel)
		st.Extracted.Removed++
	}
	applied := map[string]bool{}
	for _, sw := range work {
		switch {
		case sw.same:
			w.exec(`UPDATE sources SET size = ?, mtime = ? WHERE path = ?`, sw.f.size, sw.f.mtime, sw.f.rel)
			st.Extracted.Touched++
		case sw.stored != nil:
			w.applySource(sw)
			applied[sw.f.rel] = true
			st.Extracted.Updated++
		default:
			w.applySource(sw)
			applied[sw.f.rel] = true
			st.Extracted.Added++
		}
	}
	if w.err != nil {
		return racy, w.err
	}
	changed := st.Extracted.Added+st.Extracted.Updated+st.Extracted.Removed > 0
	if leavesChanged || changed {
		// Settle the clashes anything above may have started or ended:
		// re-read the files that lost an id, and those holding an id a
		// leaf now has.
		recheck, err := clashSources(w, leavesChanged)
		if err != nil {
			return racy, err
		}
		byPath := make(map[string]*sourceWork, len(files))
		for _, sf := range files {
			byPath[sf.f.rel] = sf
		}
		for _, rel := range recheck {
			sf, ok := byPath[rel]
			if !ok || applied[rel] {
				continue
			}
			sw := &sourceWork{f: sf.f, ex: sf.ex}
			sw.read(ex.Root)
			w.applySource(sw)
		}
	}
	if w.err != nil {
		return racy, w.err
	}
	probs, err := sourceProblems(w.ctx, w.tx)
	if err != nil {
		return racy, err
	}
	st.Skipped = append(st.Skipped, probs...)
	*kept = probs
	st.Extracted.Sources = len(seen)
	// The counts are kept in meta and recounted only after a change.
	if counts := w.queryString(`SELECT value FROM meta WHERE key = 'extracted_counts'`); counts != "" && !leavesChanged && !changed {
		if _, err := fmt.Sscanf(counts, "%d %d", &st.Extracted.Entities, &st.Extracted.Edges); err == nil {
			return racy, w.err
		}
	}
	if err := w.tx.QueryRowContext(w.ctx, `SELECT (SELECT count(*) FROM nodes WHERE origin > ''),
		(SELECT count(*) FROM edges WHERE rid IN (SELECT rid FROM nodes WHERE origin > ''))`).Scan(&st.Extracted.Entities, &st.Extracted.Edges); err != nil {
		return racy, err
	}
	w.setMeta("extracted_counts", fmt.Sprintf("%d %d", st.Extracted.Entities, st.Extracted.Edges))
	return racy, nil
}

// listSources asks every extractor for its files and stats them. A file
// two extractors name is read by the first only.
func listSources(ex *Extraction) ([]*sourceWork, []Problem) {
	var files []*sourceWork
	var problems []Problem
	owner := map[string]string{}
	for _, e := range ex.Extractors {
		paths, err := e.Sources(ex.Root)
		if err != nil {
			problems = append(problems, Problem{Path: ex.Config, Extractor: e.Name(), Msg: err.Error()})
			continue
		}
		for _, p := range paths {
			if o, ok := owner[p]; ok {
				problems = append(problems, Problem{Path: p, Extractor: e.Name(), Msg: fmt.Sprintf("already read by the %s extractor", o)})
				continue
			}
			owner[p] = e.Name()
			files = append(files, &sourceWork{f: fileStat{rel: p, abs: filepath.Join(ex.Root, filepath.FromSlash(p))}, ex: e})
		}
	}
	ok := make([]bool, len(files))
	workpool.Run(0, len(files), func(i int) {
		fi, err := os.Stat(files[i].f.abs)
		if err != nil || !fi.Mode().IsRegular() {
			return // gone since it was listed: treated as absent
		}
		files[i].f.size, files[i].f.mtime = fi.Size(), fi.ModTime().UnixNano()
		ok[i] = true
	})
	out := files[:0]
	for i, f := range files {
		if ok[i] {
			out = append(out, f)
		}
	}
	slices.SortFunc(out, func(a, b *sourceWork) int { return strings.Compare(a.f.rel, b.f.rel) })
	return out, problems
}

// read reads, hashes and (when its content changed) extracts the file.
func (sw *sourceWork) read(root string) {
	src, err := os.ReadFile(sw.f.abs)
	if err != nil {
		sw.err = fmt.Errorf("reading: %w", err)
		return
	}
	sum := sha256.Sum256(src)
	sw.sha = hex.EncodeToString(sum[:])
	if sw.stored != nil && sw.stored.sha == sw.sha && sw.stored.extractor == sw.ex.Name() {
		sw.same = true
		return
	}
	sw.ents, sw.err = sw.ex.Extract(root, sw.f.rel, src)
}

func readSources(ctx context.Context, q queryer) (map[string]sourceRow, error) {
	rows, err := q.QueryContext(ctx, `SELECT path, extractor, size, mtime, sha256 FROM sources`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]sourceRow{}
	for rows.Next() {
		var path string
		var r sourceRow
		if err := rows.Scan(&path, &r.extractor, &r.size, &r.mtime, &r.sha); err != nil {
			return nil, err
		}
		out[path] = r
	}
	return out, rows.Err()
}

// clashSources lists, sorted, the source files that lost an id in an
// earlier sync and, when leaves changed, those holding an id a leaf has.
func clashSources(w *writer, leavesChanged bool) ([]string, error) {
	q := `SELECT path FROM sources WHERE clashes != ''`
	if leavesChanged {
		// Driven by the extracted rows (few, through nodes_origin), each
		// looked up among the leaves by id: a join would let SQLite scan
		// every leaf instead.
		q += ` UNION SELECT e.origin FROM nodes e INDEXED BY nodes_origin WHERE e.origin > ''
			AND EXISTS (SELECT 1 FROM nodes l INDEXED BY nodes_id WHERE l.id = e.id AND l.origin = '')`
	}
	rows, err := w.tx.QueryContext(w.ctx, q+` ORDER BY 1`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// sourceProblems reports the files left out (problem) or partly left out
// (clashes) of the index.
func sourceProblems(ctx context.Context, q queryer) ([]Problem, error) {
	rows, err := q.QueryContext(ctx, `SELECT path, extractor, problem, clashes FROM sources WHERE problem != '' OR clashes != '' ORDER BY path`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Problem
	for rows.Next() {
		var path, ex, problem, clashes string
		if err := rows.Scan(&path, &ex, &problem, &clashes); err != nil {
			return nil, err
		}
		if problem != "" {
			out = append(out, Problem{Path: path, Extractor: ex, Msg: problem})
		}
		if clashes != "" {
			for _, c := range strings.Split(clashes, "\n") {
				out = append(out, Problem{Path: path, Extractor: ex, Msg: c})
			}
		}
	}
	return out, rows.Err()
}

// problemText renders an extractor's error without the file name, which
// the Problem carries.
func problemText(err error) string {
	var ee *extract.Error
	if errors.As(err, &ee) {
		if ee.Field == "" {
			return ee.Msg
		}
		return ee.Field + ": " + ee.Msg
	}
	return err.Error()
}

// applySource replaces a source file's rows with what it declares now.
func (w *writer) applySource(sw *sourceWork) {
	rel := sw.f.rel
	w.deleteNodes(`origin = ?`, rel)
	problem := ""
	var clashes []string
	if sw.err != nil {
		problem = problemText(sw.err)
	}
	createdAt := time.Unix(0, sw.f.mtime).UTC().Format(time.RFC3339)
	createdBy := "extractor:" + sw.ex.Name()
	for i := range sw.ents {
		if sw.err != nil {
			break
		}
		e := &sw.ents[i]
		if leaf := w.queryString(`SELECT min(path) FROM nodes INDEXED BY nodes_id WHERE id = ? AND origin = ''`, e.ID); leaf != "" {
			clashes = append(clashes, fmt.Sprintf("id %s is also the id of the leaf %s; the tree wins", e.ID, leaf))
			continue
		}
		if other := w.queryString(`SELECT min(origin) FROM nodes INDEXED BY nodes_id WHERE id = ? AND origin > '' AND origin != ?`, e.ID, rel); other != "" {
			if other < rel {
				clashes = append(clashes, fmt.Sprintf("id %s is also declared by %s, which wins (it sorts first)", e.ID, other))
				continue
			}
			w.deleteNodes(`origin = ? AND id = ?`, other, e.ID)
			msg := fmt.Sprintf("id %s is also declared by %s, which wins (it sorts first)", e.ID, rel)
			w.exec(`UPDATE sources SET clashes = CASE WHEN clashes = '' THEN ? ELSE clashes || char(10) || ? END WHERE path = ?`, msg, msg, other)
		}
		// An extracted entity gets what a created one gets: the default
		// status, and times (its document's, else the file's modification
		// time); its source and text are its file.
		status := e.Status
		if status == "" {
			status = DefaultStatus
		}
		meta := node.Meta{CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt, Source: rel, Sources: []string{rel}, TextRef: rel}
		if meta.UpdatedAt == "" {
			meta.UpdatedAt = meta.CreatedAt
		}
		meta = meta.WithFallbackTime(time.Unix(0, sw.f.mtime))
		res := w.exec(`INSERT INTO nodes(path, id, type, title, description, tags, body, folder, status, confidence, molecule,
			priority, severity, owner, origin, version, mtime, size, sha256, meta)
			VALUES (?, ?, ?, ?, ?, ?, ?, '', ?, '', '', ?, ?, ?, ?, 0, ?, ?, ?, ?)`,
			"@"+rel+"#"+e.ID, e.ID, e.Type, e.Title, e.Description, strings.Join(e.Tags, " "), e.Body,
			status, e.Priority, e.Severity, e.Owner, rel, sw.f.mtime, sw.f.size, sw.sha, metaJSON(meta))
		if w.err != nil {
			return
		}
		rid, err := res.LastInsertId()
		if err != nil {
			w.err = err
			return
		}
		w.putSearchDoc(rid, newSearchDoc(e.Title, e.Description, e.Tags, nil, e.Body), false)
		for _, ed := range e.Edges {
			conf := ""
			if ed.Confidence != nil {
				conf = strconv.FormatFloat(*ed.Confidence, 'g', -1, 64)
			}
			w.exec(`INSERT INTO edges(rid, src, type, dst, created_at, created_by, source, confidence) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
				rid, e.ID, ed.Type, ed.To, createdAt, createdBy, rel, conf)
		}
	}
	w.exec(`INSERT INTO sources(path, extractor, size, mtime, sha256, problem, clashes) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT(path) DO UPDATE SET extractor = excluded.extractor, size = excluded.size, mtime = excluded.mtime,
		sha256 = excluded.sha256, problem = excluded.problem, clashes = excluded.clashes`,
		rel, sw.ex.Name(), sw.f.size, sw.f.mtime, sw.sha, problem, strings.Join(clashes, "\n"))
}

// queryString returns the first column of the query's first row ("" when
// there is none or it is NULL), through the writer's prepared statements.
func (w *writer) queryString(query string, args ...any) string {
	s := w.prepare(query)
	if s == nil {
		return ""
	}
	var v sql.NullString
	if err := s.QueryRowContext(w.ctx, args...).Scan(&v); err != nil {
		if !errors.Is(err, sql.ErrNoRows) {
			w.err = err
		}
		return ""
	}
	return v.String
}
