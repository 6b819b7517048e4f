package workpool

import (
	"sync/atomic"
	"testing"
)

func TestRunVisitsEveryIndexOnce(t *testing.T) {
	for _, c := range []struct{ workers, n int }{{0, 0}, {1, 5}, {4, 1000}, {16, 3}, {-1, 100}} {
		seen := make([]atomic.Int32, c.n)
		Run(c.workers, c.n, func(i int) { seen[i].Add(1) })
		for i := range seen {
			if got := seen[i].Load(); got != 1 {
				t.Fatalf("workers=%d n=%d: index %d visited %d times", c.workers, c.n, i, got)
			}
		}
	}
}

func TestLimitCapsOnePerCPU(t *testing.T) {
	defer Limit(0)
	Limit(1)
	var running, most atomic.Int32
	Run(0, 50, func(int) {
		n := running.Add(1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		running.Add(-1)
	})
	if most.Load() != 1 {
		t.Errorf("%d goroutines ran at once under Limit(1)", most.Load())
	}
}
