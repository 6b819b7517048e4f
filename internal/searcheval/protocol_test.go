package searcheval_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/searcheval"
)

// Folds partition a set: every case is in exactly one fold, and "rest" is
// the complement; pooling the folds' reports gives the whole set's.
func TestFoldsPartitionAndPool(t *testing.T) {
	set := loadSet(t, kenkeepSet)
	b, err := searcheval.LoadBaseline(kenkeepNodes)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	whole, err := searcheval.Run(ctx, set, b.Rank)
	if err != nil {
		t.Fatal(err)
	}
	const k = 5
	seen := map[string]int{}
	var reps []*searcheval.Report
	for i := range k {
		in, rest := searcheval.Fold(set, i, k, false), searcheval.Fold(set, i, k, true)
		if len(in.Cases)+len(rest.Cases) != len(set.Cases) || len(in.Cases) == 0 {
			t.Fatalf("fold %d: %d + %d cases of %d", i, len(in.Cases), len(rest.Cases), len(set.Cases))
		}
		for _, c := range in.Cases {
			seen[c.ID]++
			if slices.ContainsFunc(rest.Cases, func(r searcheval.Case) bool { return r.ID == c.ID }) {
				t.Errorf("%s is in fold %d and in its rest", c.ID, i)
			}
		}
		rep, err := searcheval.Run(ctx, in, b.Rank)
		if err != nil {
			t.Fatal(err)
		}
		reps = append(reps, rep)
	}
	for _, c := range set.Cases {
		if seen[c.ID] != 1 {
			t.Errorf("%s is in %d folds", c.ID, seen[c.ID])
		}
	}
	pooled := searcheval.Pool(set.Name, reps...)
	const eps = 1e-9
	if d := pooled.All.MRR - whole.All.MRR; d > eps || d < -eps || pooled.All.N != whole.All.N || pooled.RefusalsPassed != whole.RefusalsPassed {
		t.Errorf("pooled %+v, whole %+v", pooled.All, whole.All)
	}
}

// Tuning never ends below where it started on its training corpus, and
// changes only the parameters of its grid.
func TestTuneClimbs(t *testing.T) {
	c := buildKenkeep(t, "")
	ctx := context.Background()
	db, _, err := index.Open(ctx, c.k, "main")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	corpus := searcheval.Corpus{Set: searcheval.Fold(c.sets[0], 0, 3, true), Search: func(ctx context.Context, p string, rk *index.Ranking) ([]string, error) {
		hits, err := db.Search(ctx, index.Request{Text: p, Limit: 20, Ranking: rk})
		ids := make([]string, len(hits))
		for i, h := range hits {
			ids[i] = h.ID
		}
		return ids, err
	}}
	var grid []searcheval.Param
	for _, p := range searcheval.Grid() {
		if strings.HasPrefix(p.Name, "feedback") {
			grid = append(grid, p)
		}
	}
	start := index.DefaultRanking
	start.FeedbackDocs = 0
	rep, err := corpus.Evaluate(ctx, start)
	if err != nil {
		t.Fatal(err)
	}
	rk, score, err := searcheval.Tune(ctx, []searcheval.Corpus{corpus}, grid, start, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if score < searcheval.Objective(rep) {
		t.Errorf("tuned objective %.4f below the start's %.4f", score, searcheval.Objective(rep))
	}
	rk.FeedbackDocs, rk.FeedbackTerms, rk.FeedbackWeight = start.FeedbackDocs, start.FeedbackTerms, start.FeedbackWeight
	if rk != start {
		t.Errorf("tuning changed a parameter outside its grid: %+v", rk)
	}
}
