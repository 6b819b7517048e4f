package serve

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/benchtree/benchkb"
	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/jobqueue"
	"github.com/kk-project/kk/internal/store"
)

// BenchmarkPostCommit measures post → commit throughput with no model: b.N
// notes posted to a server over a tree of n generated notes, timed until
// the last one is committed. jobs/s is the figure docs/benchmarks.md
// records, with the CPU the whole process used per job and the syncs
// that walked the tree (KK_BENCH_NOWATCH=1: all of them, as kk serve
// --no-watch). With KK_BENCH_PROF=<file> it writes a CPU profile of the
// jobs alone.
//
//	go test ./internal/serve -run '^$' -bench PostCommit -benchtime 200x
func BenchmarkPostCommit(b *testing.B) {
	// As kk serve runs (unless GOGC is set).
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(GCPercent))
	}
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("notes=%d", n), func(b *testing.B) {
			k := newRepo(b, n)
			// KK_BENCH_NOWATCH=1: every job's sync walks the tree, as
			// kk serve --no-watch does.
			s := startOpts(b, context.Background(), Options{KB: k, NoWatch: os.Getenv("KK_BENCH_NOWATCH") != ""})
			benchkb.Settle()
			ctx := context.Background()
			if pf := os.Getenv("KK_BENCH_PROF"); pf != "" && b.N > 1 {
				// A CPU profile of the jobs alone, without the tree's
				// generation (-cpuprofile profiles the whole run).
				f, err := os.Create(pf)
				if err != nil {
					b.Fatal(err)
				}
				defer func() { _ = f.Close() }()
				if err := pprof.StartCPUProfile(f); err != nil {
					b.Fatal(err)
				}
				defer pprof.StopCPUProfile()
			}
			b.ResetTimer()
			startAt := time.Now()
			cpu0 := processCPU()
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
			// Until the last job's commit, as the queue recorded it: the
			// client's polling (which backs off to a second) is not the
			// server's throughput.
			lj, ok := s.Queue.Get(last)
			if !ok || lj.Finished == nil {
				b.Fatalf("last job %s has no finish time: %+v", last, lj)
			}
			elapsed := lj.Finished.Sub(startAt)
			cpu := processCPU() - cpu0
			b.StopTimer()
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "jobs/s")
			s.Backend.mu.Lock()
			tm := s.Backend.timing
			s.Backend.mu.Unlock()
			b.ReportMetric(float64(tm.place.Milliseconds())/float64(b.N), "place-ms/job")
			b.ReportMetric(float64(tm.write.Milliseconds())/float64(b.N), "txn+commit-ms/job")
			b.ReportMetric(float64(tm.commit.Milliseconds())/float64(b.N), "commit-ms/job")
			// All of the process's CPU (the walk's goroutines and system
			// calls included), and the syncs that walked the tree.
			b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/job")
			walks := b.N // unwatched: every job's sync walks
			if w := s.Backend.watch; w != nil {
				walks = 0
				for _, n := range w.Stats().All {
					walks += n
				}
			}
			b.ReportMetric(float64(walks)/float64(b.N), "walks/job")
		})
	}
}

// percentile returns the p-th percentile (0 < p < 1) of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(float64(len(sorted))*p))]
}

// BenchmarkGetContentUnderWrites measures GET /content?path= latency at
// 1,000 requests/s (paced, one request every millisecond, over four
// client connections) while a writer keeps the worker busy with posts.
// b.N requests are timed; p50 and p99 are reported.
//
//	go test ./internal/serve -run '^$' -bench GetContentUnderWrites -benchtime 5000x
//
// With KK_BENCH_URL and KK_BENCH_ROOT set it measures a kk serve running
// elsewhere (the real binary, as scripts/bench-serve.sh starts it) over
// the knowledge base at KK_BENCH_ROOT instead of one in this process.
func BenchmarkGetContentUnderWrites(b *testing.B) {
	var k *store.KB
	var s *server
	if url, root := os.Getenv("KK_BENCH_URL"), os.Getenv("KK_BENCH_ROOT"); url != "" && root != "" {
		k = store.New(root)
		s = &server{URL: url, KB: k, Client: &httpapi.Client{BaseURL: url}}
	} else {
		k = newRepo(b, 1000)
		s = start(b, k, nil)
	}
	t, err := k.ReadTree(store.LoadOptions{NoSave: true})
	if err != nil {
		b.Fatal(err)
	}
	paths := make([]string, 0, len(t.Leaves))
	for _, n := range t.Leaves {
		paths = append(paths, n.Path)
	}
	benchkb.Settle()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	writes := make(chan int, 1)
	go func() { // the writer: one job in the queue at all times
		n := 0
		defer func() { writes <- n }()
		for ctx.Err() == nil {
			j, err := s.Client.Post(ctx, httpapi.PostRequest{Title: fmt.Sprintf("Writer note %d", n), Content: fmt.Sprintf("Written while reading, %d.\n", n)})
			if err != nil {
				return
			}
			if _, err := s.Client.Wait(ctx, j.JobID, 5*time.Millisecond); err != nil {
				return
			}
			n++
		}
	}()
	lat := make([]time.Duration, b.N)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	b.ResetTimer()
	for i := range b.N {
		<-tick.C
		sem <- struct{}{}
		wg.Add(1)
		go func(i int) {
			defer func() { <-sem; wg.Done() }()
			t0 := time.Now()
			if _, err := s.Client.Get(ctx, paths[i%len(paths)]); err != nil {
				b.Error(err)
			}
			lat[i] = time.Since(t0)
		}(i)
	}
	wg.Wait()
	b.StopTimer()
	cancel()
	done := <-writes
	slices.Sort(lat)
	b.ReportMetric(float64(percentile(lat, 0.50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(percentile(lat, 0.99).Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(done), "jobs-written")
}

// BenchmarkPostQueued measures POST /content latency with 1,000 jobs
// already waiting in the queue (no worker runs, so none leaves it): the
// cost of accepting a job must not grow with the queue.
//
//	go test ./internal/serve -run '^$' -bench PostQueued -benchtime 500x
func BenchmarkPostQueued(b *testing.B) {
	k := newRepo(b, 0)
	bk := New(Options{KB: k})
	q, err := jobqueue.Open(filepath.Join(k.StateDir(), "queue"), bk.QueueOptions())
	if err != nil {
		b.Fatal(err)
	}
	srv, err := httpapi.New(httpapi.Options{Backend: bk, Queue: q})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	c := &httpapi.Client{BaseURL: ts.URL}
	ctx := context.Background()
	body := strings.Repeat("A paragraph of a queued note. ", 100)
	for i := range 1000 {
		if _, err := c.Post(ctx, httpapi.PostRequest{Content: fmt.Sprintf("%d %s", i, body)}); err != nil {
			b.Fatal(err)
		}
	}
	lat := make([]time.Duration, b.N)
	b.ResetTimer()
	for i := range b.N {
		t0 := time.Now()
		if _, err := c.Post(ctx, httpapi.PostRequest{Content: fmt.Sprintf("timed %d %s", i, body)}); err != nil {
			b.Fatal(err)
		}
		lat[i] = time.Since(t0)
	}
	b.StopTimer()
	if st := q.Stats(); st.Depth != 1000+b.N {
		b.Fatalf("queue depth %d", st.Depth)
	}
	slices.Sort(lat)
	b.ReportMetric(float64(percentile(lat, 0.50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(percentile(lat, 0.99).Microseconds())/1000, "p99-ms")
}
