package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/store"
)

// Entity is one row of the index as the traceability operations see it: a
// leaf of the tree (Origin "") or an entity an extractor read from the
// repository file Origin.
type Entity struct {
	ID          string   `json:"id"`
	Type        string   `json:"type"`
	Title       string   `json:"title"`
	Description string   `json:"description,omitempty"`
	Status      string   `json:"status,omitempty"`
	Priority    string   `json:"priority,omitempty"`
	Severity    string   `json:"severity,omitempty"`
	Owner       string   `json:"owner,omitempty"`
	Tags        []string `json:"tags"`
	Version     int64    `json:"version,omitempty"`
	Path        string   `json:"path,omitempty"`   // relative to nodes/, tree leaves only
	Origin      string   `json:"origin,omitempty"` // extractor source file, extracted entities only
	// Meta is when the entity was made and changed, where it came from,
	// its links and its text (seed 003's audit fields): what its leaf
	// records, else its file's modification time for the times; for an
	// extracted entity, its document's times and its file.
	node.Meta
}

// DefaultStatus is the status of an entity that names none: the status
// kb_upsert gives a new entity.
const DefaultStatus = "draft"

const entityColumns = `id, type, title, description, status, priority, severity, owner, tags, version, path, origin, meta, mtime`

// metaJSON is a node's audit metadata as the index keeps it (nodes.meta).
func metaJSON(m node.Meta) string {
	b, err := json.Marshal(m)
	if err != nil || string(b) == "{}" {
		return ""
	}
	return string(b)
}

func scanEntity(sc interface{ Scan(...any) error }) (*Entity, error) {
	var e Entity
	var tags, meta string
	var mtime int64
	if err := sc.Scan(&e.ID, &e.Type, &e.Title, &e.Description, &e.Status, &e.Priority, &e.Severity, &e.Owner, &tags, &e.Version, &e.Path, &e.Origin, &meta, &mtime); err != nil {
		return nil, err
	}
	if meta != "" {
		if err := json.Unmarshal([]byte(meta), &e.Meta); err != nil {
			return nil, fmt.Errorf("the index's metadata of %s: %w", e.ID, err)
		}
	}
	if mtime > 0 {
		e.Meta = e.Meta.WithFallbackTime(time.Unix(0, mtime))
	}
	e.Tags = strings.Fields(tags)
	if e.Tags == nil {
		e.Tags = []string{}
	}
	if e.Origin != "" {
		e.Path = ""
	}
	return &e, nil
}

// sharedLeaf is true of a row n of the nodes table that is a leaf whose
// id another leaf also has (a note copied and not given an id of its
// own, or one whose id differs only in case), unless n is the one the id
// names (store.HolderOf): the only one of them that may hold it whose file
// is named for the id. A tree read skips those leaves, and so do the
// readers of the index: LeafPath, Entities, EntitiesByID and Edges.
var sharedLeaf = `(n.origin = '' AND EXISTS (SELECT 1 FROM nodes o INDEXED BY nodes_id WHERE o.id = n.id AND o.origin = '' AND o.rid != n.rid)
	AND NOT (` + mayHold("n", "p") + ` AND NOT EXISTS (SELECT 1 FROM nodes o INDEXED BY nodes_id WHERE o.id = n.id AND o.origin = '' AND o.rid != n.rid AND ` + mayHold("o", "q") + `)))`

// mayHold is true of a row x (an alias of the nodes table) that may hold
// its id against the other leaves of it (store.HolderOf): its file is
// named for its id (store.NamedFor), and it is no leaf that yields its id
// to one spelled differently (store.CaseLoser: a practice, map or
// molecule whose id has an upper-case letter, beside a leaf whose id is
// spelled otherwise; y is a free alias for that leaf).
func mayHold(x, y string) string {
	return strings.NewReplacer("x.", x+".", "y.", y+".", "nodes y", "nodes "+y).Replace(
		`((x.path = x.id || '.md' OR substr(x.path, -(length(x.id) + 4)) = '/' || x.id || '.md')
		AND NOT (x.type IN ('` + strings.Join(node.DerivedTypes, "', '") + `') AND x.id COLLATE BINARY <> lower(x.id)
			AND EXISTS (SELECT 1 FROM nodes y INDEXED BY nodes_id WHERE y.id = x.id AND y.origin = '' AND y.id COLLATE BINARY <> x.id)))`)
}

// Entities returns every entity of the index, ordered by id (then origin,
// so a tree leaf comes before an extracted entity of the same id), but
// the leaves sharing an id.
func (db *DB) Entities(ctx context.Context) ([]*Entity, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+entityColumns+` FROM nodes n WHERE NOT `+sharedLeaf+` ORDER BY id, origin, path`)
	if err != nil {
		return nil, fmt.Errorf("reading index %s: %w", db.Path, err)
	}
	defer rows.Close()
	var out []*Entity
	for rows.Next() {
		e, err := scanEntity(rows)
		if err != nil {
			return nil, fmt.Errorf("reading index %s: %w", db.Path, err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// EntitiesByID returns the entities with the given ids (matched without
// regard to case), keyed by store.IDKey of their id. When an id appears
// twice (a leaf and an extracted entity), the leaf wins; leaves sharing
// an id are left out.
func (db *DB) EntitiesByID(ctx context.Context, ids []string) (map[string]*Entity, error) {
	out := make(map[string]*Entity, len(ids))
	err := db.queryIn(ctx, `SELECT `+entityColumns+` FROM nodes n WHERE id IN (?) AND NOT `+sharedLeaf+` ORDER BY origin DESC`, anys(ids), func(rows *sql.Rows) error {
		e, err := scanEntity(rows)
		if err == nil {
			out[store.IDKey(e.ID)] = e // ORDER BY origin DESC: the leaf ("" origin) is stored last
		}
		return err
	})
	return out, err
}

// Edges returns every edge of the index, ordered by source, type, target,
// but those of leaves sharing an id.
func (db *DB) Edges(ctx context.Context) ([]Edge, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT src, type, dst, created_at, created_by, source, confidence FROM edges
		WHERE rid NOT IN (SELECT n.rid FROM nodes n WHERE `+sharedLeaf+`) ORDER BY src, type, dst, rowid`)
	if err != nil {
		return nil, fmt.Errorf("reading index %s: %w", db.Path, err)
	}
	defer rows.Close()
	var out []Edge
	for rows.Next() {
		var e Edge
		if err := rows.Scan(&e.From, &e.Type, &e.To, &e.CreatedAt, &e.CreatedBy, &e.Source, &e.Confidence); err != nil {
			return nil, fmt.Errorf("reading index %s: %w", db.Path, err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// Versions returns the version the index records for each leaf path given
// (relative to nodes/): kk_version, or one more than the version before
// when the leaf changed outside kk without raising it. Paths the index does
// not hold are absent.
func (db *DB) Versions(ctx context.Context, paths []string) (map[string]int64, error) {
	out := make(map[string]int64, len(paths))
	err := db.queryIn(ctx, `SELECT path, version FROM nodes WHERE path IN (?) AND origin = ''`, anys(paths), func(rows *sql.Rows) error {
		var p string
		var v int64
		if err := rows.Scan(&p, &v); err != nil {
			return err
		}
		out[p] = v
		return nil
	})
	return out, err
}

// LeafPath returns the path (relative to nodes/) of the leaf with the
// given id (compared without regard to case) as the index last committed
// it, and the version the index records for it; ok is false when no leaf
// has the id, or more than one (a tree read skips them all).
func (db *DB) LeafPath(ctx context.Context, id string) (path string, version int64, ok bool, err error) {
	rows, err := db.r.QueryContext(ctx, `SELECT id, type, path, version FROM nodes INDEXED BY nodes_id WHERE id = ? AND origin = ''`, id)
	if err != nil {
		return "", 0, false, fmt.Errorf("reading index %s: %w", db.Path, err)
	}
	defer rows.Close()
	var ids, types, paths []string
	var versions []int64
	for rows.Next() {
		var rid, typ, p string
		var v int64
		if err := rows.Scan(&rid, &typ, &p, &v); err != nil {
			return "", 0, false, fmt.Errorf("reading index %s: %w", db.Path, err)
		}
		ids, types, paths, versions = append(ids, rid), append(types, typ), append(paths, p), append(versions, v)
	}
	if err := rows.Err(); err != nil {
		return "", 0, false, fmt.Errorf("reading index %s: %w", db.Path, err)
	}
	if len(paths) == 0 {
		return "", 0, false, nil
	}
	i, ok := store.HolderOf(ids, types, paths)
	if !ok {
		return "", 0, false, nil
	}
	return paths[i], versions[i], true, nil
}
