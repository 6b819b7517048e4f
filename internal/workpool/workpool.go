// Package workpool runs a loop body on several goroutines.
package workpool

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// limit, when above 0, caps the goroutines of a Run asked for one per CPU.
// It is process-wide on purpose, like GOMAXPROCS, which it narrows: it is
// the CPU budget of the whole process (kk serve sets it once at start so
// that requests keep a CPU), not a setting of one call.
var limit atomic.Int64

// Limit caps at n the goroutines Run starts when asked for one per CPU
// (n < 1 lifts the cap): a server keeps a CPU free for its requests while
// its worker writes.
func Limit(n int) { limit.Store(int64(n)) }

// Run calls fn(i) for every i in [0, n) on up to workers goroutines and
// returns when all calls have returned. workers < 1 means one per CPU (at
// most Limit's).
func Run(workers, n int, fn func(i int)) {
	if workers < 1 {
		workers = runtime.GOMAXPROCS(0)
		if l := int(limit.Load()); l > 0 {
			workers = min(workers, l)
		}
	}
	workers = min(workers, n)
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(i)
			}
		}()
	}
	wg.Wait()
}
