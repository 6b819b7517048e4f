package index

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// inBatch bounds the values of one IN list (SQLite allows 32766 host
// parameters; smaller lists keep each statement cheap to prepare).
const inBatch = 500

// queryIn runs query for values, in batches: query holds "(?)" where the
// IN list goes, and scan is called for every row of every batch.
func (db *DB) queryIn(ctx context.Context, query string, values []any, scan func(*sql.Rows) error) error {
	for start := 0; start < len(values); start += inBatch {
		chunk := values[start:min(start+inBatch, len(values))]
		q := strings.Replace(query, "(?)", "(?"+strings.Repeat(",?", len(chunk)-1)+")", 1)
		rows, err := db.r.QueryContext(ctx, q, chunk...)
		if err != nil {
			return fmt.Errorf("reading index %s: %w", db.Path, err)
		}
		for rows.Next() {
			if err := scan(rows); err != nil {
				rows.Close()
				return fmt.Errorf("reading index %s: %w", db.Path, err)
			}
		}
		if err := rows.Close(); err != nil {
			return fmt.Errorf("reading index %s: %w", db.Path, err)
		}
	}
	return nil
}

// anys converts values for queryIn.
func anys[T any](values []T) []any {
	out := make([]any, len(values))
	for i, v := range values {
		out[i] = v
	}
	return out
}
