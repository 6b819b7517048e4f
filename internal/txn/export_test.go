package txn

import "github.com/kk-project/kk/internal/store"

// CountNodesResolutions counts, until the returned function is called,
// how often a transaction resolves the links of the folder nodes (the
// symlink guard's root), and reports the count.
func CountNodesResolutions(nodes string) (stop func() int) {
	n := 0
	prev := evalSymlinks
	evalSymlinks = func(p string) (string, error) {
		if p == nodes {
			n++
		}
		return prev(p)
	}
	return func() int {
		evalSymlinks = prev
		return n
	}
}

// errStopped stops RecoverStoppedAt's recovery, as a kill would.
type errStopped struct{}

// RecoverStoppedAt runs a writer's recovery of what killed writers left
// (recoverLocked) under k's writer lock, and stops it at point (see
// recoverAt) as a kill there would, nothing after it done.
func RecoverStoppedAt(k *store.KB, point string) (err error) {
	l, err := k.WriterLock().TryAcquire("test")
	if err != nil {
		return err
	}
	defer func() { _ = l.Release() }()
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(errStopped); !ok {
				panic(r)
			}
		}
	}()
	return recoverAt(k, false, func(p string) {
		if p == point {
			panic(errStopped{})
		}
	})
}
