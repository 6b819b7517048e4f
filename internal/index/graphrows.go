package index

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/store"
)

// GraphKeys are the front matter keys of the knowledge graph the index
// keeps for every leaf (as JSON in nodes.graph), so that atoms and
// molecules are read without parsing their leaves.
var GraphKeys = []string{"kk_paths", "kk_molecule", "kk_related", "kk_edges", "kk_version", "kk_changelog",
	"kk_created_at", "kk_updated_at", "kk_created_by_task", "kk_last_task"}

// graphJSON returns the leaf's graph keys as a JSON object ("" when it has
// none).
func graphJSON(n *node.Node) string {
	m := map[string]any{}
	for _, k := range GraphKeys {
		if v, ok := n.Extra(k); ok {
			m[k] = v
		}
	}
	if len(m) == 0 {
		return ""
	}
	b, err := json.Marshal(m)
	if err != nil { // front matter values are JSON-representable
		return ""
	}
	return string(b)
}

// GraphRow is a leaf with graph keys, as the index keeps it.
type GraphRow struct {
	ID, Path, Type, Title string
	Body                  string // only when asked for
	keys                  map[string]any
}

// setVersion makes kk_version the version the index records (one above
// the file's when the leaf changed outside kk; see effectiveVersion).
func (r *GraphRow) setVersion(v int64) {
	if v > 0 {
		if r.keys == nil {
			r.keys = map[string]any{}
		}
		r.keys["kk_version"] = v
	}
}

// Extra returns a graph key's value, decoded as the front matter parser
// decodes it (whole numbers as int64).
func (r *GraphRow) Extra(key string) (any, bool) {
	v, ok := r.keys[key]
	return v, ok
}

// GraphRows returns the tree leaves that are molecules or carry graph keys,
// ordered by path, with their bodies when bodies is set.
func (db *DB) GraphRows(ctx context.Context, bodies bool) ([]*GraphRow, error) {
	body := "''"
	if bodies {
		body = "body"
	}
	rows, err := db.r.QueryContext(ctx, `SELECT id, path, type, title, `+body+`, graph, version FROM nodes
		WHERE origin = '' AND (graph != '' OR type = 'molecule') ORDER BY path`)
	if err != nil {
		return nil, fmt.Errorf("reading index %s: %w", db.Path, err)
	}
	defer rows.Close()
	var out []*GraphRow
	for rows.Next() {
		r := &GraphRow{}
		var g string
		var version int64
		if err := rows.Scan(&r.ID, &r.Path, &r.Type, &r.Title, &r.Body, &g, &version); err != nil {
			return nil, fmt.Errorf("reading index %s: %w", db.Path, err)
		}
		if r.keys, err = decodeGraph(g); err != nil {
			return nil, fmt.Errorf("index %s: %s: %w", db.Path, r.Path, err)
		}
		r.setVersion(version)
		out = append(out, r)
	}
	return out, rows.Err()
}

// GraphRowsByID returns the tree leaves with the given ids that are
// molecules or carry graph keys, with their bodies, ordered by path.
func (db *DB) GraphRowsByID(ctx context.Context, ids []string) ([]*GraphRow, error) {
	return db.graphRowsWhere(ctx, "id", "body", ids)
}

// GraphKeysByID is GraphRowsByID without the bodies: what a reader of the
// graph keys alone (the times a leaf records) needs, whatever the size of
// the leaves.
func (db *DB) GraphKeysByID(ctx context.Context, ids []string) ([]*GraphRow, error) {
	return db.graphRowsWhere(ctx, "id", "''", ids)
}

// GraphRowsByMolecule returns the atoms whose kk_molecule is one of ids,
// with their bodies, ordered by path.
func (db *DB) GraphRowsByMolecule(ctx context.Context, ids []string) ([]*GraphRow, error) {
	return db.graphRowsWhere(ctx, "molecule", "body", ids)
}

// graphRowsWhere reads the rows whose column is one of values; body is
// the SQL read as their bodies: "body", or an empty string literal for
// none.
func (db *DB) graphRowsWhere(ctx context.Context, column, body string, values []string) ([]*GraphRow, error) {
	var out []*GraphRow
	// INDEXED BY: the planner would otherwise pick nodes_origin for
	// origin = '' and scan every leaf.
	err := db.queryIn(ctx, `SELECT id, path, type, title, `+body+`, graph, version FROM nodes INDEXED BY nodes_`+column+`
		WHERE `+column+` IN (?) AND origin = '' AND (graph != '' OR type = 'molecule') ORDER BY path`, anys(values), func(rows *sql.Rows) error {
		r := &GraphRow{}
		var g string
		var version int64
		if err := rows.Scan(&r.ID, &r.Path, &r.Type, &r.Title, &r.Body, &g, &version); err != nil {
			return err
		}
		var err error
		if r.keys, err = decodeGraph(g); err != nil {
			return fmt.Errorf("%s: %w", r.Path, err)
		}
		r.setVersion(version)
		out = append(out, r)
		return nil
	})
	return out, err
}

// Bodies returns the bodies of the tree leaves at the given paths (an
// extracted entity's path starts with "@" and never equals a leaf's).
func (db *DB) Bodies(ctx context.Context, paths []string) (map[string]string, error) {
	out := make(map[string]string, len(paths))
	err := db.queryIn(ctx, `SELECT path, body FROM nodes WHERE path IN (?)`, anys(paths), func(rows *sql.Rows) error {
		var p, b string
		err := rows.Scan(&p, &b)
		out[p] = b
		return err
	})
	return out, err
}

// EachLinkBody calls fn with the path and body of each tree leaf that may
// hold a markdown link (its body contains "](" or "]:"), as the last sync
// left them: what a check of the links between leaves reads instead of
// every leaf file, one row at a time.
func (db *DB) EachLinkBody(ctx context.Context, fn func(path, body string)) error {
	rows, err := db.r.QueryContext(ctx, `SELECT path, body FROM nodes WHERE origin = '' AND (instr(body, '](') > 0 OR instr(body, ']:') > 0)`)
	if err != nil {
		return fmt.Errorf("reading index %s: %w", db.Path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var p, b string
		if err := rows.Scan(&p, &b); err != nil {
			return fmt.Errorf("reading index %s: %w", db.Path, err)
		}
		fn(p, b)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading index %s: %w", db.Path, err)
	}
	return nil
}

// DeadLinks finds the dead links of tree t (store.DeadLinks): from the
// bodies the index db holds when t was read from it (ReadTreeDB), else
// (db nil) from the leaf files.
func DeadLinks(ctx context.Context, k *store.KB, t *store.Tree, db *DB, r store.Redirects) ([]store.DeadLink, error) {
	if db == nil {
		return k.DeadLinks(t, r)
	}
	return k.DeadLinksIn(t, r, func(fn func(path, body string)) error { return db.EachLinkBody(ctx, fn) })
}

// decodeGraph decodes nodes.graph, turning JSON numbers back into int64
// (whole numbers) or float64 as the front matter parser gives them.
func decodeGraph(s string) (map[string]any, error) {
	if s == "" {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	for k, v := range m {
		m[k] = fromJSONNumbers(v)
	}
	return m, nil
}

func fromJSONNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case []any:
		for i := range x {
			x[i] = fromJSONNumbers(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = fromJSONNumbers(x[k])
		}
	}
	return v
}
