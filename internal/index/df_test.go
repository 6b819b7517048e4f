package index

import (
	"context"
	"fmt"
	"maps"
	"os"
	"strings"
	"testing"
)

// checkDF fails unless search_df holds, for every term, the number of
// search docs holding it: as counted again from search_docs, and as the
// full-text table's own vocabulary counts it; and, as authored, the
// number holding it outside the phrasings.
func checkDF(t *testing.T, ctx context.Context, db *DB, when string) {
	t.Helper()
	read := func(q string) map[string]int {
		t.Helper()
		rows, err := db.r.QueryContext(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[string]int{}
		for rows.Next() {
			var term string
			var n int
			if err := rows.Scan(&term, &n); err != nil {
				t.Fatal(err)
			}
			out[term] = n
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	got := read(`SELECT term, docs FROM search_df`)
	count := func(q string) map[string]int {
		t.Helper()
		rows, err := db.r.QueryContext(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[string]int{}
		for rows.Next() {
			var text string
			if err := rows.Scan(&text); err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for _, term := range strings.Fields(text) {
				if term != passageBreak && !seen[term] {
					seen[term] = true
					out[term]++
				}
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	want := count(`SELECT title || ' ' || description || ' ' || tags || ' ' || phrasings || ' ' || body FROM search_docs`)
	if !maps.Equal(got, want) {
		t.Fatalf("%s: search_df differs from search_docs: %s", when, mapDiff(got, want))
	}
	authored := read(`SELECT term, authored FROM search_df WHERE authored > 0`)
	if want := count(`SELECT title || ' ' || description || ' ' || tags || ' ' || body FROM search_docs`); !maps.Equal(authored, want) {
		t.Fatalf("%s: search_df's authored counts differ from search_docs without the phrasings: %s", when, mapDiff(authored, want))
	}
	if vocab := read(`SELECT term, doc FROM search_vocab`); !maps.Equal(got, vocab) {
		t.Fatalf("%s: search_df differs from the full-text vocabulary: %s", when, mapDiff(got, vocab))
	}
}

func mapDiff(got, want map[string]int) string {
	var b strings.Builder
	for k, v := range want {
		if got[k] != v {
			fmt.Fprintf(&b, "%s: %d, want %d; ", k, got[k], v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			fmt.Fprintf(&b, "%s: %d, want none; ", k, v)
		}
	}
	return b.String()
}

// A search weighs a term by the count search_df keeps, which is the
// vocabulary's, through a first sync, edits, removals and a bulk sync.
func TestDocumentFrequencies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	k := seedKB(t)
	db, _, err := Open(ctx, k, "main")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	checkDF(t, ctx, db, "first sync")
	writeLeaf(t, k, "auth/extra.md", leaf("practice-extra", "Extra retry notes", "How retries back off", []string{"retry"}, "kk_phrasings:\n  - when does it retry\n", "Retry the request. Then back off."))
	if _, err := db.Sync(ctx, k.NodesDir()); err != nil {
		t.Fatal(err)
	}
	checkDF(t, ctx, db, "a leaf added")
	// "retry" and "when" move to the phrasings alone, "back" stays in both.
	writeLeaf(t, k, "auth/extra.md", leaf("practice-extra", "Extra notes", "How it backs off", nil, "kk_phrasings:\n  - when does it retry\n  - back off\n", "Then back off."))
	if _, err := db.SyncPaths(ctx, k.NodesDir(), nil, []string{"auth/extra.md"}); err != nil {
		t.Fatal(err)
	}
	checkDF(t, ctx, db, "terms left for the phrasings alone (SyncPaths)")
	writeLeaf(t, k, "auth/extra.md", leaf("practice-extra", "Extra notes", "Nothing about it now", nil, "", "Plain body."))
	if _, err := db.SyncPaths(ctx, k.NodesDir(), nil, []string{"auth/extra.md"}); err != nil {
		t.Fatal(err)
	}
	checkDF(t, ctx, db, "a leaf replaced (SyncPaths)")
	var rels []string
	for i := range bulkRows + 5 {
		rel := fmt.Sprintf("bulk/practice-item-%d.md", i)
		writeLeaf(t, k, rel, leaf(fmt.Sprintf("practice-item-%d", i), fmt.Sprintf("Item %d", i), "d", nil, "", fmt.Sprintf("Body word%d here and retry.", i%7)))
		rels = append(rels, rel)
	}
	age(t, k, rels...)
	if st, err := db.Sync(ctx, k.NodesDir()); err != nil || st.Added < bulkRows {
		t.Fatalf("bulk sync: %+v, %v", st, err)
	}
	checkDF(t, ctx, db, "a bulk sync")
	if err := os.RemoveAll(k.NodesDir() + "/bulk"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Sync(ctx, k.NodesDir()); err != nil {
		t.Fatal(err)
	}
	checkDF(t, ctx, db, "a folder removed")
}
