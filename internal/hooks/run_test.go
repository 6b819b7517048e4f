package hooks

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/hooks/hookstest"
)

// Every failure of a hook call exits normally, prints nothing and leaves
// exactly one diagnostic line naming the phase.
func TestRunFailuresAreLoggedNotRaised(t *testing.T) {
	for _, tc := range []struct {
		name, event, payload string
		setup                func(t *testing.T, dir string) string // returns the payload
		edit                 func(inv *Invocation)
		phase, msg           string
	}{
		{name: "unknown event", event: "bogus", payload: `{}`, phase: "event", msg: `unknown event "bogus"`},
		{name: "unknown harness", event: "session-start", payload: `{}`, edit: func(inv *Invocation) { inv.Harness = "nope" },
			phase: "harness", msg: `unknown harness "nope"`},
		{name: "no harness", event: "session-start", payload: `{}`, edit: func(inv *Invocation) { inv.Harness = "" },
			phase: "harness", msg: "no --harness given"},
		{name: "bad arguments", event: "", payload: `{}`, edit: func(inv *Invocation) { inv.Problem = "no event named" },
			phase: "args", msg: "no event named"},
		{name: "malformed payload", event: "capture", payload: `{"session_id": `, phase: "payload", msg: "malformed fake payload"},
		{name: "no transcript path", event: "capture", payload: `{"session_id":"` + sid + `"}`, phase: "run", msg: "names no transcript_path"},
		{name: "missing transcript", event: "capture", setup: func(t *testing.T, dir string) string {
			return `{"session_id":"` + sid + `","transcript_path":"` + filepath.Join(dir, "gone.jsonl") + `"}`
		}, phase: "run", msg: "no such file"},
		{name: "bad transcript", event: "capture", setup: func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "bad.jsonl")
			writeFile(t, p, "{\"role\":\"user\",\"text\":\"hi\"}\nnot json\n")
			return `{"session_id":"` + sid + `","transcript_path":"` + p + `"}`
		}, phase: "run", msg: "transcript line 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newKB(t)
			payload := tc.payload
			if tc.setup != nil {
				payload = tc.setup(t, k.Root)
			}
			inv, out, errb := invocation(t, k.Root, tc.event, payload)
			if tc.edit != nil {
				tc.edit(&inv)
			}
			Run(context.Background(), inv)
			if out.Len() != 0 || errb.Len() != 0 {
				t.Fatalf("printed %q / %q", out, errb)
			}
			ds := diagnostics(t, k)
			if len(ds) != 1 {
				t.Fatalf("want one diagnostic, got %+v", ds)
			}
			d := ds[0]
			if d.Phase != tc.phase || !strings.Contains(d.Error, tc.msg) || d.Event != inv.Event || d.Harness != inv.Harness || d.TS != "2026-05-20T08:30:00Z" {
				t.Errorf("diagnostic %+v; want phase %s, error with %q", d, tc.phase, tc.msg)
			}
			if files := sessionFiles(t, k); len(files) != 0 {
				t.Errorf("session logs written: %v", files)
			}
		})
	}
}

func TestRunWithoutKnowledgeBase(t *testing.T) {
	t.Run("no .ai/kenkeep: stderr", func(t *testing.T) {
		dir := t.TempDir()
		inv, out, errb := invocation(t, dir, "session-start", `{"cwd":"`+dir+`"}`)
		Run(context.Background(), inv)
		if out.Len() != 0 {
			t.Fatalf("stdout %q", out)
		}
		line, ok := strings.CutPrefix(errb.String(), "kk hook: ")
		var d Diagnostic
		if !ok || json.Unmarshal([]byte(line), &d) != nil || d.Phase != "kb" || !strings.Contains(d.Error, "no knowledge base found") {
			t.Fatalf("stderr %q", errb)
		}
		if _, err := os.Stat(filepath.Join(dir, ".ai")); !os.IsNotExist(err) {
			t.Fatal("a hook created .ai in a repository without a knowledge base")
		}
	})
	t.Run("never initialized: the knowledge base's log", func(t *testing.T) {
		dir := t.TempDir()
		k := newKB(t)
		if err := os.Remove(k.InstalledPath()); err != nil {
			t.Fatal(err)
		}
		inv, out, _ := invocation(t, dir, "session-start", `{"cwd":"`+filepath.Join(k.Root, "sub")+`"}`)
		Run(context.Background(), inv)
		ds := diagnostics(t, k)
		if out.Len() != 0 || len(ds) != 1 || ds[0].Phase != "kb" || !strings.Contains(ds[0].Error, "never initialized") {
			t.Fatalf("stdout %q, diagnostics %+v", out, ds)
		}
	})
}

func TestRunRecursionGuard(t *testing.T) {
	k := newKB(t)
	p := transcript(t, k.Root, "user", "How are retries configured?", "assistant", "Through retry.yaml.")
	for _, ev := range harness.Events {
		inv, out, errb := invocation(t, k.Root, string(ev), `{"session_id":"`+sid+`","transcript_path":"`+p+`","prompt":"retries"}`)
		inv.Getenv = func(name string) string {
			if name == harness.RecursionEnv {
				return "1"
			}
			return ""
		}
		Run(context.Background(), inv)
		if out.Len() != 0 || errb.Len() != 0 || len(diagnostics(t, k)) != 0 || len(sessionFiles(t, k)) != 0 {
			t.Fatalf("%s ran under %s: %q %q", ev, harness.RecursionEnv, out, errb)
		}
		// --foreground lets only kk's own detached work (the drain, a
		// detached capture) past the guard.
		if !backgroundEvent(ev) {
			inv.Foreground = true
			Run(context.Background(), inv)
			if out.Len() != 0 || len(sessionFiles(t, k)) != 0 {
				t.Fatalf("%s --foreground ran under %s", ev, harness.RecursionEnv)
			}
		}
	}
}

func TestRunPrintsOnlyTheHarnessOutput(t *testing.T) {
	k := newKB(t)
	inv, out, errb := invocation(t, k.Root, "session-start", `{"session_id":"`+sid+`","cwd":"`+k.Root+`"}`)
	Run(context.Background(), inv)
	var got struct{ Event, Context string }
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || got.Event != "session-start" {
		t.Fatalf("stdout %q: %v", out, err)
	}
	mustContain(t, got.Context, "## Branches", "snapshots in time")
	if errb.Len() != 0 || len(diagnostics(t, k)) != 0 {
		t.Fatalf("stderr %q, diagnostics %+v", errb, diagnostics(t, k))
	}
	// Without a payload the working directory names the repository.
	inv, out, _ = invocation(t, k.Root, "session-start", "")
	Run(context.Background(), inv)
	if !strings.Contains(out.String(), "snapshots in time") {
		t.Fatalf("no payload: stdout %q", out)
	}
}

func TestRunDeadline(t *testing.T) {
	t.Parallel()
	k := newKB(t)
	p := transcript(t, k.Root, "user", "How are retries configured? Tell me everything about them.", "assistant", "Through retry.yaml.")
	block := make(chan struct{})
	inv, out, _ := invocation(t, k.Root, "capture", `{"session_id":"`+sid+`","transcript_path":"`+p+`"}`)
	inv.Harnesses = registry(t, &hookstest.Adapter{BlockParse: block})
	inv.Options.Deadlines = map[harness.Event]time.Duration{harness.Capture: 50 * time.Millisecond}
	start := time.Now()
	Run(context.Background(), inv)
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("the deadline did not stop the hook: %s", took)
	}
	ds := diagnostics(t, k)
	if out.Len() != 0 || len(ds) != 1 || ds[0].Phase != "deadline" || ds[0].Error != "gave up after 50ms" {
		t.Fatalf("stdout %q, diagnostics %+v", out, ds)
	}
	close(block) // the abandoned worker sees its context ended and writes nothing
	time.Sleep(100 * time.Millisecond)
	if files := sessionFiles(t, k); len(files) != 0 {
		t.Fatalf("a capture past its deadline wrote %v", files)
	}
	if ds := diagnostics(t, k); len(ds) != 1 {
		t.Fatalf("the overrun was logged more than once: %+v", ds)
	}
}

// neverEOF is standard input a host holds open: it yields data, then
// blocks forever.
type neverEOF struct {
	data []byte
	done bool
}

func (r *neverEOF) Read(p []byte) (int, error) {
	if !r.done {
		r.done = true
		return copy(p, r.data), nil
	}
	select {}
}

func TestReadPayload(t *testing.T) {
	t.Parallel()
	o := Options{StdinIdle: 30 * time.Millisecond, StdinTotal: time.Second}
	ctx := context.Background()

	data, timedOut, err := ReadPayload(ctx, strings.NewReader(`{"a":1}`), o)
	if err != nil || timedOut || string(data) != `{"a":1}` {
		t.Fatalf("closed input: %q %v %v", data, timedOut, err)
	}
	start := time.Now()
	data, timedOut, err = ReadPayload(ctx, &neverEOF{data: []byte(`{"a":1}`)}, o)
	if err != nil || !timedOut || string(data) != `{"a":1}` || time.Since(start) > 500*time.Millisecond {
		t.Fatalf("open input: %q %v %v after %s", data, timedOut, err, time.Since(start))
	}
	data, timedOut, err = ReadPayload(ctx, &neverEOF{done: true}, o)
	if err != nil || !timedOut || len(data) != 0 {
		t.Fatalf("silent input: %q %v %v", data, timedOut, err)
	}
	o.MaxPayload = 10
	if _, _, err := ReadPayload(ctx, strings.NewReader(strings.Repeat("x", 11)), o); err == nil || !strings.Contains(err.Error(), "larger than 10 bytes") {
		t.Fatalf("oversized input: %v", err)
	}
	if data, _, err := ReadPayload(ctx, nil, o); err != nil || data != nil {
		t.Fatalf("no input: %q %v", data, err)
	}
}

// A session-start payload kk cannot parse (payloads drift between harness
// versions) still gives the session ENTRY.md, as kenkeep does; the
// problem is logged in the knowledge base's hook log, not printed.
func TestSessionStartWithAMalformedPayload(t *testing.T) {
	k := newKB(t)
	inv, out, errb := invocation(t, k.Root, "session-start", `{"session_id": `)
	Run(context.Background(), inv)
	if errb.Len() != 0 {
		t.Fatalf("stderr %q", errb)
	}
	if !strings.Contains(out.String(), "kenkeep navigation") {
		t.Fatalf("no ENTRY.md in the context: %q", out)
	}
	ds := diagnostics(t, k)
	if len(ds) != 1 || ds[0].Phase != "payload" || !strings.Contains(ds[0].Error, "malformed fake payload") {
		t.Fatalf("diagnostics %+v", ds)
	}
}
