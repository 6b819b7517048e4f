package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/harnesses/claude"
	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/session"
)

func TestCaptureRefusesWhatIsNotAFile(t *testing.T) {
	k := newKB(t)
	paths := map[string]string{"folder": k.Root}
	if runtime.GOOS != "windows" {
		paths["/dev/zero"] = "/dev/zero"
		paths["fifo"] = mkfifo(t) // opening it for reading would wait for a writer forever
	}
	for name, p := range paths {
		t.Run(name, func(t *testing.T) {
			r, _ := request(k, harness.HookInput{SessionID: sid, TranscriptPath: p})
			_, err := Capture(context.Background(), r)
			if !errors.Is(err, harness.ErrNotRegular) {
				t.Fatalf("capture of %s: %v, want %v", p, err, harness.ErrNotRegular)
			}
		})
	}
}

// hugeTranscript writes a sparse file of size bytes of NULs followed by
// tail, and returns its path.
func hugeTranscript(t *testing.T, size int64, tail string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "huge.jsonl")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte(tail), size); err != nil {
		t.Fatal(err)
	}
	return p
}

// claudeTurns is a Claude Code transcript of n exchanges, numbered.
func claudeTurns(n int) string {
	var b strings.Builder
	for i := range n {
		u, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": fmt.Sprintf("question %d about the retry budget", i)}})
		a, _ := json.Marshal(map[string]any{"type": "assistant", "message": map[string]any{"role": "assistant",
			"content": []any{map[string]any{"type": "text", "text": fmt.Sprintf("answer %d: the budget is spent per request", i)}}}})
		b.WriteString("\n" + string(u) + "\n" + string(a))
	}
	return b.String() + "\n"
}

func TestCaptureKeepsTheNewestTurnsOfAHugeTranscript(t *testing.T) {
	k := newKB(t)
	p := hugeTranscript(t, 1<<30, claudeTurns(50))
	r, _ := request(k, harness.HookInput{HarnessEvent: "Stop", SessionID: sid, TranscriptPath: p})
	r.Adapter = claude.New()
	res, err := Capture(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != session.StatusPending {
		t.Errorf("status %s: a session too long to read whole is never cursory", res.Status)
	}
	log := readFile(t, filepath.Join(k.Root, res.Path))
	mustContain(t, log, "[kk: the start of this session was not captured: its transcript is longer than kk reads (1024 MiB",
		"[USER]: question 0 about", "[AGENT]: answer 49: the budget")
}

func TestNewestTurns(t *testing.T) {
	turns := []harness.Turn{{Role: harness.User, Text: "aaaa"}, {Role: harness.Agent, Text: "bbbb"}, {Role: harness.User, Text: "cccccccc"}}
	for _, tt := range []struct {
		max, kept, dropped int
	}{{100, 3, 0}, {12, 2, 1}, {11, 1, 2}, {3, 1, 2}} {
		got, dropped := newestTurns(turns, tt.max)
		if len(got) != tt.kept || dropped != tt.dropped || got[len(got)-1].Text != "cccccccc" {
			t.Errorf("newestTurns(max %d) kept %d dropped %d, want %d and %d", tt.max, len(got), dropped, tt.kept, tt.dropped)
		}
	}
}

func TestCaptureStripsKKContextFromUserTurns(t *testing.T) {
	k := newKB(t)
	addNode(t, k, contracts.NodeInput{Type: "practice", Title: "Retry budget", Description: "Retries share one budget per request.", Body: "b"}, false)
	r, _ := request(k, harness.HookInput{})
	ctxText, err := SessionStartContext(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	p := transcript(t, k.Root, "user", ctxText, "user", ctxText+"\n\nhello", "assistant", "Hi.")
	r, _ = request(k, harness.HookInput{SessionID: sid, TranscriptPath: p})
	res, err := Capture(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	log := readFile(t, filepath.Join(k.Root, res.Path))
	mustContain(t, log, "## Transcript\n\n[USER]: hello\n\n[AGENT]: Hi.\n")
	if res.Status != session.StatusSkipped {
		t.Errorf("status %s: a hello under kk's context is cursory", res.Status)
	}
}

// memoryChildEnv names the transcript the child process of
// TestCaptureMemory captures.
const memoryChildEnv = "KK_TEST_CAPTURE_MEMORY"

// TestCaptureMemory runs `kk hook capture` (through Run, in a process of
// its own) on 1 GiB transcripts and checks its peak memory: under 100 MB
// whatever the file holds.
func TestCaptureMemory(t *testing.T) {
	if p := os.Getenv(memoryChildEnv); p != "" {
		captureChild(t, p)
		return
	}
	if runtime.GOOS != "linux" {
		t.Skip("peak memory is read from Linux's rusage")
	}
	if testing.Short() {
		t.Skip("writes two 1 GiB sparse files")
	}
	for _, tc := range []struct {
		name, tail string
		want       string // in the session log; "" for an error logged
	}{
		{"no newline", "", ""},
		{"turns at the end", claudeTurns(20), "[AGENT]: answer 19"},
		{"20 MB of turns at the end", claudeTurns(150000), "[AGENT]: answer 149999"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newKB(t)
			p := hugeTranscript(t, 1<<30, tc.tail)
			cmd := exec.Command(os.Args[0], "-test.run=^TestCaptureMemory$", "-test.count=1")
			cmd.Env = append(os.Environ(), memoryChildEnv+"="+p, "KK_TEST_ROOT="+k.Root)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("child: %v\n%s", err, out)
			}
			rss := peakRSS(t, out)
			t.Logf("peak RSS %d MB", rss>>20)
			if rss > 100<<20 && !raceEnabled {
				t.Errorf("capture of a 1 GiB transcript peaked at %d MB, over 100 MB", rss>>20)
			}
			logs := sessionFiles(t, k)
			switch {
			case tc.want == "":
				if len(logs) != 0 {
					t.Errorf("logs %v from a transcript with no line", logs)
				}
				if d := diagnostics(t, k); len(d) != 1 || !strings.Contains(d[0].Error, "hold no turn") {
					t.Errorf("hook error log %+v", d)
				}
			case len(logs) != 1:
				t.Errorf("logs %v", logs)
			default:
				mustContain(t, readFile(t, filepath.Join(k.SessionsDir(), logs[0])), tc.want)
			}
		})
	}
}

// peakRSS reads the child's "VmHWM: <n> kB" line (see captureChild). The
// kernel's rusage of a child is no good here: it counts the parent's
// memory, which the child shared until its exec.
func peakRSS(t *testing.T, out []byte) int64 {
	t.Helper()
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimSpace(v), "%d kB", &kb); err == nil {
				return kb << 10
			}
		}
	}
	t.Fatalf("the child printed no VmHWM line:\n%s", out)
	return 0
}

// captureChild is the process TestCaptureMemory measures: one capture hook
// call for Claude Code on the transcript at p.
func captureChild(t *testing.T, p string) {
	payload, _ := json.Marshal(map[string]string{"session_id": sid, "transcript_path": p, "hook_event_name": "Stop"})
	inv, _, _ := invocation(t, os.Getenv("KK_TEST_ROOT"), string(harness.Capture), string(payload))
	inv.Harness, inv.Harnesses = "claude", registry(t, claude.New())
	// Memory is measured, not time: the race detector may slow the
	// capture past its deadline.
	inv.Options.Deadlines = map[harness.Event]time.Duration{harness.Capture: 10 * time.Minute}
	Run(context.Background(), inv)
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			fmt.Println(line)
		}
	}
}

// A harness may fire its end-of-turn hook before it has created the
// transcript (Claude Code 2.1.197 on a session's first Stop): capture
// waits for the file a moment.
func TestCaptureWaitsForTheTranscriptFile(t *testing.T) {
	t.Parallel()
	k := newKB(t)
	p := filepath.Join(t.TempDir(), "late.jsonl")
	go func() {
		time.Sleep(300 * time.Millisecond)
		transcript(t, filepath.Dir(p), "user", question, "assistant", answer)
		_ = os.Rename(filepath.Join(filepath.Dir(p), "transcript.jsonl"), p)
	}()
	r, _ := request(k, harness.HookInput{HarnessEvent: "Stop", SessionID: sid, TranscriptPath: p})
	r.Options.TranscriptAppear = time.Minute // generous: the test is about waiting, not about how long
	res, err := Capture(context.Background(), r)
	if err != nil || res.Action != session.CaptureCreated {
		t.Fatalf("capture of a late transcript: %+v %v", res, err)
	}
}
