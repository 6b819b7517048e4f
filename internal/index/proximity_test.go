package index

import (
	"context"
	"math"
	"strings"
	"testing"
)

// A leaf that keeps the text's words together ranks above one that holds
// the same words as often, scattered; without the proximity step the two
// tie on BM25F and the id decides.
func TestProximityRanksWordsKeptTogether(t *testing.T) {
	ctx := context.Background()
	k := newKB(t)
	filler := strings.Repeat("lorem ipsum dolor sit amet consectetur ", 4)
	// The same words, the same counts, the same length: only their order
	// differs.
	writeLeaf(t, k, "a/scattered.md", leaf("practice-a-scattered", "Notes one", "Assorted", nil, "",
		"render "+filler+"cache "+filler))
	writeLeaf(t, k, "b/together.md", leaf("practice-b-together", "Notes two", "Assorted", nil, "",
		"render cache "+filler+filler))
	db, _, err := Open(ctx, k, "main")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	plain := DefaultRanking
	plain.FeedbackDocs, plain.NeighbourTop = 0, 0
	off := plain
	off.Proximity = 0
	hits, err := db.Search(ctx, Request{Text: "render cache", Limit: 5, NoSnippets: true, Ranking: &off})
	if err != nil || len(hits) != 2 || hits[0].Score != hits[1].Score {
		t.Fatalf("without proximity: %+v %v; want two hits with one score", hits, err)
	}
	hits, err = db.Search(ctx, Request{Text: "render cache", Limit: 5, NoSnippets: true, Ranking: &plain})
	if err != nil || len(hits) != 2 || hits[0].ID != "practice-b-together" || !(hits[0].Score > hits[1].Score) {
		t.Fatalf("with proximity: %+v %v; want practice-b-together first, above", hits, err)
	}
	// One word of the text is not a pair: nothing to add.
	one, err := db.Search(ctx, Request{Text: "render", Limit: 5, NoSnippets: true, Ranking: &plain})
	if err != nil || len(one) != 2 || one[0].Score != one[1].Score {
		t.Fatalf("one word: %+v %v", one, err)
	}
}

// proximity counts pairs of distinct terms of the text within the window
// of one field, 1/distance² each, not across a phrasing's end, not past the
// window, and not for terms feedback added.
func TestProximityScore(t *testing.T) {
	rk := DefaultRanking
	st := stats{docs: 10}
	for f := range numFields {
		st.avgLen[f] = 10
	}
	q := []queryTerm{{term: "render", idf: 2}, {term: "cache", idf: 1}, {term: "tag", idf: 3, added: true}}
	score := func(fields map[int]string) float64 {
		var d searchDoc
		var lens [numFields]int
		for f, s := range fields {
			d[f] = strings.Fields(s)
			lens[f] = fieldLen(d[f])
		}
		return proximity(&d, q, lens, st, &rk)
	}
	// Adjacent in the body: one pair at distance 1, weighed by the
	// smaller idf and saturated as BM25 does.
	got := score(map[int]string{fieldBody: "render cache x x x x x x x x"})
	norm := 1 - rk.FieldB[fieldBody] + rk.FieldB[fieldBody]*10/float64(10*numFields)
	if want := 1 * 1 / (rk.K1*norm + 1); math.Abs(got-want) > 1e-9 {
		t.Errorf("adjacent: %v, want %v", got, want)
	}
	// At distance 2 the pair weighs a quarter.
	got2 := score(map[int]string{fieldBody: "render x cache x x x x x x x"})
	if want := 0.25 / (rk.K1*norm + 0.25); math.Abs(got2-want) > 1e-9 {
		t.Errorf("distance 2: %v, want %v", got2, want)
	}
	for name, fields := range map[string]map[int]string{
		"past the window":    {fieldBody: "render x x x x x cache x x x"},
		"across fields":      {fieldTitle: "render x x x x", fieldBody: "cache x x x x x"},
		"across a phrasing":  {fieldPhrasings: "x render " + passageBreak + " cache x x x x x x"},
		"with an added term": {fieldBody: "render tag x x x x x x x x"},
		"the same term":      {fieldBody: "render render x x x x x x x x"},
	} {
		if got := score(fields); got != 0 {
			t.Errorf("%s: %v, want 0", name, got)
		}
	}
}
