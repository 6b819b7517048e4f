package serve

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// writeBigLeaves writes n leaves of about size bytes each under
// nodes/big/, every one matching the query "word lorem", as a person's
// editor would (the server's index finds them on its next sync).
func writeBigLeaves(t *testing.T, root string, n, size int) {
	t.Helper()
	dir := filepath.Join(root, ".ai", "kenkeep", "nodes", "big")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	line := "Lorem ipsum dolor sit amet, word consectetur adipiscing elit, sed do eiusmod tempor.\n"
	body := strings.Repeat(line, size/len(line))
	for i := range n {
		id := fmt.Sprintf("map-big-%d", i)
		leaf := fmt.Sprintf("---\ntype: map\ntitle: Big %d\ndescription: A large note about word lorem.\ntags: []\nkk_schema_version: 3\nkk_id: %s\nkk_derived_from: []\nkk_relates_to: []\nkk_depends_on: []\nkk_confidence: high\n---\n\n%s", i, id, body)
		if err := os.WriteFile(filepath.Join(dir, id+".md"), []byte(leaf), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// countDocs reads a search answer to its end without holding it, and
// counts the notes in it.
func countDocs(r io.Reader) (int, error) {
	br := bufio.NewReader(r)
	marker := []byte(`{"path":`)
	n, matched := 0, 0
	for {
		c, err := br.ReadByte()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		switch {
		case c == marker[matched]:
			matched++
			if matched == len(marker) {
				n, matched = n+1, 0
			}
		case c == marker[0]:
			matched = 1
		default:
			matched = 0
		}
	}
}

// TestConcurrentSearchMemory: many concurrent GET /search over large
// notes keep the server's heap bounded. The search engine keeps the text
// of one candidate at a time (and the best one's) while it ranks; each
// answer is written note by note (one note held at a time); and the
// searches that run at once are bounded. Before, every search held all
// its candidates' text and every answer all its notes and their JSON at
// once: 24 clients over 12 notes of 256 KB took the heap in use up by
// 130-180 MB.
func TestConcurrentSearchMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 3 MB of notes and searches them 48 times")
	}
	if raceEnabled {
		t.Skip("the race detector slows each search tenfold: the bound is measured without it")
	}
	k := newRepo(t, 0)
	const notes, size = 12, 256 << 10
	writeBigLeaves(t, k.Root, notes, size)
	s := start(t, k, nil)
	url := s.URL + "/search?query=word+lorem&limit=50"
	// The first search syncs the index with the new leaves.
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := countDocs(resp.Body); err != nil || n != notes {
		t.Fatalf("first search: %d notes, %v", n, err)
	}
	if err := resp.Body.Close(); err != nil {
		t.Fatal(err)
	}

	// A low garbage collection target keeps the heap in use close to what
	// is live, which is what is bounded.
	defer debug.SetGCPercent(debug.SetGCPercent(25))
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()

	const clients, rounds = 24, 2
	var wg sync.WaitGroup
	var mu sync.Mutex
	var problems []string
	var served atomic.Int64
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				resp, err := http.Get(url)
				if err != nil {
					mu.Lock()
					problems = append(problems, err.Error())
					mu.Unlock()
					return
				}
				n, err := countDocs(resp.Body)
				_ = resp.Body.Close()
				if resp.StatusCode == http.StatusServiceUnavailable {
					continue // the bound may turn a request away; it is not served
				}
				if resp.StatusCode != 200 || err != nil || n != notes {
					mu.Lock()
					problems = append(problems, fmt.Sprintf("status %d, %d notes, %v", resp.StatusCode, n, err))
					mu.Unlock()
					continue
				}
				served.Add(1)
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-sampled
	for _, p := range problems {
		t.Error(p)
	}
	growth := int64(peak.Load()) - int64(base)
	t.Logf("%d of %d searches served; heap in use %d MB before, peak %+d MB", served.Load(), clients*rounds, base>>20, growth>>20)
	if served.Load() < clients*rounds/2 {
		t.Errorf("only %d of %d searches were served", served.Load(), clients*rounds)
	}
	// Twenty-four answers of 3 MB held at once, with the search engine's
	// text of each, would be 200 MB and more.
	if limit := int64(48 << 20); growth > limit {
		t.Errorf("the heap in use grew by %d MB while searching; the bound is %d MB", growth>>20, limit>>20)
	}
}
