package index

import (
	"context"
	"errors"
	"os"
	"sync"
	"time"

	"github.com/kk-project/kk/internal/store"
)

// handles are the index handles a long-running process (kk mcp, kk serve)
// keeps open across requests, by database path, owned by the knowledge
// base value (store.Memo) and closed by its Close.
type handles struct {
	sync.Mutex
	dbs map[string]*DB
}

type handlesKey struct{}

func (h *handles) Close() error {
	h.Lock()
	defer h.Unlock()
	var errs []error
	for path, db := range h.dbs {
		db.shared = false
		errs = append(errs, db.Close())
		delete(h.dbs, path)
	}
	return errors.Join(errs...)
}

// OpenShared returns k's handle to a branch's index, opening it on first
// use (copying the default branch's index when the branch has none yet),
// without syncing it. The handle stays open as long as k (until k.Close)
// and is shared by every caller: Close does nothing on it. Use it where a
// request must not pay for opening the database; sync with
// SyncWith(ctx, k.NodesDir(), ExtractionFor(k)) before reading.
func OpenShared(ctx context.Context, k *store.KB, branch string) (*DB, error) {
	return OpenSharedWith(ctx, k, branch, k.LoadConfig)
}

// OpenSharedWith is OpenShared reading config.yaml through config (the
// default branch, the embedding provider) when the handle is opened: a
// transaction passes its one reading (txn.Tx.Config).
func OpenSharedWith(ctx context.Context, k *store.KB, branch string, config func() (store.Config, error)) (*DB, error) {
	path := Path(k, branch)
	h := store.Memo(k, handlesKey{}, func() *handles { return &handles{dbs: map[string]*DB{}} })
	h.Lock()
	defer h.Unlock()
	var src ChangeSource
	if db, ok := h.dbs[path]; ok {
		if _, err := os.Stat(db.Path); err == nil {
			return db, nil
		}
		// The file was removed (kk gc, or by hand): open it anew. Its
		// change source goes to the new handle, whose first sync walks.
		src = db.changeSource()
		db.shared = false
		_ = db.Close()
		delete(h.dbs, path)
	}
	db, err := openBranch(ctx, k, branch, path, config)
	if err != nil {
		return nil, err
	}
	db.kb = k
	cfg, err := config()
	if err == nil {
		err = db.useConfiguredEmbedder(cfg)
	}
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	db.shared = true
	if src != nil {
		db.Watch(src)
	}
	h.dbs[path] = db
	return db, nil
}

// SyncRecent is SyncWith for a long-running process: when this handle
// checked the tree's files less than within ago and no other process has
// written the index since (its generation is the one that check left),
// the files are not stat'ed again and the last result is returned. Changes
// made through kk, in this process or another, are therefore seen at once;
// a leaf edited by hand is seen within that time.
func (db *DB) SyncRecent(ctx context.Context, nodesDir string, ex *Extraction, within time.Duration) (Stats, error) {
	db.recent.Lock()
	last, at := db.recent.st, db.recent.at
	db.recent.Unlock()
	if !at.IsZero() && time.Since(at) < within && last.Gen != "" {
		if gen, err := db.Meta(ctx, "stat_gen"); err == nil && gen == last.Gen {
			return last, nil
		}
	}
	st, err := db.SyncWith(ctx, nodesDir, ex)
	if err != nil {
		return st, err
	}
	db.recent.Lock()
	db.recent.st, db.recent.at = st, time.Now()
	db.recent.Unlock()
	return st, nil
}
