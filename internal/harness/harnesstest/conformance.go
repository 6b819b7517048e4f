package harnesstest

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/kk-project/kk/internal/harness"
)

// Conformance runs the contract every harness adapter keeps, whatever its
// harness; an adapter's own tests cover only its quirks. dir is the
// adapter's testdata folder, in the layout every adapter shares:
//
//	payloads/*.json          hook payloads the harness sends
//	transcripts/<name>       transcripts (recorded from the real harness,
//	                         named <version>-<case>, or synthetic-*), each
//	                         with <name>.parsed, its golden parse
//	mcp/user.<ext>           a project MCP file as the user's tools write it
//	mcp/want.txt             text kk's registration puts into it
//
// update rewrites the golden files.
func Conformance(t *testing.T, a harness.Adapter, dir string, update bool) {
	t.Run("spec", func(t *testing.T) { conformSpec(t, a) })
	t.Run("install", func(t *testing.T) { conformInstall(t, a) })
	t.Run("payloads", func(t *testing.T) { conformPayloads(t, a, filepath.Join(dir, "payloads")) })
	t.Run("hook output", func(t *testing.T) { conformHookOutput(t, a) })
	t.Run("context cap", func(t *testing.T) { conformContextCap(t, a) })
	t.Run("transcripts", func(t *testing.T) {
		if n := Transcripts(t, a, filepath.Join(dir, "transcripts"), update); n == 0 {
			t.Error("no transcript fixtures")
		}
		conformTranscriptEdges(t, a, filepath.Join(dir, "transcripts"))
	})
	t.Run("headless prompt", func(t *testing.T) { conformHeadlessPrompt(t, a) })
	t.Run("model setting", func(t *testing.T) { conformModel(t, a) })
	t.Run("mcp", func(t *testing.T) { conformMCP(t, a, filepath.Join(dir, "mcp")) })
}

// conformSpec: the spec passes its own check, the Adapter methods say what
// it says, detection follows its markers, and a launch names its prompt.
func conformSpec(t *testing.T, a harness.Adapter) {
	s := a.Spec()
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	if a.ID() != s.ID || a.Name() != s.Name || a.Binary() != s.Binary || a.InstallHint() != s.InstallHint {
		t.Errorf("the methods disagree with the spec: %q %q %q %q", a.ID(), a.Name(), a.Binary(), a.InstallHint())
	}
	if p := a.Paths(); !slices.Equal(p.Config, s.Files.Config) || p.Skills != s.Files.Skills || !slices.Equal(p.Other, s.Files.Other) {
		t.Errorf("Paths %+v, spec files %+v", p, s.Files)
	}
	if a.Detect(func(string) string { return "" }) {
		t.Error("detected in an empty environment")
	}
	for _, m := range s.Detect {
		v := m.Value
		if v == "" {
			v = "anything"
		}
		if !a.Detect(Env(map[string]string{m.Name: v})) {
			t.Errorf("not detected with %s=%s", m.Name, v)
		}
	}
	if args := a.LaunchArgs("/kk-curate", harness.Model{}); !slices.ContainsFunc(args, func(s string) bool { return strings.Contains(s, "kk-curate") }) {
		t.Errorf("LaunchArgs(/kk-curate) = %q names no kk-curate", args)
	}
}

// conformInstall: install writes the spec's files next to the user's,
// again changes nothing, a kk command with spaces is written so the
// harness can run it and replaced by the next install, and uninstall
// gives the folder back as it was.
func conformInstall(t *testing.T, a harness.Adapter) {
	root := t.TempDir()
	WriteFile(t, filepath.Join(root, "README.md"), []byte("the user's file\n"))
	before := Tree(t, root)
	skills := ShippedSkills()
	if ch := Install(t, a, root, "kk", skills); len(ch) == 0 {
		t.Fatal("install changed nothing")
	}
	s := a.Spec()
	for _, f := range append(append([]string{}, s.Files.Config...), s.Files.Skills) {
		if f != "" && !Exists(filepath.Join(root, filepath.FromSlash(f))) {
			t.Errorf("%s is missing after install", f)
		}
	}
	installed := Tree(t, root)
	if ch := Install(t, a, root, "kk", skills); len(ch) != 0 {
		t.Errorf("a second install changed %v", ch)
	}
	if !mapsEqual(installed, Tree(t, root)) {
		t.Error("a second install changed the files")
	}
	for name, c := range Checks(t, a, root) {
		if c.Level == harness.LevelError && !strings.Contains(strings.ToLower(c.Name), "binary") && !strings.Contains(strings.ToLower(c.Message), "path") {
			t.Errorf("doctor after install: %s is an error: %s", name, c.Message)
		}
	}

	const spaced = "/opt/my tools/kk"
	Install(t, a, root, spaced, skills)
	if !treeMentions(t, root, "my tools/kk") {
		t.Errorf("no installed file runs %q", spaced)
	}
	Install(t, a, root, "kk", skills)
	if treeMentions(t, root, "my tools") {
		t.Error("the next install kept hooks running the old kk command")
	}

	Uninstall(t, a, root, skills)
	if after := Tree(t, root); !mapsEqual(before, after) {
		t.Errorf("uninstall left %v, want only %v", keys(after), keys(before))
	}
}

// conformPayloads: every recorded payload parses; what is not a JSON
// object is an error, never a panic.
func conformPayloads(t *testing.T, a harness.Adapter, dir string) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) == 0 {
		t.Fatalf("no payload fixtures in %s", dir)
	}
	for _, f := range files {
		if _, err := a.ParseHookInput(ReadFile(t, f)); err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
		}
	}
	for _, bad := range []string{"", "not json", "[]", "null", "42", `"a string"`} {
		if _, err := a.ParseHookInput([]byte(bad)); err == nil {
			t.Errorf("payload %q parsed", bad)
		}
	}
}

// conformHookOutput: session-start context reaches every harness (printed
// in its format, or written where it reads it); the events that hand the
// model nothing print nothing.
func conformHookOutput(t *testing.T, a harness.Adapter) {
	const text = "# kk\n\nkk-conformance-context <b> & \"quotes\""
	out, ok := a.HookOutput(harness.SessionStart, text)
	_, writes := a.(harness.ContextWriter)
	switch {
	case ok && len(bytes.TrimSpace(out)) == 0:
		t.Error("session-start output is empty")
	case ok && bytes.HasPrefix(bytes.TrimSpace(out), []byte("{")):
		var v any
		if err := json.Unmarshal(out, &v); err != nil {
			t.Errorf("session-start output is not JSON: %v\n%s", err, out)
		} else if s, _ := json.Marshal(v); !bytes.Contains(s, []byte("kk-conformance-context")) {
			t.Errorf("session-start output lacks the context: %s", out)
		}
	case !ok && !writes:
		t.Error("the harness gets no session-start context: no hook output and no context file")
	}
	for _, ev := range []harness.Event{harness.Capture, harness.ProposalDrain, harness.LintTick} {
		if out, ok := a.HookOutput(ev, text); ok || len(out) > 0 {
			t.Errorf("%s prints %q", ev, out)
		}
	}
	// The graph hint has a channel exactly where kk installs its hook (the
	// harness's end-of-turn event), and the channel carries the text.
	root := t.TempDir()
	Install(t, a, root, "kk", ShippedSkills())
	installed := treeMentions(t, root, "hook "+string(harness.GraphHint)+" ")
	out, ok = a.HookOutput(harness.GraphHint, text)
	switch {
	case ok != installed:
		t.Errorf("graph-hint: a channel %v, but its hook installed %v", ok, installed)
	case ok:
		var v any
		if err := json.Unmarshal(out, &v); err != nil {
			t.Errorf("graph-hint output is not JSON: %v\n%s", err, out)
		} else if s, _ := json.Marshal(v); !bytes.Contains(s, []byte("kk-conformance-context")) {
			t.Errorf("graph-hint output lacks the text: %s", out)
		}
	}
}

// conformContextCap: every context a hook prints for the model (session
// start, prompt context, the graph hint) is cut to harness.ContextLimit
// with harness.CutNote, as CapContext cuts it, whatever the harness: a
// knowledge base's ENTRY.md can be far longer than a harness hands the
// model whole.
func conformContextCap(t *testing.T, a harness.Adapter) {
	long := "# kk\n\nkk-conformance-context\n" + strings.Repeat("- a line of a very large ENTRY.md or graph\n", 3*harness.ContextLimit/40)
	for _, ev := range []harness.Event{harness.SessionStart, harness.PromptContext, harness.GraphHint} {
		out, ok := a.HookOutput(ev, long)
		if !ok || !bytes.HasPrefix(bytes.TrimSpace(out), []byte("{")) {
			continue // no channel, or plain text the harness caps itself
		}
		var v any
		if err := json.Unmarshal(out, &v); err != nil {
			t.Errorf("%s: output is not JSON: %v", ev, err)
			continue
		}
		text := longestString(v)
		if !strings.Contains(text, "kk-conformance-context") {
			t.Errorf("%s: output lacks the context", ev)
			continue
		}
		if n := len(utf16.Encode([]rune(text))); n > harness.ContextLimit || !strings.HasSuffix(text, harness.CutNote) {
			t.Errorf("%s: a context of %d characters is printed with %d, not cut to %d with the note %q", ev, len(long), n, harness.ContextLimit, harness.CutNote)
		}
	}
}

// longestString is the longest string anywhere in a decoded JSON value.
func longestString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case map[string]any:
		best := ""
		for _, x := range v {
			if s := longestString(x); len(s) > len(best) {
				best = s
			}
		}
		return best
	case []any:
		best := ""
		for _, x := range v {
			if s := longestString(x); len(s) > len(best) {
				best = s
			}
		}
		return best
	}
	return ""
}

// conformTranscriptEdges: text that is not a transcript gives no turn,
// and a JSON Lines transcript cut off mid-line still parses.
func conformTranscriptEdges(t *testing.T, a harness.Adapter, dir string) {
	for _, junk := range []string{"", "not a transcript\nat all\n", "\x00\x00\x00"} {
		tr, err := a.ParseTranscript(strings.NewReader(junk))
		if err == nil && len(tr.Turns) > 0 {
			t.Errorf("%q gave turns %v", junk, tr.Turns)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	for _, f := range files {
		data := ReadFile(t, f)
		cut := bytes.TrimRight(data, "\n")
		cut = cut[:len(cut)-len(cut)/(4*bytes.Count(cut, []byte("\n"))+4)]
		if _, err := a.ParseTranscript(bytes.NewReader(cut)); err != nil {
			t.Errorf("%s cut off mid-line: %v", filepath.Base(f), err)
		}
	}
}

// conformHeadlessPrompt: a prompt over the spec's argument limit never
// goes on the command line, and every prompt reaches the harness.
func conformHeadlessPrompt(t *testing.T, a harness.Adapter) {
	s := a.Spec()
	for _, tc := range []struct {
		name   string
		prompt string
	}{
		{"short", "kk-conformance-prompt"},
		{"over the limit", "kk-conformance-prompt " + strings.Repeat("x", s.PromptArgMax)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := Recorder(t, s.Binary, "")
			_, _ = a.Headless(context.Background(), harness.HeadlessRun{Prompt: tc.prompt, Timeout: 20 * time.Second}) // the fake answers nothing: only what it got counts
			args := RecordedArgs(t, rec)
			stdin := string(ReadFile(t, filepath.Join(rec, "stdin")))
			inArgs := slices.ContainsFunc(args, func(arg string) bool { return strings.Contains(arg, tc.prompt) })
			if len(tc.prompt) > s.PromptArgMax && slices.ContainsFunc(args, func(arg string) bool { return len(arg) > s.PromptArgMax }) {
				t.Errorf("an argument longer than the spec's %d bytes", s.PromptArgMax)
			}
			if !inArgs && !strings.Contains(stdin, tc.prompt) {
				t.Errorf("the prompt reached %s neither as an argument nor on stdin", s.Binary)
			}
			if env := string(ReadFile(t, filepath.Join(rec, "env"))); env != "1" {
				t.Errorf("the headless run lacks %s=1 (got %q)", harness.RecursionEnv, env)
			}
		})
	}
}

// conformModel: a model setting {name, effort} reaches the harness's
// headless command line and its launch command line as the harness's own
// flags (the spec's ModelFlags); what the harness has no flag for is
// reported, not passed; a setting for another harness passes nothing.
func conformModel(t *testing.T, a harness.Adapter) {
	s := a.Spec()
	const name = "kk-conformance-model"
	m := harness.Model{Name: name, Effort: "high"}
	want, ignored := s.ModelArgs(m)
	if s.Model.Name == nil {
		t.Fatal("the harness takes no model name")
	}
	if !slices.Contains(want, name) {
		t.Fatalf("ModelArgs(%+v) = %q names no model", m, want)
	}
	if (s.Model.Effort == nil) != (len(ignored) == 1) || (s.Model.Effort != nil && !slices.ContainsFunc(want, func(arg string) bool { return strings.Contains(arg, "high") })) {
		t.Errorf("effort high: args %q, reported %q; the spec's effort flag is %q", want, ignored, s.Model.Effort)
	}
	rec := Recorder(t, s.Binary, "")
	_, _ = a.Headless(context.Background(), harness.HeadlessRun{Prompt: "kk-conformance-prompt", Model: m, Timeout: 20 * time.Second}) // only the command line counts
	if args := RecordedArgs(t, rec); !containsRun(args, want) {
		t.Errorf("the headless command line %q lacks %q", args, want)
	}
	if args := a.LaunchArgs("/kk-curate", m); !containsRun(args, want) {
		t.Errorf("the launch command line %q lacks %q", args, want)
	}
	other := harness.Model{Harness: "another-harness", Name: name, Effort: "high"}
	_, _ = a.Headless(context.Background(), harness.HeadlessRun{Prompt: "kk-conformance-prompt", Model: other, Timeout: 20 * time.Second})
	if args := RecordedArgs(t, rec); slices.Contains(args, name) {
		t.Errorf("another harness's model reached the command line: %q", args)
	}
	if p := s.ModelProblems("proposalModel", other); len(p) != 0 {
		t.Errorf("another harness's setting is reported as a problem: %q", p)
	}
}

// containsRun reports whether want appears in args as one run of
// consecutive arguments.
func containsRun(args, want []string) bool {
	if len(want) == 0 {
		return true
	}
	for i := 0; i+len(want) <= len(args); i++ {
		if slices.Equal(args[i:i+len(want)], want) {
			return true
		}
	}
	return false
}

// conformMCP: kk's MCP server is registered in the harness's project MCP
// file (see CheckMCPRegistrar).
func conformMCP(t *testing.T, a harness.Adapter, dir string) {
	r, ok := a.(harness.MCPRegistrar)
	if !ok {
		t.Fatal("the adapter registers no MCP server")
	}
	users, _ := filepath.Glob(filepath.Join(dir, "user.*"))
	if len(users) != 1 {
		t.Fatalf("want one %s/user.<ext>, found %v", dir, users)
	}
	CheckMCPRegistrar(t, r, ReadFile(t, users[0]), strings.TrimRight(string(ReadFile(t, filepath.Join(dir, "want.txt"))), "\n"))
}

// treeMentions reports whether a file under root holds s.
func treeMentions(t *testing.T, root, s string) bool {
	for _, data := range Tree(t, root) {
		if strings.Contains(data, s) {
			return true
		}
	}
	return false
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
