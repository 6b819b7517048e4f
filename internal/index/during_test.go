package index

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/kk-project/kk/internal/store"
)

// A search run while the sync looks at the tree answers from the index as
// last committed when the sync changes nothing, and searches again when
// it does: a leaf added by hand is found by the same call, and a sync's
// error is the call's.
func TestSearchDuringASync(t *testing.T) {
	ctx := context.Background()
	k, db := zebraHerd(t)
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

// Another writer (a second handle, another process) may sync a change
// after the search read the index and before this call's sync looks: the
// sync then finds the tree as the index records it and changes nothing,
// but the search's answer is older than the index. The call searches
// again: the leaf added by hand is found.
func TestSearchDuringAnotherWritersSync(t *testing.T) {
	ctx := context.Background()
	k, db := zebraHerd(t)
	other, _, err := Open(ctx, k, "main")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = other.Close() }()
	read := make(chan struct{})
	var once sync.Once
	r := Request{Text: "zebra crossing", Limit: 10, Early: func([]Hit) { once.Do(func() { close(read) }) }}
	hits, st, err := db.SearchDuring(ctx, r, func(ctx context.Context) (Stats, error) {
		<-read // the search has its candidates: the leaf comes after
		writeLeaf(t, k, "roads/practice-zebra-crossing.md", leaf("practice-zebra-crossing", "Zebra crossing", "Where pedestrians cross", nil, "", "Zebra crossings are painted stripes."))
		if st, err := other.SyncWith(ctx, k.NodesDir(), nil); err != nil || st.Added != 1 {
			t.Errorf("the other writer's sync: added %d, %v", st.Added, err)
		}
		return db.SyncWith(ctx, k.NodesDir(), nil)
	})
	if err != nil || st.Changed() {
		t.Fatalf("SearchDuring: changed %v, %v; want a sync that found nothing to change", st.Changed(), err)
	}
	if got := ids(hits); len(got) == 0 || got[0] != "practice-zebra-crossing" {
		t.Fatalf("hits %v; want practice-zebra-crossing first (synced by the other writer before this call's sync)", got)
	}
}

// zebraHerd returns a knowledge base of one leaf, the zebra herd, and its
// index, closed when the test ends.
func zebraHerd(t *testing.T) (*store.KB, *DB) {
	t.Helper()
	k := seedKB(t)
	writeLeaf(t, k, "roads/practice-zebra-herd.md", leaf("practice-zebra-herd", "Zebra herd", "Animals", nil, "", "A herd of zebra grazing."))
	db, _, err := Open(context.Background(), k, "main")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return k, db
}
