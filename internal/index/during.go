package index

import "context"

// SearchDuring runs the search r while sync brings the index up to date,
// the two at once: a search reads the index as last committed and never
// waits for the writer, so a sync that changed nothing (the usual case:
// the tree as the index recorded it) leaves the first answer standing, and
// one that changed the index is followed by a second search, which sees
// what it wrote. The sync's stats are returned with the hits; an error of
// either comes back after both have ended.
func (db *DB) SearchDuring(ctx context.Context, r Request, sync func(context.Context) (Stats, error)) ([]Hit, Stats, error) {
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
	if s.st.Changed() {
		hits, err = db.Search(ctx, r)
	}
	return hits, s.st, err
}
