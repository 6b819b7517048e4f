package index

import (
	"context"
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
	const batch = 500
	for start := 0; start < len(buckets); start += batch {
		chunk := buckets[start:min(start+batch, len(buckets))]
		args := make([]any, len(chunk))
		for i, b := range chunk {
			args[i] = b
		}
		rows, err := db.r.QueryContext(ctx, `SELECT rid, pattern, bucket FROM kk_paths INDEXED BY kk_paths_bucket
			WHERE bucket IN (?`+strings.Repeat(",?", len(chunk)-1)+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("reading index %s: %w", db.Path, err)
		}
		for rows.Next() {
			var r PatternRow
			if err := rows.Scan(&r.RID, &r.Pattern, &r.Bucket); err != nil {
				rows.Close()
				return nil, fmt.Errorf("reading index %s: %w", db.Path, err)
			}
			out = append(out, r)
		}
		if err := rows.Close(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// AtomIDs returns the ids of the atoms (tree leaves with patterns that are
// not molecules) among the given rows.
func (db *DB) AtomIDs(ctx context.Context, rids []int64) ([]string, error) {
	var out []string
	const batch = 500
	for start := 0; start < len(rids); start += batch {
		chunk := rids[start:min(start+batch, len(rids))]
		args := make([]any, len(chunk))
		for i, r := range chunk {
			args[i] = r
		}
		rows, err := db.r.QueryContext(ctx, `SELECT id FROM nodes WHERE rid IN (?`+strings.Repeat(",?", len(chunk)-1)+`)
			AND origin = '' AND type != 'molecule'`, args...)
		if err != nil {
			return nil, fmt.Errorf("reading index %s: %w", db.Path, err)
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, fmt.Errorf("reading index %s: %w", db.Path, err)
			}
			out = append(out, id)
		}
		if err := rows.Close(); err != nil {
			return nil, err
		}
	}
	return out, nil
}
