package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/benchtree"
	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/curate"
	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/hooks/hookstest"
	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// Budgets (docs/benchmarks.md):
//
//	go test ./internal/hooks -run '^$' -bench . -benchtime 200x
//
// session-start p50 ≤ 20 ms on a 10k-node tree, staleness check included;
// capture of a 5 MB transcript ≤ 200 ms.

// benchKB generates (once) a 10k-node knowledge base with an up-to-date
// index and 25 session logs waiting for curation, and waits until its
// files are older than the racy window (store.Unchanged), as they are
// for every session but one started within two seconds of a write.
func benchKB(b *testing.B) *store.KB {
	b.Helper()
	dir := filepath.Join(os.TempDir(), "kk-hooks-bench-10000")
	k := store.New(dir)
	if _, err := os.Stat(k.EntryPath()); err != nil {
		if err := os.RemoveAll(dir); err != nil {
			b.Fatal(err)
		}
		if _, err := benchtree.Generate(dir, benchtree.Options{Nodes: 10000, Seed: 1}); err != nil {
			b.Fatal(err)
		}
		if _, err := txn.Rebuild(context.Background(), k, txn.Meta{Command: "test"}, txn.RebuildOptions{}); err != nil {
			b.Fatal(err)
		}
		for i := range 25 {
			id := fmt.Sprintf("0d9f6c2e-8f1a-4b7e-9c3d-2a1b4c5d%04d", i)
			log := "---\nschema_version: 1\nsession_id: " + id + "\ncaptured_by: stop\ncaptured_at: '2026-05-19T08:00:00.000Z'\n" +
				"transcript_hash: sha256:00\nproposal_status: pending\nproposal_completed_at: null\nproposal_error: null\n" +
				"proposal_log: null\nproposals:\n  practice: []\n  map: []\n---\n## Transcript\n\n" +
				strings.Repeat("[USER]: a long transcript line\n\n", 2000) + "## Proposal\n\n(populated by proposal worker)\n"
			if err := os.MkdirAll(k.SessionsDir(), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(k.SessionsDir(), "20260519-0800-"+id+".md"), []byte(log), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		time.Sleep(2100 * time.Millisecond)
	}
	return k
}

// reportPercentiles reports the p50 and p90 of the timed calls.
func reportPercentiles(b *testing.B, times []time.Duration) {
	slices.Sort(times)
	if len(times) == 0 {
		return
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(times[len(times)/2]), "p50-ms")
	b.ReportMetric(ms(times[len(times)*9/10]), "p90-ms")
}

// BenchmarkSessionStart10k times the whole hook call in-process: payload
// read, knowledge base lookup, ENTRY.md, the staleness check (the branch
// index's summary), the curation backlog (25 logs) and the harness output.
func BenchmarkSessionStart10k(b *testing.B) {
	k := benchKB(b)
	reg, err := harness.NewRegistry(&hookstest.Adapter{})
	if err != nil {
		b.Fatal(err)
	}
	payload := `{"session_id":"0d9f6c2e-8f1a-4b7e-9c3d-2a1b4c5d6e7f","cwd":"` + k.Root + `","hook_event_name":"SessionStart"}`
	call := func() int {
		var out bytes.Buffer
		Run(context.Background(), Invocation{Event: "session-start", Harness: hookstest.ID, Harnesses: reg,
			Stdin: strings.NewReader(payload), Stdout: &out, Stderr: io.Discard, Getenv: func(string) string { return "" }})
		return out.Len()
	}
	if sum, err := index.ReadSummary(context.Background(), k); err != nil || !sum.Known || sum.Hash == "" {
		b.Fatalf("the index holds no summary of the tree: %+v %v", sum, err)
	}
	var times []time.Duration
	for b.Loop() {
		start := time.Now()
		if call() == 0 {
			b.Fatal("no output")
		}
		times = append(times, time.Since(start))
	}
	reportPercentiles(b, times)
}

// BenchmarkSessionStart10kAfterWrite times session-start right after a
// write through kk (a new leaf, index regenerated): it reads the summary
// the write's index update recorded, as in steady state.
func BenchmarkSessionStart10kAfterWrite(b *testing.B) {
	k := benchKB(b)
	r := Request{KB: k, Adapter: &hookstest.Adapter{}, Now: time.Now()}
	var times []time.Duration
	i := 0
	for b.Loop() {
		b.StopTimer()
		i++
		in := contracts.NodeInput{Type: "practice", Title: fmt.Sprintf("Bench write %d %d", time.Now().UnixNano(), i), Description: "d", Body: "b", Folder: "bench-writes"}
		if _, err := curate.WriteNode(context.Background(), k, in, curate.WriteOptions{Command: "bench"}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		if _, err := SessionStart(context.Background(), r); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(start))
	}
	b.StopTimer()
	if err := os.RemoveAll(filepath.Join(k.NodesDir(), "bench-writes")); err != nil {
		b.Fatal(err)
	}
	if _, err := txn.Rebuild(context.Background(), k, txn.Meta{Command: "bench"}, txn.RebuildOptions{}); err != nil {
		b.Fatal(err)
	}
	reportPercentiles(b, times)
}

// benchTranscript writes a fake-harness transcript of about size bytes:
// alternating user and agent turns of a few kilobytes, and reads.
func benchTranscript(b *testing.B, path string, size int, variant string) {
	b.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	para := strings.Repeat("The retry budget is shared by every call in the request; see config/retry.yaml. ", 30)
	for i := 0; buf.Len() < size; i++ {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		if err := enc.Encode(map[string]string{"role": role, "text": "turn " + strconv.Itoa(i) + " " + variant + " " + para}); err != nil {
			b.Fatal(err)
		}
		if i%10 == 0 {
			if err := enc.Encode(map[string]string{"tool": "Read", "path": ".ai/kenkeep/nodes/index.md"}); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkCapture5MB times a capture of a 5 MB transcript: parse, render,
// hash, write the session log, reconcile the usage ledger. Two transcripts
// alternate so that every call rewrites the log.
func BenchmarkCapture5MB(b *testing.B) {
	dir := b.TempDir()
	k := store.New(dir)
	if _, err := txn.Init(context.Background(), k, store.InitOptions{Version: "bench", Now: t0, Command: "bench"}); err != nil {
		b.Fatal(err)
	}
	paths := []string{filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")}
	benchTranscript(b, paths[0], 5<<20, "a")
	benchTranscript(b, paths[1], 5<<20, "b")
	var times []time.Duration
	i := 0
	for b.Loop() {
		r := Request{KB: k, Adapter: &hookstest.Adapter{}, Now: t0, Input: harness.HookInput{
			SessionID: "0d9f6c2e-8f1a-4b7e-9c3d-2a1b4c5d6e7f", TranscriptPath: paths[i%2], HarnessEvent: "Stop", CWD: dir}}
		i++
		start := time.Now()
		res, err := Capture(context.Background(), r)
		if err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(start))
		if res.Action == "empty" || res.Action == "unchanged" {
			b.Fatalf("capture did nothing: %+v", res)
		}
	}
	reportPercentiles(b, times)
}

// BenchmarkPromptContext10k times the prompt-context hook in-process on a
// 10k-node tree whose index is current (steady state): payload read, the
// index sync (a stat per leaf), the search and the harness output. The
// prompts alternate between one the tree answers and one it does not.
//
//	go test ./internal/hooks -run '^$' -bench PromptContext -benchtime 100x
func BenchmarkPromptContext10k(b *testing.B) {
	benchPromptContext(b, false)
}

// BenchmarkPromptContext10kAfterWrite is the same right after a leaf was
// rewritten: the sync re-reads it and updates the index first.
func BenchmarkPromptContext10kAfterWrite(b *testing.B) {
	benchPromptContext(b, true)
}

func benchPromptContext(b *testing.B, write bool) {
	k := benchKB(b)
	reg, err := harness.NewRegistry(&hookstest.Adapter{})
	if err != nil {
		b.Fatal(err)
	}
	prompts := []string{"what is the retry timeout for the queue handler?", "how should I invalidate the api cache?"}
	call := func(prompt string) int {
		payload, _ := json.Marshal(map[string]string{"session_id": "0d9f6c2e-8f1a-4b7e-9c3d-2a1b4c5d6e7f", "cwd": k.Root,
			"hook_event_name": "UserPromptSubmit", "prompt": prompt})
		var out, errs bytes.Buffer
		Run(context.Background(), Invocation{Event: "prompt-context", Harness: hookstest.ID, Harnesses: reg,
			Stdin: bytes.NewReader(payload), Stdout: &out, Stderr: &errs, Getenv: func(string) string { return "" }})
		if errs.Len() > 0 {
			b.Fatalf("hook problem: %s", errs.String())
		}
		return out.Len()
	}
	branch, err := index.CurrentBranch(context.Background(), k)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := index.Sync(context.Background(), k, branch); err != nil { // build the index
		b.Fatal(err)
	}
	if call(prompts[0]) == 0 {
		b.Fatal("no output for a prompt the tree answers")
	}
	leaf := ""
	if err := filepath.WalkDir(k.NodesDir(), func(p string, d os.DirEntry, err error) error {
		if leaf == "" && err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") && d.Name() != "index.md" {
			leaf = p
		}
		return err
	}); err != nil {
		b.Fatal(err)
	}
	src, err := os.ReadFile(leaf)
	if err != nil {
		b.Fatal(err)
	}
	var times []time.Duration
	i := 0
	for b.Loop() {
		if write {
			b.StopTimer()
			if err := os.WriteFile(leaf, append(src, fmt.Sprintf("\nEdit %d.\n", i)...), 0o644); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		start := time.Now()
		n := call(prompts[i%2])
		times = append(times, time.Since(start))
		if (n == 0) != (i%2 == 1) {
			b.Fatalf("prompt %q: %d bytes of output", prompts[i%2], n)
		}
		i++
	}
	reportPercentiles(b, times)
}

// manyLogsKB generates (once) a knowledge base holding n session logs, as
// a project that has captured and curated for a long time has: all but
// the newest five curated, so the backlog (5) stays under the curation
// threshold (20) and session-start never nudges.
func manyLogsKB(b *testing.B, n int) *store.KB {
	b.Helper()
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("kk-hooks-bench-logs-%d", n))
	k := store.New(dir)
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		return k
	}
	if err := os.RemoveAll(dir); err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	if _, err := txn.Init(context.Background(), k, store.InitOptions{Version: "bench", Now: t0, Command: "bench"}); err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(k.SessionsDir(), 0o755); err != nil {
		b.Fatal(err)
	}
	for i := range n {
		id := fmt.Sprintf("0d9f6c2e-8f1a-4b7e-9c3d-%012d", i)
		curated := "curator_processed_at: '2026-05-19T09:00:00.000Z'\ncurator_run_id: run-1\n"
		if i >= n-5 {
			curated = ""
		}
		log := "---\nschema_version: 1\nsession_id: " + id + "\ncaptured_by: stop\ncaptured_at: '2026-05-19T08:00:00.000Z'\n" +
			"transcript_hash: sha256:00\nproposal_status: done\nproposal_completed_at: '2026-05-19T08:10:00.000Z'\nproposal_error: null\n" +
			"proposal_log: null\nproposals:\n  practice: []\n  map: []\n" + curated + "---\n## Transcript\n\n" +
			strings.Repeat("[USER]: a transcript line\n\n", 40) + "## Proposal\n\n(populated by proposal worker)\n"
		stamp := t0.Add(time.Duration(i) * time.Minute).Format("20060102-1504")
		if err := os.WriteFile(filepath.Join(k.SessionsDir(), stamp+"-"+id+".md"), []byte(log), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ".complete"), nil, 0o644); err != nil {
		b.Fatal(err)
	}
	return k
}

// BenchmarkSessionStart10kLogs times session-start in-process in a
// knowledge base with 10,000 session logs, 5 of them waiting for
// curation (docs/benchmarks.md, "session-start and the session logs"):
// "counted", no nudge given within the hour, so the backlog is counted;
// "nudged", a nudge given 10 minutes before.
//
//	go test ./internal/hooks -run '^$' -bench SessionStart10kLogs -benchtime 50x
func BenchmarkSessionStart10kLogs(b *testing.B) {
	k := manyLogsKB(b, 10000)
	for _, c := range []struct {
		name  string
		state string
	}{
		{"counted", `{}`},
		{"nudged", `{"last_nudged_at": "` + t0.Add(-10*time.Minute).Format("2006-01-02T15:04:05.000Z") + `"}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			if err := os.WriteFile(statePath(k), []byte(c.state), 0o644); err != nil {
				b.Fatal(err)
			}
			r := Request{KB: k, Adapter: &hookstest.Adapter{}, Now: t0, Input: harness.HookInput{SessionID: sid, CWD: k.Root}}
			var times []time.Duration
			for b.Loop() {
				start := time.Now()
				out, err := SessionStart(context.Background(), r)
				if err != nil || len(out) == 0 {
					b.Fatalf("%q %v", out, err)
				}
				times = append(times, time.Since(start))
			}
			reportPercentiles(b, times)
		})
	}
}
