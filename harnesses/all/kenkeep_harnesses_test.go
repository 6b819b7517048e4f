package all

// Facts from kenkeep v1.17's tests/harnesses/ (detect, registry,
// captured-by-trigger, prompt-time-support, opencode-session-id,
// transcript, read-extract), asserted against kk's adapters. The
// coverage table is docs/ported/kenkeep-hooks.md.

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/harness/harnesstest"
	"github.com/kk-project/kk/internal/hooks"
)

// TestKenkeepCapturedByTrigger: each harness's own end-of-turn,
// session-end and compaction events become the session log's
// captured_by (stop, session_end, pre_compact); any other event, or none,
// is stop (captured-by-trigger.test.ts).
func TestKenkeepCapturedByTrigger(t *testing.T) {
	for _, c := range []struct{ harness, event, want string }{
		{"claude", "Stop", "stop"},
		{"claude", "SessionEnd", "session_end"},
		{"claude", "PreCompact", "pre_compact"},
		{"cursor", "stop", "stop"},
		{"cursor", "sessionEnd", "session_end"},
		{"cursor", "preCompact", "pre_compact"},
		{"codex", "Stop", "stop"},
		{"codex", "PreCompact", "pre_compact"},
		{"codex", "SessionEnd", "session_end"},
		{"opencode", "session.idle", "stop"},
		{"opencode", "experimental.session.compacting", "pre_compact"},
		{"copilot", "agentStop", "stop"},
		{"copilot", "sessionEnd", "session_end"},
		{"copilot", "preCompact", "pre_compact"},
		{"gemini", "AfterAgent", "stop"},
		{"gemini", "PreCompress", "pre_compact"},
		{"gemini", "SessionEnd", "session_end"},
		{"any", "totally-unknown-event", "stop"},
		{"any", "", "stop"},
	} {
		if got := hooks.CapturedBy(c.event); got != c.want {
			t.Errorf("%s %q: captured_by %q, want %q", c.harness, c.event, got, c.want)
		}
	}
}

// TestKenkeepDetect: Claude Code is recognised by CLAUDECODE=1 and wins
// over Cursor's markers; Cursor by CURSOR_VERSION (or CURSOR_AGENT=1);
// nothing, a bare CLAUDE_PROJECT_DIR (Cursor sets it too) or CLAUDECODE
// other than "1" is no harness (detect.test.ts, detectHarnessFromEnv).
func TestKenkeepDetect(t *testing.T) {
	r := Registry()
	detected := func(env map[string]string) string {
		for _, a := range r.ByPriority() {
			if a.Detect(harnesstest.Env(env)) {
				return a.ID()
			}
		}
		return ""
	}
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"CLAUDECODE": "1"}, "claude"},
		{map[string]string{"CLAUDECODE": "1", "CURSOR_VERSION": "1.0.0"}, "claude"},
		{map[string]string{"CURSOR_VERSION": "1.0.0", "CLAUDE_PROJECT_DIR": "/repo"}, "cursor"},
		{map[string]string{"CURSOR_AGENT": "1"}, "cursor"},
		{map[string]string{"HOME": "/root", "PATH": "/usr/bin"}, ""},
		{map[string]string{"CLAUDE_PROJECT_DIR": "/repo"}, ""},
		{map[string]string{"CLAUDECODE": "0"}, ""},
	} {
		if got := detected(c.env); got != c.want {
			t.Errorf("env %v: detected %q, want %q", c.env, got, c.want)
		}
	}
}

// TestKenkeepResolveHarness: the launchers' --harness flag wins over the
// environment, the environment over config's cliDefaultHarness, and with
// none of them claude is used; a flag naming no harness is an error that
// names it (detect.test.ts, resolveActiveHarness). kk differs on purpose
// for a bad flag: kenkeep's skill helper let a bogus --hint fall through
// to the environment, kk's --harness refuses it.
func TestKenkeepResolveHarness(t *testing.T) {
	r := Registry()
	resolve := func(flag string, env map[string]string, def string) (string, error) {
		a, err := r.Resolve(flag, harnesstest.Env(env), def)
		if err != nil {
			return "", err
		}
		return a.ID(), nil
	}
	for _, c := range []struct {
		flag string
		env  map[string]string
		def  string
		want string
	}{
		{"cursor", nil, "", "cursor"},
		{"claude", map[string]string{"CLAUDECODE": "1"}, "", "claude"},
		{"codex", map[string]string{"CLAUDECODE": "1"}, "", "codex"},
		{"", map[string]string{"CLAUDECODE": "1"}, "definitely-not-registered", "claude"},
		{"", map[string]string{"CLAUDECODE": "1"}, "codex", "claude"},
		{"", nil, "cursor", "cursor"},
		{"", nil, "codex", "codex"},
		{"", nil, "", "claude"},
	} {
		got, err := resolve(c.flag, c.env, c.def)
		if err != nil || got != c.want {
			t.Errorf("flag %q env %v default %q: %q, %v; want %q", c.flag, c.env, c.def, got, err, c.want)
		}
	}
	if _, err := resolve("not-real", nil, ""); err == nil || !strings.Contains(err.Error(), `"not-real"`) {
		t.Errorf("an unknown --harness: %v", err)
	}
	if _, err := resolve("", nil, "not-real"); err == nil || !strings.Contains(err.Error(), "cliDefaultHarness") {
		t.Errorf("an unknown cliDefaultHarness without a detected harness: %v", err)
	}
}

// TestKenkeepRegistry: every harness is registered under its id, listed
// in a fixed order, and an unknown id is an error naming it
// (registry.test.ts). kk adds gemini to kenkeep's five.
func TestKenkeepRegistry(t *testing.T) {
	r := Registry()
	if got, want := r.IDs(), []string{"claude", "codex", "copilot", "cursor", "gemini", "opencode"}; !slices.Equal(got, want) {
		t.Errorf("ids %v, want %v", got, want)
	}
	for _, id := range r.IDs() {
		a, err := r.Get(id)
		if err != nil || a.ID() != id {
			t.Errorf("Get(%q) = %v, %v", id, a, err)
		}
	}
	if _, err := r.Get("not-a-real-harness"); err == nil || !strings.Contains(err.Error(), `unknown harness "not-a-real-harness"`) {
		t.Errorf("Get of an unknown id: %v", err)
	}
	// The adapters' files (registry.test.ts "adapter shape"): kk owns
	// these paths in each harness.
	for id, want := range map[string]struct {
		config []string
		skills string
	}{
		"claude":   {[]string{".claude/settings.json"}, ".claude/skills"},
		"codex":    {[]string{".codex/hooks.json"}, ".agents/skills"},
		"cursor":   {[]string{".cursor/hooks.json"}, ".cursor/skills"},
		"copilot":  {[]string{".github/hooks/kk.json"}, ".github/skills"},
		"opencode": {nil, ".opencode/skills"},
	} {
		a, _ := r.Get(id)
		p := a.Paths()
		for _, c := range want.config {
			if !slices.Contains(p.Config, c) {
				t.Errorf("%s: config files %v lack %s", id, p.Config, c)
			}
		}
		if p.Skills != want.skills {
			t.Errorf("%s: skills folder %q, want %q", id, p.Skills, want.skills)
		}
	}
	op, _ := r.Get("opencode")
	if !slices.Contains(op.Paths().Other, ".opencode/plugins/kk.mjs") && !slices.Contains(op.Paths().Config, ".opencode/plugins/kk.mjs") {
		t.Errorf("opencode: no plugin file in %+v", op.Paths())
	}
}

// installedEvents installs adapter a into a fresh folder and returns, for
// each kk hook event, the harness events whose hook commands run it, read
// back from the files kk wrote.
func installedEvents(t *testing.T, a harness.Adapter) map[harness.Event][]string {
	t.Helper()
	root := t.TempDir()
	harnesstest.Install(t, a, root, "kk", harnesstest.ShippedSkills())
	out := map[harness.Event][]string{}
	cmd := regexp.MustCompile(`kk hook ([a-z-]+) --harness ` + a.ID())
	for _, f := range a.Paths().Config {
		data := harnesstest.ReadFile(t, root+"/"+f)
		var doc map[string]any
		if json.Unmarshal(data, &doc) != nil {
			continue
		}
		hooksObj, _ := doc["hooks"].(map[string]any)
		for on, v := range hooksObj {
			raw, _ := json.Marshal(v)
			for _, m := range cmd.FindAllStringSubmatch(string(raw), -1) {
				ev := harness.Event(m[1])
				if !slices.Contains(out[ev], on) {
					out[ev] = append(out[ev], on)
				}
			}
		}
	}
	return out
}

// TestKenkeepPromptTimeSupport: prompt-time context goes through the
// harness's own prompt-submit hook, synchronously, where the harness can
// take context back from it, and nowhere else (prompt-time-support.test.ts).
// kk differs on purpose for Copilot CLI, which takes additionalContext
// from userPromptSubmitted since 1.0.102 (docs/harnesses.md), and adds
// Gemini CLI's BeforeAgent.
func TestKenkeepPromptTimeSupport(t *testing.T) {
	r := Registry()
	for id, want := range map[string]string{
		"claude":   "UserPromptSubmit",
		"codex":    "UserPromptSubmit",
		"copilot":  "userPromptSubmitted",
		"gemini":   "BeforeAgent",
		"cursor":   "",
		"opencode": "",
	} {
		a, _ := r.Get(id)
		_, ok := a.HookOutput(harness.PromptContext, "Relevant nodes:\n- x\n")
		if ok != (want != "") {
			t.Errorf("%s: prompt-context output channel %v, want %v", id, ok, want != "")
		}
		got := installedEvents(t, a)[harness.PromptContext]
		if want == "" && len(got) > 0 || want != "" && !slices.Equal(got, []string{want}) {
			t.Errorf("%s: prompt-context hook on %v, want %q", id, got, want)
		}
	}
	// A synchronous hook: Claude Code throws away what an async hook prints.
	a, _ := r.Get("claude")
	root := t.TempDir()
	harnesstest.Install(t, a, root, "kk", nil)
	var settings struct {
		Hooks map[string][]struct {
			Hooks []map[string]any `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(harnesstest.ReadFile(t, root+"/.claude/settings.json"), &settings); err != nil {
		t.Fatal(err)
	}
	for _, g := range settings.Hooks["UserPromptSubmit"] {
		for _, h := range g.Hooks {
			if strings.Contains(h["command"].(string), "prompt-context") && h["async"] != nil {
				t.Errorf("the prompt-context handler is async: %v", h)
			}
		}
	}
}

// uuidV4 is the shape of a derived session id.
var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// TestKenkeepSessionIDs: a UUID v4 is kept, lowercased; OpenCode's ses_…
// ids and Cursor's conversation ids become a UUID v4 derived from them,
// the same one every time (opencode-session-id.test.ts,
// transcript.test.ts normalizeCursorConversationId).
func TestKenkeepSessionIDs(t *testing.T) {
	for _, c := range []struct{ harness, in, want string }{
		{"opencode", "F47AC10B-58CC-4372-A567-0E02B2C3D479", "f47ac10b-58cc-4372-a567-0e02b2c3d479"},
		{"cursor", "c6b62c6f-7ead-4fd6-9922-e952131177ff", "c6b62c6f-7ead-4fd6-9922-e952131177ff"},
	} {
		got, err := hooks.NormalizeSessionID(c.harness, c.in)
		if err != nil || got != c.want {
			t.Errorf("%s %q: %q, %v; want %q", c.harness, c.in, got, err, c.want)
		}
	}
	for _, c := range []struct{ harness, in string }{
		{"opencode", "ses_14a1371d9ffeGsvaB7Eou769xq"},
		{"cursor", "conv-abc123"},
	} {
		a, err := hooks.NormalizeSessionID(c.harness, c.in)
		b, _ := hooks.NormalizeSessionID(c.harness, c.in)
		if err != nil || !uuidV4.MatchString(a) || a != b {
			t.Errorf("%s %q: %q then %q, %v; want one UUID v4", c.harness, c.in, a, b, err)
		}
	}
}

// turnsOf parses transcript text with the adapter.
func turnsOf(t *testing.T, id, text string) harness.Transcript {
	t.Helper()
	a, err := Registry().Get(id)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := a.ParseTranscript(strings.NewReader(text))
	if err != nil {
		t.Fatalf("%s: %v", id, err)
	}
	return tr
}

func jsonl(t *testing.T, lines ...any) string {
	t.Helper()
	var b strings.Builder
	for _, l := range lines {
		if s, ok := l.(string); ok {
			b.WriteString(s + "\n")
			continue
		}
		data, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
		b.WriteByte('\n')
	}
	return b.String()
}

type obj = map[string]any
type arr = []any

// TestKenkeepTranscripts: one question and its answer, in each harness's
// own transcript format, come out as a user turn and an agent turn
// (transcript.test.ts; the Cursor and Copilot lines are kenkeep's
// fixtures cursor-transcript/sample.jsonl and copilot-transcript/events.jsonl).
func TestKenkeepTranscripts(t *testing.T) {
	q, ans := "How do I run tests?", "Run npm test from the repo root."
	for _, c := range []struct {
		id, text  string
		wantAgent string
	}{
		{"claude", jsonl(t,
			obj{"type": "user", "message": obj{"role": "user", "content": q}},
			obj{"type": "assistant", "message": obj{"role": "assistant", "content": arr{obj{"type": "text", "text": ans}}}},
		), ans},
		{"codex", jsonl(t,
			obj{"type": "response_item", "payload": obj{"type": "message", "role": "user", "content": arr{obj{"type": "input_text", "text": q}}}},
			obj{"type": "response_item", "payload": obj{"type": "message", "role": "assistant", "content": arr{obj{"type": "output_text", "text": ans}}}},
		), ans},
		{"cursor", jsonl(t,
			`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"How do I run tests?"}]},"session_id":"c6b62c6f-7ead-4fd6-9922-e952131177ff"}`,
			`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Run `+"`npm test`"+` from the repo root."}]},"session_id":"c6b62c6f-7ead-4fd6-9922-e952131177ff"}`,
		), "Run `npm test` from the repo root."},
		// Copilot writes one answer in chunks (assistant.message events
		// under one turn): kk joins them as paragraphs, where kenkeep
		// joined the raw chunks with one newline.
		{"copilot", jsonl(t,
			`{"type":"session.start","data":{},"id":"s1","timestamp":"2026-06-05T00:00:00Z","parentId":null}`,
			`{"type":"user.message","data":{"content":"How do I run tests?"},"id":"u1","timestamp":"2026-06-05T00:00:01Z","parentId":null}`,
			`{"type":"assistant.turn_start","data":{},"id":"t1","timestamp":"2026-06-05T00:00:02Z","parentId":"u1"}`,
			`{"type":"assistant.message","data":{"content":"Run npm test "},"id":"a1","timestamp":"2026-06-05T00:00:03Z","parentId":"t1"}`,
			`{"type":"assistant.message","data":{"content":"from the repo root."},"id":"a2","timestamp":"2026-06-05T00:00:04Z","parentId":"t1"}`,
			`{"type":"tool.execution_start","data":{"toolName":"view","arguments":{"path":"README.md"}},"id":"x1","timestamp":"2026-06-05T00:00:05Z","parentId":"t1"}`,
			`{"type":"assistant.turn_end","data":{},"id":"t1e","timestamp":"2026-06-05T00:00:06Z","parentId":"t1"}`,
		), "Run npm test\n\nfrom the repo root."},
	} {
		tr := turnsOf(t, c.id, c.text)
		want := []harness.Turn{{Role: harness.User, Text: q}, {Role: harness.Agent, Text: c.wantAgent}}
		if !slices.Equal(tr.Turns, want) {
			t.Errorf("%s: turns %q, want %q", c.id, tr.Turns, want)
		}
		text, _ := hooks.Render(tr.Turns)
		if !strings.HasPrefix(text, "[USER]: "+q+"\n\n[AGENT]: ") {
			t.Errorf("%s: rendered %q", c.id, text)
		}
	}
}

// TestKenkeepTranscriptEdges: what each parser skips (transcript.test.ts
// "edge cases").
func TestKenkeepTranscriptEdges(t *testing.T) {
	// Codex: session_meta, blank and malformed lines are skipped, an
	// answer's text blocks are joined, a non-text block is left out, and
	// task_complete repeating the last answer adds no turn.
	tr := turnsOf(t, "codex", jsonl(t,
		obj{"type": "session_meta", "payload": obj{"id": "abc", "started_at": "2025-01-01T00:00:00Z"}},
		"",
		"not json at all",
		obj{"type": "response_item", "payload": obj{"type": "message", "role": "assistant", "content": arr{
			obj{"type": "output_text", "text": "first part"},
			obj{"type": "output_text", "text": "second part"},
			obj{"type": "tool_call", "text": "ignored"},
		}}},
		obj{"type": "event_msg", "payload": obj{"type": "task_complete", "last_agent_message": "first part\nsecond part"}},
	))
	if len(tr.Turns) != 1 || tr.Turns[0].Role != harness.Agent || !strings.Contains(tr.Turns[0].Text, "first part") ||
		!strings.Contains(tr.Turns[0].Text, "second part") || strings.Contains(tr.Turns[0].Text, "ignored") {
		t.Errorf("codex: %q", tr.Turns)
	}

	// Copilot: chunks of one answer are joined, a cut-off last line is
	// skipped, an empty file has no turns.
	tr = turnsOf(t, "copilot", jsonl(t,
		`{"type":"user.message","data":{"content":"complete line"},"id":"u1","timestamp":"2026-06-05T00:00:01Z","parentId":null}`,
		`{"type":"assistant.message","data":{"content":"part one "},"id":"a1","timestamp":"2026-06-05T00:00:02Z","parentId":"turn-1"}`,
		`{"type":"assistant.message","data":{"content":"part two"},"id":"a2","timestamp":"2026-06-05T00:00:03Z","parentId":"turn-1"}`,
		`{"type":"assistant.message","data":{"content":"trunc`,
	))
	if want := []harness.Turn{{Role: harness.User, Text: "complete line"}, {Role: harness.Agent, Text: "part one\n\npart two"}}; !slices.Equal(tr.Turns, want) {
		t.Errorf("copilot chunks: %q, want %q", tr.Turns, want)
	}
	if tr := turnsOf(t, "copilot", ""); len(tr.Turns) != 0 {
		t.Errorf("copilot, empty: %q", tr.Turns)
	}
	// Copilot: shapes Copilot never wrote (userMessage, agentMessage, a
	// message typed only by data.role) are not turns.
	tr = turnsOf(t, "copilot", jsonl(t,
		`{"type":"userMessage","data":{"role":"user","content":"invented user shape"},"timestamp":"2026-06-05T00:00:01Z","parentId":null}`,
		`{"type":"agentMessage","data":{"role":"assistant","content":"invented agent shape"},"timestamp":"2026-06-05T00:00:02Z","parentId":"a1"}`,
		`{"type":"message","data":{"role":"assistant","content":"role-only shape"},"timestamp":"2026-06-05T00:00:03Z","parentId":"a1"}`,
	))
	if len(tr.Turns) != 0 {
		t.Errorf("copilot, invented shapes: %q", tr.Turns)
	}

	// Claude: text blocks are kept; tool_use blocks, system lines and
	// malformed lines are not turns.
	tr = turnsOf(t, "claude", jsonl(t,
		"not json",
		obj{"type": "assistant", "message": obj{"role": "assistant", "content": arr{
			obj{"type": "text", "text": "Reading file..."},
			obj{"type": "tool_use", "id": "x", "name": "Read", "input": obj{}},
		}}},
		obj{"type": "system", "content": "compaction notice"},
	))
	if want := []harness.Turn{{Role: harness.Agent, Text: "Reading file..."}}; !slices.Equal(tr.Turns, want) {
		t.Errorf("claude: %q, want %q", tr.Turns, want)
	}
}

// readPaths returns the paths of the reads, in order.
func readPaths(tr harness.Transcript) []string {
	var out []string
	for _, r := range tr.Reads {
		out = append(out, r.Path)
	}
	return out
}

// TestKenkeepReads: the files a session read, for the usage ledger, in
// the order it read them, repeats kept: each harness's read tool, and the
// .md paths its shell commands name (read-extract.test.ts).
func TestKenkeepReads(t *testing.T) {
	for _, c := range []struct {
		name, id, text string
		want           []string
	}{
		{"claude Read tool", "claude", jsonl(t,
			obj{"type": "assistant", "message": obj{"role": "assistant", "content": arr{
				obj{"type": "text", "text": "reading"},
				obj{"type": "tool_use", "name": "Read", "input": obj{"file_path": "/r/a.md"}},
				obj{"type": "tool_use", "name": "Bash", "input": obj{"command": "ls"}},
			}}},
			obj{"type": "assistant", "message": obj{"role": "assistant", "content": arr{
				obj{"type": "tool_use", "name": "Read", "input": obj{"file_path": "/r/a.md"}},
			}}},
			"not json",
		), []string{"/r/a.md", "/r/a.md"}},
		{"claude nothing", "claude", "", nil},
		{"claude Read and Bash in order", "claude", jsonl(t,
			obj{"type": "assistant", "message": obj{"role": "assistant", "content": arr{
				obj{"type": "tool_use", "name": "Read", "input": obj{"file_path": "/r/a.md"}},
				obj{"type": "tool_use", "name": "Bash", "input": obj{"command": "cat nodes/b.md nodes/b.md"}},
				obj{"type": "tool_use", "name": "Bash", "input": obj{"command": "ls -la"}},
			}}},
		), []string{"/r/a.md", "nodes/b.md", "nodes/b.md"}},
		{"cursor Read and ReadFile", "cursor", jsonl(t,
			obj{"message": obj{"role": "assistant", "content": arr{
				obj{"type": "tool_use", "name": "Read", "input": obj{"offset": 0, "limit": 1, "path": "/r/a.md"}},
				obj{"type": "tool_use", "name": "ReadFile", "input": obj{"limit": 1, "offset": 0, "path": "/r/b.md"}},
				obj{"type": "tool_use", "name": "rg", "input": obj{"path": "/r", "pattern": "x"}},
			}}},
		), []string{"/r/a.md", "/r/b.md"}},
		{"cursor shell and .md searches", "cursor", jsonl(t,
			obj{"message": obj{"role": "assistant", "content": arr{
				obj{"type": "tool_use", "name": "Shell", "input": obj{"command": "sed -n 1,5p nodes/a.md"}},
				obj{"type": "tool_use", "name": "Grep", "input": obj{"path": "/r/b.md", "pattern": "x"}},
				obj{"type": "tool_use", "name": "Grep", "input": obj{"path": "/r", "pattern": "x"}},
			}}},
		), []string{"nodes/a.md", "/r/b.md"}},
		{"codex read call", "codex", jsonl(t,
			obj{"type": "response_item", "payload": obj{"type": "function_call", "name": "read", "arguments": `{"path":"/r/c.md"}`}},
			obj{"type": "response_item", "payload": obj{"type": "function_call", "name": "shell", "arguments": `{"command":"cat x"}`}},
		), []string{"/r/c.md"}},
		{"codex shell string and argv", "codex", jsonl(t,
			obj{"type": "response_item", "payload": obj{"type": "function_call", "name": "shell", "arguments": `{"command":"cat nodes/c.md"}`}},
			obj{"type": "response_item", "payload": obj{"type": "function_call", "name": "shell", "arguments": `{"command":["bash","-lc","head .ai/kenkeep/nodes/d.md"]}`}},
			obj{"type": "response_item", "payload": obj{"type": "function_call", "name": "shell", "arguments": "not json"}},
		), []string{"nodes/c.md", ".ai/kenkeep/nodes/d.md"}},
		{"copilot view", "copilot", jsonl(t,
			obj{"type": "user.message", "data": obj{"content": "hi"}},
			obj{"type": "tool.execution_start", "data": obj{"toolName": "view", "arguments": obj{"path": "/r/d.md"}}},
			obj{"type": "tool.execution_start", "data": obj{"toolName": "bash", "arguments": obj{"command": "ls"}}},
		), []string{"/r/d.md"}},
		{"copilot shell", "copilot", jsonl(t,
			obj{"type": "tool.execution_start", "data": obj{"toolName": "bash", "arguments": obj{"command": "cat nodes/d.md"}}},
			"not json",
			obj{"type": "tool.execution_start", "data": obj{"toolName": "bash", "arguments": obj{"command": "grep -n foo ."}}},
		), []string{"nodes/d.md"}},
		// OpenCode: the export's read tool parts and shell commands, in
		// document order.
		{"opencode read", "opencode", jsonl(t, obj{"messages": arr{obj{"role": "assistant", "parts": arr{
			obj{"type": "text", "text": "reading"},
			obj{"type": "tool", "tool": "read", "state": obj{"input": obj{"filePath": "/r/e.md"}}},
			obj{"type": "tool", "tool": "bash", "state": obj{"input": obj{"command": "ls"}}},
		}}}}), []string{"/r/e.md"}},
		{"opencode no tools", "opencode", jsonl(t, obj{"messages": arr{}}), nil},
		{"opencode read and bash in order", "opencode", jsonl(t, obj{"messages": arr{obj{"role": "assistant", "parts": arr{
			obj{"type": "tool", "tool": "read", "state": obj{"input": obj{"filePath": "/r/e.md"}}},
			obj{"type": "tool", "tool": "bash", "state": obj{"input": obj{"command": "cat nodes/f.md"}}},
			obj{"type": "tool", "tool": "bash", "state": obj{"input": obj{"command": "ls -la"}}},
		}}}}), []string{"/r/e.md", "nodes/f.md"}},
	} {
		if got := readPaths(turnsOf(t, c.id, c.text)); !slices.Equal(got, c.want) {
			t.Errorf("%s: reads %q, want %q", c.name, got, c.want)
		}
	}
	// kk differs on purpose: a document without "messages" is not an
	// OpenCode export, and its capture is an error (logged), where
	// kenkeep found no reads in it.
	op, _ := Registry().Get("opencode")
	if _, err := op.ParseTranscript(strings.NewReader("{}")); err == nil {
		t.Error("an OpenCode export without messages was read")
	}
}

// hookCommands returns every command string in a hooks document, in file
// order: Claude's and Codex's event → groups → handlers, Cursor's event →
// entries, Copilot's event → entries with bash.
func hookCommands(t *testing.T, data []byte) []string {
	t.Helper()
	var doc struct {
		Hooks map[string][]map[string]any `json:"hooks"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	var out []string
	events := make([]string, 0, len(doc.Hooks))
	for ev := range doc.Hooks {
		events = append(events, ev)
	}
	slices.Sort(events)
	for _, ev := range events {
		for _, e := range doc.Hooks[ev] {
			for _, k := range []string{"command", "bash"} {
				if s, ok := e[k].(string); ok {
					out = append(out, ev+": "+s)
				}
			}
			hs, _ := e["hooks"].([]any)
			for _, h := range hs {
				if m, ok := h.(map[string]any); ok {
					if s, ok := m["command"].(string); ok {
						out = append(out, ev+": "+s)
					}
				}
			}
		}
	}
	return out
}

// hooksCheck returns a's doctor check of its hook file, as "hooks".
func hooksCheck(t *testing.T, a harness.Adapter, root string) map[string]harness.Check {
	t.Helper()
	checks := harnesstest.Checks(t, a, root)
	for _, name := range []string{"hooks", a.ID() + " hooks"} {
		if c, ok := checks[name]; ok {
			return map[string]harness.Check{"hooks": c}
		}
	}
	t.Fatalf("%s: no hooks check in %v", a.ID(), checks)
	return nil
}

// TestKenkeepHookConfigs: kk's hook commands are merged into each
// harness's own hook file, the user's hooks stay, a second run writes the
// same bytes, and the hooks kenkeep wrote there (commands running its
// scripts under .ai/kenkeep/hooks/<id>/ or the older .claude/hooks/,
// .codex/hooks/, .cursor/hooks/) are replaced, so a repository moving
// from kenkeep to kk does not capture each session twice; kk doctor says
// when kenkeep's hooks are there (hooks-config.test.ts: round trip, "preserves foreign hooks and scrubs
// previously-owned kk- hooks").
func TestKenkeepHookConfigs(t *testing.T) {
	for _, c := range []struct {
		id, file string
		before   string
		kenkeep  []string // kenkeep's commands in before
		user     string   // the user's command in before
	}{
		{"claude", ".claude/settings.json", `{"hooks":{"Stop":[` +
			`{"hooks":[{"type":"command","command":"node \"$CLAUDE_PROJECT_DIR/.claude/hooks/kk-old-name.mjs\""}]},` +
			`{"hooks":[{"type":"command","command":"node ./scripts/user-stop.mjs"}]},` +
			`{"hooks":[{"type":"command","command":"node \"$CLAUDE_PROJECT_DIR/.ai/kenkeep/hooks/claude/kk-capture.cjs\""}]}],` +
			`"SessionStart":[{"hooks":[{"type":"command","command":"node \"$CLAUDE_PROJECT_DIR/.ai/kenkeep/hooks/claude/kk-session-start.cjs\""},` +
			`{"type":"command","command":"node \"$CLAUDE_PROJECT_DIR/.ai/kenkeep/hooks/claude/kk-proposal-drain.cjs\"","async":true}]}]}}`,
			[]string{".claude/hooks/kk-old-name.mjs", ".ai/kenkeep/hooks/claude/kk-capture.cjs", "kk-session-start.cjs", "kk-proposal-drain.cjs"},
			"node ./scripts/user-stop.mjs"},
		{"codex", ".codex/hooks.json", `{"hooks":{"Stop":[` +
			`{"hooks":[{"type":"command","command":"node ./.ai/kenkeep/hooks/codex/kk-capture.cjs","timeout":30}]},` +
			`{"hooks":[{"type":"command","command":"node ./.codex/hooks/kk-capture.mjs","timeout":30}]},` +
			`{"hooks":[{"type":"command","command":"./scripts/notify.sh"}]}]}}`,
			[]string{".ai/kenkeep/hooks/codex/kk-capture.cjs", ".codex/hooks/kk-capture.mjs"},
			"./scripts/notify.sh"},
		{"cursor", ".cursor/hooks.json", `{"version":1,"hooks":{"stop":[` +
			`{"command":"node ./.ai/kenkeep/hooks/cursor/kk-capture.cjs","timeout":30},` +
			`{"command":"./scripts/format.sh"}]}}`,
			[]string{".ai/kenkeep/hooks/cursor/kk-capture.cjs"},
			"./scripts/format.sh"},
		{"copilot", ".github/hooks/kk.json", `{"version":1,"hooks":{"agentStop":[` +
			`{"type":"command","bash":"d=\"$PWD\"; while [ \"$d\" != / ]; do f=\"$d/.ai/kenkeep/hooks/copilot/kk-capture.cjs\"; [ -f \"$f\" ] && exec node \"$f\"; d=$(dirname \"$d\"); done","timeoutSec":30}]}}`,
			[]string{".ai/kenkeep/hooks/copilot/kk-capture.cjs"},
			""},
	} {
		t.Run(c.id, func(t *testing.T) {
			a, err := Registry().Get(c.id)
			if err != nil {
				t.Fatal(err)
			}
			root := t.TempDir()
			harnesstest.WriteFile(t, root+"/"+c.file, []byte(c.before))
			// kk doctor says whose hooks these are.
			if c.id != "copilot" {
				harnesstest.ExpectLevel(t, hooksCheck(t, a, root), "hooks", "warn", "has kenkeep's hooks, not kk's")
			}
			harnesstest.Install(t, a, root, "kk", nil)
			first := harnesstest.ReadFile(t, root+"/"+c.file)
			cmds := strings.Join(hookCommands(t, first), "\n")
			for _, k := range c.kenkeep {
				if strings.Contains(cmds, k) {
					t.Errorf("kenkeep's hook %s is still there:\n%s", k, cmds)
				}
			}
			if c.user != "" && !strings.Contains(cmds, c.user) {
				t.Errorf("the user's hook %q is gone:\n%s", c.user, cmds)
			}
			if !strings.Contains(cmds, "kk hook capture --harness "+c.id) {
				t.Errorf("no kk capture hook:\n%s", cmds)
			}
			harnesstest.Install(t, a, root, "kk", nil)
			if second := harnesstest.ReadFile(t, root+"/"+c.file); string(second) != string(first) {
				t.Errorf("a second install changed %s:\n%s\nthen\n%s", c.file, first, second)
			}
			if c.id == "copilot" {
				return // kk owns the whole of .github/hooks/kk.json
			}
			// kenkeep's hooks beside kk's (a kenkeep run after kk's): doctor
			// warns that sessions are captured twice.
			var doc map[string]any
			if err := json.Unmarshal(first, &doc); err != nil {
				t.Fatal(err)
			}
			var kenkeepDoc map[string]any
			_ = json.Unmarshal([]byte(c.before), &kenkeepDoc)
			hooks := doc["hooks"].(map[string]any)
			for ev, v := range kenkeepDoc["hooks"].(map[string]any) {
				hooks[ev] = append(hooks[ev].([]any), v.([]any)...)
			}
			both, _ := json.Marshal(doc)
			harnesstest.WriteFile(t, root+"/"+c.file, both)
			harnesstest.ExpectLevel(t, hooksCheck(t, a, root), "hooks", "warn", "captured twice")
		})
	}
}

// TestKenkeepCopilotHookFile: Copilot's hooks go into the repository's
// .github/hooks/kk.json only ({"version": 1, "hooks": …}, every entry a
// command with timeoutSec 30, no env of its own: a recursion guard there
// would switch every hook off, and no path of this checkout), never into
// the user's ~/.copilot (hooks-config.test.ts, registry.test.ts "copilot
// adapter shape"). kk differs on purpose: no block in the committed
// .github/copilot-instructions.md (Copilot 1.0.102 takes session-start
// context from the hook's output; AGENTS.md's block points at ENTRY.md).
func TestKenkeepCopilotHookFile(t *testing.T) {
	a, _ := Registry().Get("copilot")
	root, home := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("COPILOT_HOME", "")
	harnesstest.Install(t, a, root, "kk", harnesstest.ShippedSkills())
	data := harnesstest.ReadFile(t, root+"/.github/hooks/kk.json")
	var doc struct {
		Version int                         `json:"version"`
		Hooks   map[string][]map[string]any `json:"hooks"`
	}
	if err := json.Unmarshal(data, &doc); err != nil || doc.Version != 1 {
		t.Fatalf("version %d, %v\n%s", doc.Version, err, data)
	}
	for _, ev := range []string{"sessionStart", "agentStop", "sessionEnd"} {
		if len(doc.Hooks[ev]) == 0 {
			t.Errorf("no %s hooks", ev)
		}
	}
	for ev, entries := range doc.Hooks {
		for _, e := range entries {
			if e["type"] != "command" || e["timeoutSec"] != float64(30) {
				t.Errorf("%s: %v", ev, e)
			}
			if _, has := e["env"]; has {
				t.Errorf("%s: an entry with env: %v", ev, e)
			}
			if bash, _ := e["bash"].(string); !strings.Contains(bash, "hook ") || strings.Contains(bash, root) {
				t.Errorf("%s: bash %q", ev, bash)
			}
		}
	}
	if len(harnesstest.Tree(t, home)) != 0 {
		t.Errorf("install wrote under HOME: %v", harnesstest.Tree(t, home))
	}
	for _, p := range []string{".copilot/hooks/kk.json", ".github/copilot-instructions.md"} {
		if harnesstest.Exists(root + "/" + p) {
			t.Errorf("install wrote %s", p)
		}
	}
	// The block kenkeep kept in .github/copilot-instructions.md (a stale
	// copy of its catalog, with the path of the machine that wrote it)
	// goes; the user's text stays; a file left empty goes.
	const instr = "/.github/copilot-instructions.md"
	kenkeepBlock := "<!-- kk:start -->\n# Knowledge base index\n\n_0 nodes_\n\nKENKEEP ATTENTION\nPath: /home/dev/app\n<!-- kk:end -->\n"
	harnesstest.WriteFile(t, root+instr, []byte("USER CONTENT HERE\n\n"+kenkeepBlock))
	changes := harnesstest.Install(t, a, root, "kk", harnesstest.ShippedSkills())
	if got := string(harnesstest.ReadFile(t, root+instr)); got != "USER CONTENT HERE\n" {
		t.Errorf("%s after install: %q (changes %v)", instr, got, changes)
	}
	if changes := harnesstest.Install(t, a, root, "kk", harnesstest.ShippedSkills()); len(changes) != 0 {
		t.Errorf("a second install changed %v", changes)
	}
	harnesstest.WriteFile(t, root+instr, []byte(kenkeepBlock))
	harnesstest.Install(t, a, root, "kk", harnesstest.ShippedSkills())
	if harnesstest.Exists(root + instr) {
		t.Errorf("%s with only kenkeep's block is still there", instr)
	}
}

// TestKenkeepHookEvents: the harness events kk's hooks are installed on,
// in each harness's own names, no translation (registry.test.ts "adapter
// shape", hooks-config.test.ts). kk differs on purpose for Codex, whose
// SessionEnd (0.145 and later) also captures; OpenCode's events are in
// its plugin (harnesses/opencode TestPluginRunsKKHooks).
func TestKenkeepHookEvents(t *testing.T) {
	for id, want := range map[string]map[harness.Event][]string{
		"claude": {
			harness.Capture:      {"Stop", "PreCompact", "SessionEnd"},
			harness.SessionStart: {"SessionStart"},
		},
		"codex": {
			harness.Capture:      {"Stop", "PreCompact", "SessionEnd"},
			harness.SessionStart: {"SessionStart"},
		},
		"cursor": {
			harness.Capture:      {"stop", "preCompact", "sessionEnd"},
			harness.SessionStart: {"sessionStart"},
		},
		"copilot": {
			harness.Capture:      {"agentStop", "preCompact", "sessionEnd"},
			harness.SessionStart: {"sessionStart"},
		},
	} {
		a, _ := Registry().Get(id)
		got := installedEvents(t, a)
		for ev, on := range want {
			g := slices.Clone(got[ev])
			slices.Sort(g)
			w := slices.Clone(on)
			slices.Sort(w)
			if !slices.Equal(g, w) {
				t.Errorf("%s: %s on %v, want %v", id, ev, g, w)
			}
		}
	}
}

// TestKenkeepOpenCodeContext: in a repository kenkeep set up for
// OpenCode, kk init puts its plugin where kenkeep's was (one
// ./plugins/kk.mjs entry), replaces kenkeep's generated
// .opencode/AGENTS.md in "instructions" with kk's context file and
// removes it, and keeps the user's entries (opencode-plugin.test.ts
// "registerOpenCodePlugin"). A .opencode/AGENTS.md of the user's stays,
// listed.
func TestKenkeepOpenCodeContext(t *testing.T) {
	a, _ := Registry().Get("opencode")
	root := t.TempDir()
	harnesstest.WriteFile(t, root+"/.opencode/opencode.json", []byte(`{"model": "x/y", "plugin": ["safety", "./plugins/kk.mjs"], "instructions": ["docs/style.md", ".opencode/AGENTS.md"]}`))
	harnesstest.WriteFile(t, root+"/.opencode/AGENTS.md", []byte("<!-- [kenkeep] auto-generated session-start context. Re-run init to remove. -->\n# kenkeep\n"))
	harnesstest.Install(t, a, root, "kk", nil)
	var cfg struct {
		Model        string   `json:"model"`
		Plugin       []string `json:"plugin"`
		Instructions []string `json:"instructions"`
	}
	if err := json.Unmarshal(harnesstest.ReadFile(t, root+"/.opencode/opencode.json"), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Model != "x/y" || !slices.Equal(cfg.Plugin, []string{"safety", "./plugins/kk.mjs"}) ||
		!slices.Equal(cfg.Instructions, []string{"docs/style.md", ".ai/kenkeep/.state/opencode-context.md"}) {
		t.Errorf("opencode.json: %+v", cfg)
	}
	if harnesstest.Exists(root + "/.opencode/AGENTS.md") {
		t.Error("kenkeep's .opencode/AGENTS.md is still there")
	}

	// The user's own .opencode/AGENTS.md is theirs.
	root = t.TempDir()
	harnesstest.WriteFile(t, root+"/.opencode/opencode.json", []byte(`{"instructions": [".opencode/AGENTS.md"]}`))
	harnesstest.WriteFile(t, root+"/.opencode/AGENTS.md", []byte("# Our agent rules\n"))
	harnesstest.Install(t, a, root, "kk", nil)
	if err := json.Unmarshal(harnesstest.ReadFile(t, root+"/.opencode/opencode.json"), &cfg); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.Instructions, []string{".opencode/AGENTS.md", ".ai/kenkeep/.state/opencode-context.md"}) || !harnesstest.Exists(root+"/.opencode/AGENTS.md") {
		t.Errorf("the user's .opencode/AGENTS.md: %+v", cfg)
	}
}
