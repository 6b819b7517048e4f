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
