package hooks

// Real-process tests of the hook payloads harnesses send: fields whose
// JSON type drifts between releases.

import (
	"context"
	"errors"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/harnesses/copilot"
	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/store"
)

// synthetic returns the absolute path of a harness adapter's synthetic
// transcript fixture.
func synthetic(t *testing.T, harnessID, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "harnesses", harnessID, "testdata", "transcripts", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCaptureWithAnUnusedFieldOfAnotherType: harnesses change the types
// of payload fields between releases (Claude Code's model became an
// object, Codex's older builds sent "event", a Cursor build sends cwd as
// a number next to the workspace_roots kk reads). kk refused the whole
// payload when a field it did not use at that event had another type than
// the string it expected, and the turn's capture was lost. Only the
// fields the event reads count: the capture is written and nothing is
// logged.
func TestCaptureWithAnUnusedFieldOfAnotherType(t *testing.T) {
	root := agentRepo(t)
	k := store.New(root)
	claudeTr := claudeTranscript(t, "How are the database migrations run in this project?", "With `make migrate`, before the tests.")
	for _, c := range []struct {
		harness, id, payload, question string
	}{
		{"claude", "11111111-1111-4111-8111-111111111111",
			`{"session_id":"%ID%","cwd":"` + root + `","transcript_path":"` + claudeTr + `","hook_event_name":"Stop",` +
				`"prompt":{"text":"not read at Stop"},"model":{"id":"claude-opus"},"permission_mode":5,"stop_hook_active":"no","effort":{"level":"high"}}`,
			"How are the database migrations run in this project?"},
		{"codex", "019a4b1c-7e2d-7f3a-9c4b-5d6e7f8a9b0c",
			`{"session_id":"%ID%","cwd":"` + root + `","transcript_path":"` + synthetic(t, "codex", "synthetic.jsonl") + `","hook_event_name":"Stop",` +
				`"event":7,"prompt":["not","read"],"model":{"id":"gpt-5-codex"},"turn_id":3}`,
			"How do we run the database migrations?"},
		{"cursor", "3f2a9c1e-7b4d-4e8a-9f10-2c3d4e5f6a7b",
			`{"conversation_id":"%ID%","workspace_roots":["` + root + `"],"transcript_path":"` + synthetic(t, "cursor", "synthetic.jsonl") + `","hook_event_name":"stop",` +
				`"cwd":5,"prompt":{"text":"x"},"model":{"id":"claude-4.5-sonnet"},"loop_count":"0"}`,
			"Why do refunds fail for orders older than 90 days?"},
		{"copilot", "b0ff98c0-8e01-4b73-bf92-9649b139931b",
			`{"sessionId":"%ID%","cwd":"` + root + `","transcriptPath":"` + synthetic(t, "copilot", "synthetic.jsonl") + `","stopReason":"end_turn",` +
				`"prompt":{"text":"x"},"timestamp":"not a number","hook_event_name":7}`,
			"How do we run the migrations?"},
		{"gemini", "3c9d2a1b-5e6f-4a7b-8c9d-0e1f2a3b4c5d",
			`{"session_id":"%ID%","cwd":"` + root + `","transcript_path":"` + synthetic(t, "gemini", "synthetic.jsonl") + `","hook_event_name":"SessionEnd",` +
				`"prompt":{"text":"x"},"timestamp":5,"reason":{"kind":"exit"}}`,
			"How do retries work here?"},
	} {
		t.Run(c.harness, func(t *testing.T) {
			agentHook(t, root, "capture", c.harness, strings.ReplaceAll(c.payload, "%ID%", c.id), "KK_CAPTURE=wait")
			if logs := readLogs(t, k); logs != "" {
				t.Fatalf("hook log:\n%s", logs)
			}
			var found string
			for _, name := range sessionFiles(t, k) {
				if strings.Contains(name, c.id) {
					found = readFile(t, filepath.Join(k.SessionsDir(), name))
				}
			}
			if found == "" {
				t.Fatalf("no session log for %s among %v", c.id, sessionFiles(t, k))
			}
			mustContain(t, found, "session_id: "+c.id, c.question)
		})
	}
}

// TestHookRefusesAUsedFieldOfAnotherType: a field the event does read
// keeps its clear refusal, naming the field, at that event; nothing is
// written.
func TestHookRefusesAUsedFieldOfAnotherType(t *testing.T) {
	root := agentRepo(t)
	k := store.New(root)
	tr := claudeTranscript(t, "How are the database migrations run in this project?", "With `make migrate`.")
	for _, c := range []struct {
		harness, event, payload, msg string
	}{
		{"claude", "capture", `{"session_id":42,"cwd":"` + root + `","transcript_path":"` + tr + `","hook_event_name":"Stop"}`,
			`malformed claude payload: hook payload field "session_id" is a number, want a string`},
		{"claude", "capture", `{"session_id":"` + sid + `","cwd":"` + root + `","transcript_path":true,"hook_event_name":"Stop"}`,
			`hook payload field "transcript_path" is a boolean, want a string`},
		{"claude", "prompt-context", `{"session_id":"` + sid + `","cwd":"` + root + `","prompt":{"text":"x"}}`,
			`hook payload field "prompt" is an object, want a string`},
		{"codex", "capture", `{"session_id":"` + sid + `","cwd":["` + root + `"],"transcript_path":"` + tr + `","hook_event_name":"Stop"}`,
			`hook payload field "cwd" is an array, want a string`},
		{"copilot", "capture", `{"sessionId":42,"cwd":"` + root + `","transcriptPath":"` + tr + `","stopReason":"end_turn"}`,
			`field "sessionId" is a number, want a string`},
		{"gemini", "prompt-context", `{"session_id":"` + sid + `","cwd":"` + root + `","prompt":["x"]}`,
			`field "prompt" is an array, want a string`},
		{"cursor", "capture", `{"conversation_id":{"id":"x"},"workspace_roots":["` + root + `"],"hook_event_name":"stop"}`,
			`field "conversation_id" is an object, want a string`},
	} {
		t.Run(c.harness+" "+c.event, func(t *testing.T) {
			before := readLogs(t, k)
			out, _ := agentHook(t, root, c.event, c.harness, c.payload)
			if out != "" {
				t.Errorf("printed %q", out)
			}
			logs := strings.TrimPrefix(readLogs(t, k), before)
			if strings.Count(logs, "\n") != 1 || !strings.Contains(logs, `"phase":"payload"`) || !strings.Contains(logs, strings.ReplaceAll(c.msg, `"`, `\"`)) {
				t.Errorf("hook log:\n%s\nwant one payload line with %s", logs, c.msg)
			}
			if files := sessionFiles(t, k); len(files) != 0 {
				t.Errorf("session logs written: %v", files)
			}
		})
	}
}

// TestCaptureOfAnEphemeralCodexSession: `codex exec --ephemeral` keeps no
// rollout and sends "transcript_path": null (harnesses.md §2.1). kk logged
// "the payload names no transcript_path" as an error at every turn of
// such a session. There is nothing to capture: the hook does nothing and
// says nothing. An older Codex, which sends no transcript_path at all,
// still gets the error when kk cannot find the session's rollout.
func TestCaptureOfAnEphemeralCodexSession(t *testing.T) {
	root := agentRepo(t)
	k := store.New(root)
	codexHome := "CODEX_HOME=" + t.TempDir()
	ephemeral := `{"session_id":"019a4b1c-7e2d-7f3a-9c4b-5d6e7f8a9b0c","transcript_path":null,"cwd":"` + root +
		`","hook_event_name":"Stop","model":"gpt-5-codex","turn_id":"turn-1","stop_hook_active":false,"last_assistant_message":"Done."}`
	for range 3 {
		out, errOut := agentHook(t, root, "capture", "codex", ephemeral, codexHome)
		if out != "" || errOut != "" {
			t.Fatalf("printed %q, %q", out, errOut)
		}
		agentHook(t, root, "graph-hint", "codex", ephemeral, codexHome)
	}
	if logs := readLogs(t, k); logs != "" {
		t.Errorf("hook log:\n%s", logs)
	}
	if files := sessionFiles(t, k); len(files) != 0 {
		t.Errorf("session logs written: %v", files)
	}
	old := `{"session_id":"019a4b1c-7e2d-7f3a-9c4b-5d6e7f8a9b0c","cwd":"` + root + `","event":"Stop"}`
	agentHook(t, root, "capture", "codex", old, codexHome)
	mustContain(t, readLogs(t, k), "names no transcript_path")
}

// TestCopilotCaptureWithoutHOME: with HOME unset, Copilot's capture at
// sessionEnd (whose payload names no transcript) logged "the payload names
// no transcript_path". kk looks where Copilot keeps the session, under
// COPILOT_HOME when set: the capture is written; without HOME the log
// names HOME, not the payload.
func TestCopilotCaptureWithoutHOME(t *testing.T) {
	root := agentRepo(t)
	k := store.New(root)
	const id = "b0ff98c0-8e01-4b73-bf92-9649b139931b"
	copilotHome := t.TempDir()
	events := filepath.Join(copilotHome, "session-state", id, "events.jsonl")
	writeFile(t, events, readFile(t, synthetic(t, "copilot", "synthetic.jsonl")))
	payload := `{"sessionId":"` + id + `","timestamp":1771480085412,"cwd":"` + root + `","reason":"complete"}`
	cmd := exec.Command(agentKK(t), "hook", "capture", "--harness", "copilot")
	cmd.Dir = root
	for _, kv := range agentEnv() {
		if !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "COPILOT_HOME=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "KK_CAPTURE=wait", "COPILOT_HOME="+copilotHome)
	cmd.Stdin = strings.NewReader(payload)
	if out, err := cmd.CombinedOutput(); err != nil || len(out) != 0 {
		t.Fatalf("%v %s", err, out)
	}
	if logs := readLogs(t, k); logs != "" {
		t.Fatalf("hook log:\n%s", logs)
	}
	if files := sessionFiles(t, k); len(files) != 1 || !strings.Contains(files[0], id) {
		t.Fatalf("session logs %v", files)
	}
	// Without COPILOT_HOME either, Copilot looks in the account's home
	// folder (Node's os.homedir reads the user database): so does kk, and
	// the log names where it looked, not the payload. (In process, with
	// a short wait for the transcript to settle, as `kk hook capture
	// --foreground` runs it.)
	// Where the user database names no home folder either (an account
	// made for a container), the log says HOME is not set and what to
	// set, not that the payload named no transcript.
	u, uerr := user.Current()
	t.Setenv("HOME", "")
	t.Setenv("COPILOT_HOME", "")
	other := "c1ff98c0-8e01-4b73-bf92-9649b139931b"
	reg, err := harness.NewRegistry(copilot.New())
	if err != nil {
		t.Fatal(err)
	}
	Run(context.Background(), Invocation{Event: "capture", Harness: "copilot", Harnesses: reg, Foreground: true,
		Stdin: strings.NewReader(strings.ReplaceAll(payload, id, other)), Getenv: func(string) string { return "" },
		Getwd: func() (string, error) { return root, nil }, Now: time.Now,
		Options: Options{SettleMax: 200 * time.Millisecond, TranscriptAppear: 100 * time.Millisecond}})
	logs := readLogs(t, k)
	if uerr == nil && u.HomeDir != "" {
		mustContain(t, logs, filepath.Join(u.HomeDir, ".copilot", "session-state", other, "events.jsonl"))
	} else {
		mustContain(t, logs, "HOME is not set in the hook's environment")
	}
	mustNotContain(t, logs, "names no transcript_path")
}

// TestLocateFromASubfolderRoot: KK_ROOT (or --root) naming a folder below
// the knowledge base's (a project's subfolder exported in a shell
// profile) gave "no knowledge base found at <it>", leaving the user to
// guess; as `kk mcp` does, the message names the knowledge base above it
// and what to pass.
func TestLocateFromASubfolderRoot(t *testing.T) {
	k := newKB(t)
	sub := filepath.Join(k.Root, "src", "deep")
	writeFile(t, filepath.Join(sub, "x.go"), "package x\n")
	_, err := Locate(sub, "", nil)
	if err == nil || !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("%v", err)
	}
	mustContain(t, err.Error(), "no knowledge base found at "+sub+" (from --root or KK_ROOT), but "+k.Root+" above it has one; pass --root "+k.Root)
	other := t.TempDir()
	if _, err := Locate(other, "", nil); err == nil || strings.Contains(err.Error(), "above it") {
		t.Errorf("no knowledge base above: %v", err)
	}
}
