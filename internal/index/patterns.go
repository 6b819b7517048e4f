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
	ID      string // the atom
	Pattern string
	Bucket  string
}

// PatternsIn returns the patterns of the tree's atoms whose bucket is one
// of buckets, ordered by atom id and pattern order.
func (db *DB) PatternsIn(ctx context.Context, buckets []string) ([]PatternRow, error) {
	var out []PatternRow
	const batch = 500
	for start := 0; start < len(buckets); start += batch {
		chunk := buckets[start:min(start+batch, len(buckets))]
		args := make([]any, len(chunk))
		for i, b := range chunk {
			args[i] = b
		}
		rows, err := db.r.QueryContext(ctx, `SELECT n.id, p.pattern, p.bucket FROM kk_paths p INDEXED BY kk_paths_bucket CROSS JOIN nodes n ON n.rid = p.rid
			WHERE p.bucket IN (?`+strings.Repeat(",?", len(chunk)-1)+`) AND n.origin = '' AND n.type != 'molecule'
			ORDER BY n.id, p.seq`, args...)
		if err != nil {
			return nil, fmt.Errorf("reading index %s: %w", db.Path, err)
		}
		for rows.Next() {
			var r PatternRow
			if err := rows.Scan(&r.ID, &r.Pattern, &r.Bucket); err != nil {
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
