package serve

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/benchtree/benchkb"
	"github.com/kk-project/kk/internal/httpapi"
)

// BenchmarkPostCommit measures post → commit throughput with no model: b.N
// notes posted to a server over a tree of n generated notes, timed until
// the last one is committed. jobs/s is the figure docs/benchmarks.md
// records.
//
//	go test ./internal/serve -run '^$' -bench PostCommit -benchtime 200x
func BenchmarkPostCommit(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("notes=%d", n), func(b *testing.B) {
			k := newRepo(b, n)
			s := start(b, k, nil)
			benchkb.Settle()
			ctx := context.Background()
			b.ResetTimer()
			startAt := time.Now()
			var last string
			for i := range b.N {
				j, err := s.Client.Post(ctx, httpapi.PostRequest{
					Title:   fmt.Sprintf("Benchmark note %d about the release queue", i),
					Content: fmt.Sprintf("Note %d: the release worker retries a failed deploy job after a timeout.\n", i),
					Tags:    []string{"bench"},
				})
				if err != nil {
					b.Fatal(err)
				}
				last = j.JobID
			}
			if j := s.wait(b, last); j.Status != "done" {
				b.Fatalf("last job: %+v", j)
			}
			elapsed := time.Since(startAt)
			b.StopTimer()
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "jobs/s")
			b.ReportMetric(float64(s.Backend.timing.place.Milliseconds())/float64(b.N), "place-ms/job")
			b.ReportMetric(float64(s.Backend.timing.write.Milliseconds())/float64(b.N), "txn+commit-ms/job")
			b.ReportMetric(float64(s.Backend.timing.commit.Milliseconds())/float64(b.N), "commit-ms/job")
		})
	}
}
