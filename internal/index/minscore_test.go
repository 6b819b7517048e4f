package index

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/kk-project/kk/internal/benchtree"
)

// A least score copied from the output keeps the hit it was copied from:
// the faces show scores to three decimals, and the raw score of a hit
// shown as 2.217 may be 2.2166, which a cut at 2.217 dropped.
func TestMinScoreKeepsTheHitWhoseShownScoreItIs(t *testing.T) {
	ctx := context.Background()
	k, err := benchtree.Generate(filepath.Join(t.TempDir(), "repo"), benchtree.Options{Nodes: 200, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	db, _, err := Open(ctx, k, "main")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	pairs := 0
	for _, q := range []string{"api timeout", "cache config", "deploy error", "auth header", "event retry"} {
		hits, err := db.Search(ctx, Request{Text: q, Limit: 20})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			pairs++
			got, err := db.Search(ctx, Request{Text: q, Limit: 20, MinScore: h.Score})
			if err != nil {
				t.Fatal(err)
			}
			kept := false
			for _, g := range got {
				kept = kept || g.ID == h.ID
			}
			if !kept {
				t.Errorf("%q: a least score of %v dropped %s, which scored %v", q, h.Score, h.ID, h.Score)
			}
		}
	}
	if pairs < 10 {
		t.Fatalf("only %d hits to check", pairs)
	}
}
