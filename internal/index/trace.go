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
// own), unless n is the one the id names: the only one of them whose
// file is named for the id (store.Holder). A tree read skips those
// leaves, and so do the readers of the index: LeafPath, Entities,
// EntitiesByID and Edges.
const sharedLeaf = `(n.origin = '' AND EXISTS (SELECT 1 FROM nodes o INDEXED BY nodes_id WHERE o.id = n.id AND o.origin = '' AND o.rid != n.rid)
	AND NOT (` + namedForID + ` AND NOT EXISTS (SELECT 1 FROM nodes o INDEXED BY nodes_id WHERE o.id = n.id AND o.origin = '' AND o.rid != n.rid AND ` + oNamedForID + `)))`

// namedForID is true of a row n whose file is named for its id
// (store.NamedFor), and oNamedForID of a row o.
const (
	namedForID  = `(n.path = n.id || '.md' OR substr(n.path, -(length(n.id) + 4)) = '/' || n.id || '.md')`
	oNamedForID = `(o.path = o.id || '.md' OR substr(o.path, -(length(o.id) + 4)) = '/' || o.id || '.md')`
)

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
	rows, err := db.r.QueryContext(ctx, `SELECT id, path, version FROM nodes INDEXED BY nodes_id WHERE id = ? AND origin = ''`, id)
	if err != nil {
		return "", 0, false, fmt.Errorf("reading index %s: %w", db.Path, err)
	}
	defer rows.Close()
	var ids, paths []string
	var versions []int64
	for rows.Next() {
		var rid, p string
		var v int64
		if err := rows.Scan(&rid, &p, &v); err != nil {
			return "", 0, false, fmt.Errorf("reading index %s: %w", db.Path, err)
		}
		ids, paths, versions = append(ids, rid), append(paths, p), append(versions, v)
	}
	if err := rows.Err(); err != nil {
		return "", 0, false, fmt.Errorf("reading index %s: %w", db.Path, err)
	}
	if len(paths) == 0 {
		return "", 0, false, nil
	}
	i, ok := store.Holder(ids[0], paths)
	if !ok {
		return "", 0, false, nil
	}
	return paths[i], versions[i], true, nil
}
