package index

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// GlobMeta are the characters that make a path pattern segment a glob.
const GlobMeta = `*?[{\`

// PatternBucket is the bucket of an atom path pattern: its leading folders
// that hold no glob character ("src/auth" for "src/auth/**/*.go"), or the
// whole pattern when it holds none. A path can only match a pattern whose
// bucket is "", one of the path's folder prefixes, or the path itself (see
// PathBuckets), so a lookup never needs to try the others.
func PatternBucket(pattern string) string {
	if !strings.ContainsAny(pattern, GlobMeta) {
		return pattern
	}
	prefix := ""
	rest := pattern
	for {
		seg, after, more := strings.Cut(rest, "/")
		if !more || strings.ContainsAny(seg, GlobMeta) {
			return prefix
		}
		if prefix == "" {
			prefix = seg
		} else {
			prefix += "/" + seg
		}
		rest = after
	}
}

// PathBuckets lists the buckets whose patterns may match path p: "", each
// of its folder prefixes, and p itself.
func PathBuckets(p string) []string {
	out := []string{""}
	for i := 0; i < len(p); i++ {
		if p[i] == '/' {
			out = append(out, p[:i])
		}
	}
	return append(out, p)
}

// PatternRow is one atom pattern of the index.
type PatternRow struct {
	RID     int64 // the row of the leaf holding it (see AtomIDs)
	Pattern string
	Bucket  string
}

// PatternsIn returns the leaves' patterns whose bucket is one of buckets,
// in no particular order.
func (db *DB) PatternsIn(ctx context.Context, buckets []string) ([]PatternRow, error) {
	var out []PatternRow
	err := db.queryIn(ctx, `SELECT rid, pattern, bucket FROM kk_paths INDEXED BY kk_paths_bucket WHERE bucket IN (?)`, anys(buckets),
		func(rows *sql.Rows) error {
			var r PatternRow
			err := rows.Scan(&r.RID, &r.Pattern, &r.Bucket)
			out = append(out, r)
			return err
		})
	return out, err
}

// AtomIDs returns the ids of the atoms (tree leaves with patterns that are
// not molecules) among the given rows.
func (db *DB) AtomIDs(ctx context.Context, rids []int64) ([]string, error) {
	var out []string
	err := db.queryIn(ctx, `SELECT id FROM nodes WHERE rid IN (?) AND origin = '' AND type != 'molecule'`, anys(rids),
		func(rows *sql.Rows) error {
			var id string
			err := rows.Scan(&id)
			out = append(out, id)
			return err
		})
	return out, err
}

// HasAtoms reports whether any leaf has path patterns (an atom), so a
// caller with nothing to match against can stop early.
func (db *DB) HasAtoms(ctx context.Context) (bool, error) {
	var n int
	if err := db.r.QueryRowContext(ctx, `SELECT EXISTS(SELECT 1 FROM kk_paths)`).Scan(&n); err != nil {
		return false, fmt.Errorf("reading index %s: %w", db.Path, err)
	}
	return n == 1, nil
}
