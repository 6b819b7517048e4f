package index

import (
	"context"
	"errors"
	"testing"
)

// A search run while the sync looks at the tree answers from the index as
// last committed when the sync changes nothing, and searches again when
// it does: a leaf added by hand is found by the same call, and a sync's
// error is the call's.
func TestSearchDuringASync(t *testing.T) {
	ctx := context.Background()
	k := seedKB(t)
	writeLeaf(t, k, "roads/practice-zebra-herd.md", leaf("practice-zebra-herd", "Zebra herd", "Animals", nil, "", "A herd of zebra grazing."))
	db, _, err := Open(ctx, k, "main")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	syncs := 0
	sync := func(ctx context.Context) (Stats, error) {
		syncs++
		return db.SyncWith(ctx, k.NodesDir(), nil)
	}
	r := Request{Text: "zebra crossing", Limit: 10}
	hits, st, err := db.SearchDuring(ctx, r, sync)
	if err != nil || st.Changed() || syncs != 1 {
		t.Fatalf("SearchDuring over an unchanged tree: changed %v, %d syncs, %v", st.Changed(), syncs, err)
	}
	if got := ids(hits); len(got) != 1 || got[0] != "practice-zebra-herd" {
		t.Fatalf("hits %v; want practice-zebra-herd", got)
	}

	writeLeaf(t, k, "roads/practice-zebra-crossing.md", leaf("practice-zebra-crossing", "Zebra crossing", "Where pedestrians cross", nil, "", "Zebra crossings are painted stripes."))
	hits, st, err = db.SearchDuring(ctx, r, sync)
	if err != nil || st.Added != 1 {
		t.Fatalf("SearchDuring after a leaf was added by hand: added %d, %v", st.Added, err)
	}
	if got := ids(hits); len(got) == 0 || got[0] != "practice-zebra-crossing" {
		t.Fatalf("hits %v; want practice-zebra-crossing first (added before the call)", got)
	}

	failed := errors.New("the tree cannot be read")
	if _, _, err := db.SearchDuring(ctx, r, func(context.Context) (Stats, error) { return Stats{}, failed }); !errors.Is(err, failed) {
		t.Fatalf("SearchDuring with a failing sync: %v; want its error", err)
	}
}
