package hooks

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/hooks/hookstest"
	"github.com/kk-project/kk/internal/session"
)

// shortSettle is the settle timing of a test: a wait of up to max, polled
// often.
func shortSettle(max time.Duration) Options {
	return Options{SettleMax: max, SettleQuiet: 50 * time.Millisecond, SettlePoll: 10 * time.Millisecond}
}

func TestForegroundCaptureStepsAsideForANewerCapture(t *testing.T) {
	k := newKB(t)
	p := transcript(t, k.Root, "user", question, "assistant", answer)
	r, _ := request(k, harness.HookInput{HarnessEvent: "Stop", SessionID: sid, TranscriptPath: p})
	writeFile(t, latestPath(k, sid), "newer")
	res, skipped, err := ForegroundCapture(context.Background(), r, "older")
	if err != nil || !skipped || res != nil || len(sessionFiles(t, k)) != 0 {
		t.Fatalf("an older capture ran: %+v %v %v", res, skipped, err)
	}
	res, skipped, err = ForegroundCapture(context.Background(), r, "newer")
	if err != nil || skipped || res.Action != session.CaptureCreated {
		t.Fatalf("the newest capture did not run: %+v %v %v", res, skipped, err)
	}
	if _, err := os.Stat(latestPath(k, sid)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the newest capture left its token behind: %v", err)
	}
}

func TestForegroundCaptureWaitsForTheTranscript(t *testing.T) {
	t.Parallel()
	k := newKB(t)
	p := transcript(t, k.Root, "user", question)
	a := &hookstest.Adapter{Capture: harness.CaptureSettled,
		SettledWhen: func(data []byte) bool { return bytes.Contains(data, []byte(`"assistant"`)) }}
	r, warnings := request(k, harness.HookInput{HarnessEvent: "agentStop", SessionID: sid, TranscriptPath: p})
	r.Adapter = a
	r.Options = shortSettle(time.Minute) // generous: the test is about waiting, not about how long
	// The harness writes the answer only after the hook ran.
	go func() {
		time.Sleep(200 * time.Millisecond)
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		if err == nil {
			_, _ = f.WriteString(`{"role":"assistant","text":"` + answer + `"}` + "\n")
			_ = f.Close()
		}
	}()
	res, _, err := ForegroundCapture(context.Background(), r, "")
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, readFile(t, filepath.Join(k.Root, res.Path)), "[AGENT]: "+answer)
	if len(*warnings) > 0 {
		t.Errorf("warnings %v", *warnings)
	}
}

func TestForegroundCaptureKeepsAnUnsettledTranscript(t *testing.T) {
	t.Parallel()
	k := newKB(t)
	p := transcript(t, k.Root, "user", question)
	r, warnings := request(k, harness.HookInput{HarnessEvent: "agentStop", SessionID: sid, TranscriptPath: p})
	r.Options = shortSettle(300 * time.Millisecond)
	r.Adapter = &hookstest.Adapter{Capture: harness.CaptureSettled, SettledWhen: func([]byte) bool { return false }}
	res, _, err := ForegroundCapture(context.Background(), r, "")
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, readFile(t, filepath.Join(k.Root, res.Path)), "[USER]: "+question)
	if len(*warnings) != 1 || !strings.Contains((*warnings)[0], "settle: "+ErrNotSettled.Error()) {
		t.Errorf("warnings %v, want the wait logged", *warnings)
	}
}

func TestRunStartsADetachedCapture(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("needs a POSIX sh to run the fake kk script, which Windows lacks")
	}
	k := newKB(t)
	out := t.TempDir()
	fakeKK := filepath.Join(out, "kk")
	writeFile(t, fakeKK, "#!/bin/sh\nenv > '"+out+"/env.txt'\ncat > '"+out+"/stdin.txt'\necho \"$*\" > '"+out+"/args.txt'\n")
	if err := os.Chmod(fakeKK, 0o755); err != nil {
		t.Fatal(err)
	}
	payload := `{"session_id":"` + sid + `","hook_event_name":"session.idle","cwd":"` + k.Root + `"}`
	inv, stdout, _ := invocation(t, k.Root, string(harness.Capture), payload)
	inv.Harnesses = registry(t, &hookstest.Adapter{Capture: harness.CaptureDetached})
	inv.Executable = func() (string, error) { return fakeKK, nil }
	inv.Getenv = func(k string) string {
		if k == "KK_CAPTURE" {
			return "wait"
		}
		return ""
	}
	Run(context.Background(), inv)
	if stdout.Len() > 0 || len(diagnostics(t, k)) > 0 || len(sessionFiles(t, k)) > 0 {
		t.Fatalf("the hook did the capture itself or failed: %q %+v", stdout, diagnostics(t, k))
	}
	if got := strings.TrimSpace(readFile(t, filepath.Join(out, "args.txt"))); got != "hook capture --harness fake --foreground --root "+k.Root {
		t.Errorf("child arguments %q", got)
	}
	if got := readFile(t, filepath.Join(out, "stdin.txt")); got != payload {
		t.Errorf("child stdin %q, want the payload", got)
	}
	env := readFile(t, filepath.Join(out, "env.txt"))
	token := readFile(t, latestPath(k, sid))
	mustContain(t, env, harness.RecursionEnv+"=1\n", captureTokenEnv+"="+token+"\n")
	if left, _ := filepath.Glob(filepath.Join(captureDir(k), "*.payload")); len(left) > 0 {
		t.Errorf("payload files left behind: %v", left)
	}
}

// A detached capture is a hook call of its own: it runs past the
// recursion guard (kk set it) and logs its failures.
func TestForegroundCaptureRunsUnderTheGuardAndLogs(t *testing.T) {
	k := newKB(t)
	payload := `{"session_id":"` + sid + `","transcript_path":"` + filepath.Join(k.Root, "gone.jsonl") + `"}`
	inv, _, _ := invocation(t, k.Root, string(harness.Capture), payload)
	inv.Foreground = true
	inv.Getenv = func(k string) string {
		if k == harness.RecursionEnv {
			return "1"
		}
		return ""
	}
	Run(context.Background(), inv)
	d := diagnostics(t, k)
	if len(d) != 1 || d[0].Event != "capture" || !strings.Contains(d[0].Error, "gone.jsonl") {
		t.Fatalf("hook error log %+v", d)
	}
}

// TestHandedOffCaptureNeverWritesAnOlderTranscript: a capture the hook
// handed to a detached process (the writer lock was held) may get the
// lock only after a later hook captured the session in place, with a
// longer transcript. It must then leave the log alone: it read the
// transcript first, at its start, and would put the session back to it.
// A capture handed off after the inline one read its transcript still
// runs.
func TestHandedOffCaptureNeverWritesAnOlderTranscript(t *testing.T) {
	k := newKB(t)
	short := transcript(t, t.TempDir(), "user", question)
	long := transcript(t, t.TempDir(), "user", question, "assistant", answer)
	older := strconv.FormatInt(time.Now().Add(-time.Second).UnixNano(), 10) + "-1"
	writeFile(t, latestPath(k, sid), older) // handed off before the next hook
	r, _ := request(k, harness.HookInput{HarnessEvent: "Stop", SessionID: sid, TranscriptPath: long})
	res, err := Capture(context.Background(), r)
	if err != nil || res.Action != session.CaptureCreated {
		t.Fatalf("inline capture: %+v %v", res, err)
	}
	r.Input.TranscriptPath = short
	res, skipped, err := ForegroundCapture(context.Background(), r, older)
	if err != nil || skipped || res.Action != session.CaptureSuperseded {
		t.Fatalf("the handed-off capture: %+v %v %v, want it superseded", res, skipped, err)
	}
	logs := sessionFiles(t, k)
	if len(logs) != 1 {
		t.Fatalf("logs %v", logs)
	}
	mustContain(t, readFile(t, filepath.Join(k.SessionsDir(), logs[0])), "[AGENT]: "+answer)

	// A token newer than the inline capture's start is not retired.
	newer := strconv.FormatInt(time.Now().Add(time.Hour).UnixNano(), 10) + "-2"
	writeFile(t, latestPath(k, sid), newer)
	r.Input.TranscriptPath = long
	if _, err := Capture(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, latestPath(k, sid)); got != newer {
		t.Fatalf("the token of a later hand-off became %q", got)
	}
}
