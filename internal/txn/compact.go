package txn

import (
	"context"
	"time"

	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/store"
)

// CompactResult is what Compact did.
type CompactResult struct {
	Branch string
	// Before and After are the index file's size in bytes.
	Before, After int64
	// AuditRotatedTo is where the audit log went ("" when it was empty).
	AuditRotatedTo string
}

// Compact shrinks the index file of branch (index.Compact) and moves the
// branch's audit log aside (index.RotateAudit), both under the writer
// lock, so that no changeset syncs the index or appends its record while
// they move.
func Compact(ctx context.Context, k *store.KB, branch string, now time.Time) (CompactResult, error) {
	res := CompactResult{Branch: branch}
	err := Locked(ctx, k, "kk compact", 0, func() error {
		var err error
		if res.Before, res.After, err = index.Compact(ctx, k, branch); err != nil {
			return err
		}
		res.AuditRotatedTo, err = index.RotateAudit(k, branch, now)
		return err
	})
	return res, err
}
