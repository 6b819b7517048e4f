package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kk-project/kk/internal/benchtree"
	"github.com/kk-project/kk/internal/store"
)

// The benchmarks call the tools through an in-process client, as a client
// sees them (JSON-RPC, schema validation, the core operation), on a tree
// of 10k leaves of which 5k are atoms holding 1–20 patterns each, and
// report the median call besides the mean:
//
//	go test ./internal/mcpserver -run '^$' -bench . -benchtime 20x

var (
	benchOnce sync.Once
	benchTree *store.KB
	benchErr  error
)

func benchKB(b *testing.B) *store.KB {
	b.Helper()
	benchOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kk-mcp-bench-")
		if err != nil {
			benchErr = err
			return
		}
		benchCleanup = func() { _ = os.RemoveAll(dir) }
		benchTree, benchErr = benchtree.Generate(dir, benchtree.Options{Nodes: 10000, Seed: 1, Atoms: 5000, Molecules: 200})
		if benchErr == nil {
			benchErr = benchtree.Age(benchTree)
		}
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchTree
}

// benchCleanup removes the shared tree; TestMain calls it.
var benchCleanup = func() {}

// timeCalls runs fn b.N times and reports the median duration in ms.
func timeCalls(b *testing.B, fn func()) {
	b.Helper()
	fn() // warm caches (leaf cache, index) as a long-running server has them
	var times []time.Duration
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		fn()
		times = append(times, time.Since(start))
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
}

func benchCall(b *testing.B, cs *mcp.ClientSession, name string, args map[string]any) {
	env := callRaw(cs, name, args)
	if env["success"] != true {
		b.Fatalf("%s: %v", name, env)
	}
}

func someAtom(b *testing.B, cs *mcp.ClientSession) string {
	env := callRaw(cs, "query_graph", map[string]any{"operation": "search", "entityType": "atom", "limit": 1, "includeChangelog": false})
	d, _ := env["data"].(map[string]any)
	atoms, _ := d["atoms"].([]any)
	if len(atoms) == 0 {
		b.Fatalf("no atom: %v", env)
	}
	return atoms[0].(map[string]any)["id"].(string)
}

func BenchmarkKKRead10k(b *testing.B) {
	cs := connect(b, benchKB(b))
	id := someAtom(b, cs)
	timeCalls(b, func() { benchCall(b, cs, "kk_read", map[string]any{"id": id}) })
}

func BenchmarkQueryGraphGet10k(b *testing.B) {
	cs := connect(b, benchKB(b))
	id := someAtom(b, cs)
	timeCalls(b, func() {
		benchCall(b, cs, "query_graph", map[string]any{"operation": "get", "entityType": "atom", "id": id})
	})
}

func BenchmarkQueryGraphContext100Paths10k(b *testing.B) {
	cs := connect(b, benchKB(b))
	rng := rand.New(rand.NewPCG(1, 2))
	paths := make([]string, 100)
	for i := range paths {
		paths[i] = benchtree.RepoPath(rng, 5000)
	}
	timeCalls(b, func() { benchCall(b, cs, "query_graph", map[string]any{"operation": "context", "paths": paths}) })
}

// BenchmarkStartToToolsList10k starts the kk binary and times until its
// first tools/list answer (stopping the server is not timed).
func BenchmarkStartToToolsList10k(b *testing.B) {
	needBinary(b)
	k := benchKB(b)
	var times []time.Duration
	for b.Loop() {
		start := time.Now()
		cmd := exec.Command(kkBin, "--root", k.Root, "mcp")
		cmd.Env = append(os.Environ(), "KK_ROOT=")
		c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := cs.ListTools(context.Background(), nil); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(start))
		b.StopTimer()
		if err := cs.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
}

// BenchmarkContextOverStdio10k times query_graph context for 100 paths as
// the server answers it over stdio: from writing the request line to the
// kk mcp process until its whole answer line is read, without decoding it
// (what a client then spends parsing 300 KB of JSON is the client's).
func BenchmarkContextOverStdio10k(b *testing.B) {
	needBinary(b)
	k := benchKB(b)
	rng := rand.New(rand.NewPCG(1, 2))
	paths := make([]string, 100)
	for i := range paths {
		paths[i] = benchtree.RepoPath(rng, 5000)
	}
	args, err := json.Marshal(map[string]any{"operation": "context", "paths": paths})
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(kkBin, "--root", k.Root, "mcp")
	cmd.Env = append(os.Environ(), "KK_ROOT=")
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = in.Close(); _ = cmd.Wait() }()
	r := bufio.NewReaderSize(out, 1<<20)
	id := 0
	call := func(method, params string) []byte {
		id++
		fmt.Fprintf(in, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params)
		line, err := r.ReadBytes('\n')
		if err != nil {
			b.Fatal(err)
		}
		return line
	}
	call("initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}`)
	fmt.Fprintln(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	params := fmt.Sprintf(`{"name":"query_graph","arguments":%s}`, args)
	if line := call("tools/call", params); !bytes.Contains(line, []byte(`\"success\":true`)) {
		b.Fatalf("context failed: %.300s", line)
	}
	timeCalls(b, func() { call("tools/call", params) })
}
