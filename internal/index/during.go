package index

import "context"

// SearchDuring runs the search r while sync brings the index up to date,
// the two at once: a search reads the index as last committed and never
// waits for the writer, so a sync that changed nothing and found the
// index at the generation it was at before the search (the usual case:
// the tree as the index recorded it) leaves the first answer standing.
// One that changed the index, or found it at another generation (another
// handle or process synced in between, which the search may not have
// seen), is followed by a second search, which sees it. The sync's stats
// are returned with the hits; an error of either comes back after both
// have ended.
func (db *DB) SearchDuring(ctx context.Context, r Request, sync func(context.Context) (Stats, error)) ([]Hit, Stats, error) {
	before, gerr := db.Meta(ctx, "stat_gen")
	type synced struct {
		st  Stats
		err error
	}
	done := make(chan synced, 1)
	go func() {
		st, err := sync(ctx)
		done <- synced{st, err}
	}()
	hits, err := db.Search(ctx, r)
	s := <-done
	if s.err != nil {
		return nil, s.st, s.err
	}
	if err != nil {
		return nil, s.st, err
	}
	if s.st.Changed() || gerr != nil || s.st.Gen == "" || s.st.Gen != before {
		hits, err = db.Search(ctx, r)
	}
	return hits, s.st, err
}
