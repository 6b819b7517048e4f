package index

import (
	"context"
	"database/sql"
	"strconv"
	"time"
)

// The cost of a sync that finds nothing to do is a stat of every leaf and
// a comparison with the leaf state: it grows with the tree (about 40 ms at
// 10,000 leaves, a second at 100,000 on a slow VM). The index records what
// its last look at the tree cost, so that a caller with a budget (the
// prompt-context hook) can tell before starting one whether it can finish
// in time, instead of spending the budget on a walk it will have to stop.
//
//	walk_ns      the wall time, in nanoseconds, of the last measured walk:
//	             listing and stat'ing the leaves, reading the leaf state
//	             and comparing the two (not reading changed leaves, not
//	             writing rows, not waiting for the write lock)
//	walk_leaves  the leaves that walk found
//
// A sync that writes records its walk in its own transaction. A sync that
// finds nothing to do writes nothing, except when its walk cost a fifth
// less than recorded, or twice as much (the machine or its load changed):
// it then records it, if it can take the write lock without waiting. Load
// only ever slows a walk, so a faster walk is trusted sooner than a slower
// one; a record made under load is corrected by the next quiet sync on a
// quieter machine (the background sync the prompt-context hook starts
// when it skips its own, at most a minute later).

// walkFaster and walkSlower bound, as fractions of the recorded walk, the
// walks a quiet sync does not record: from 4/5 of it to twice it.
const (
	walkFaster = 0.8
	walkSlower = 2.0
)

// walkCost is one measured walk.
type walkCost struct {
	d      time.Duration
	leaves int
}

func (c walkCost) String() string { return strconv.FormatInt(int64(c.d), 10) }

// setWalk records c in the writer's transaction.
func (w *writer) setWalk(c walkCost) {
	w.setMeta("walk_ns", c.String())
	w.setMeta("walk_leaves", strconv.Itoa(c.leaves))
}

// recordedWalk reads the recorded walk; ok is false when none is.
func recordedWalk(ctx context.Context, q *sql.DB) (c walkCost, leaves int, ok bool) {
	rows, err := q.QueryContext(ctx, `SELECT key, value FROM meta WHERE key IN ('walk_ns', 'walk_leaves', 'leaves')`)
	if err != nil {
		return walkCost{}, 0, false
	}
	defer rows.Close()
	m := map[string]string{}
	for rows.Next() {
		var k, v string
		if rows.Scan(&k, &v) != nil {
			return walkCost{}, 0, false
		}
		m[k] = v
	}
	if rows.Err() != nil {
		return walkCost{}, 0, false
	}
	ns, err1 := strconv.ParseInt(m["walk_ns"], 10, 64)
	wl, err2 := strconv.Atoi(m["walk_leaves"])
	n, err3 := strconv.Atoi(m["leaves"])
	if err1 != nil || err2 != nil || err3 != nil || ns <= 0 || wl < 0 || n < 0 {
		return walkCost{}, 0, false
	}
	return walkCost{d: time.Duration(ns), leaves: wl}, n, true
}

// ExpectedSync returns how long a sync of this index that finds nothing to
// do is expected to take, from the last walk the index recorded, scaled to
// the leaves it holds now (writes through kk change their number without a
// walk); ok is false when no walk was recorded yet (a new or older index).
func (db *DB) ExpectedSync(ctx context.Context) (d time.Duration, ok bool) {
	c, leaves, ok := recordedWalk(ctx, db.r)
	if !ok {
		return 0, false
	}
	return c.scaled(leaves), true
}

// scaled is the walk's cost for a tree of n leaves.
func (c walkCost) scaled(n int) time.Duration {
	if c.leaves == 0 || n == c.leaves {
		return c.d
	}
	return time.Duration(float64(c.d) * float64(n) / float64(c.leaves))
}

// noteQuietWalk records the walk of a sync that found nothing to do, when
// it is below walkFaster or above walkSlower times the recorded one (or
// none is recorded). It never waits, for another process or for this one: it
// writes through a connection of its own that gives up at once when
// another writer holds the lock, and the walk then goes unrecorded this
// time.
func (db *DB) noteQuietWalk(ctx context.Context, c walkCost) {
	old, _, ok := recordedWalk(ctx, db.r)
	if want := float64(old.scaled(c.leaves)); ok && float64(c.d) >= walkFaster*want && float64(c.d) < walkSlower*want {
		return
	}
	conn, err := sql.Open("sqlite", "file:"+uriPath(db.Path)+"?_pragma=busy_timeout(0)")
	if err != nil {
		return
	}
	defer func() { _ = conn.Close() }()
	_, _ = conn.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES ('walk_ns', ?), ('walk_leaves', ?)
		ON CONFLICT(key) DO UPDATE SET value = excluded.value`, c.String(), strconv.Itoa(c.leaves))
}
