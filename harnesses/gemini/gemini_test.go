package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/kk-project/kk/internal/frontmatter"
	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/harness/harnesstest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	harnesstest.Golden(t, filepath.Join("testdata", "golden", name), got, *update)
}

func writeFile(t *testing.T, p string, data string) {
	t.Helper()
	harnesstest.WriteFile(t, p, []byte(data))
}

// The doctor check levels.
const (
	levelOK    = harness.LevelOK
	levelWarn  = harness.LevelWarn
	levelError = harness.LevelError
)

// The shared helpers, under the names the tests use.
var (
	readFile = harnesstest.ReadFile
	tree     = harnesstest.Tree

	shippedSkills = harnesstest.ShippedSkills
	rawJSON       = harness.RawJSON
)

func opts(root string) harness.InstallOptions {
	return harness.InstallOptions{Root: root, Command: "kk", Skills: shippedSkills()}
}

// validateSettings checks a settings.json against the vendored excerpt of
// Gemini CLI's settings schema, and kk's entries against the hook
// reference (a command hook needs type "command" and a command).
func validateSettings(t *testing.T, data []byte) {
	t.Helper()
	schemaDoc, err := jsonschema.UnmarshalJSON(bytes.NewReader(readFile(t, "testdata/settings.schema.json")))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	const url = "https://raw.githubusercontent.com/google-gemini/gemini-cli/main/schemas/settings.schema.json"
	if err := c.AddResource(url, schemaDoc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(doc); err != nil {
		t.Errorf("settings do not match Gemini's schema: %v\n%s", err, data)
	}
	var s struct {
		Hooks map[string]json.RawMessage `json:"hooks"`
	}
	json.Unmarshal(data, &s)
	for ev, raw := range s.Hooks {
		var groups []struct {
			Hooks []map[string]any `json:"hooks"`
		}
		if json.Unmarshal(raw, &groups) != nil {
			continue
		}
		for _, g := range groups {
			for _, h := range g.Hooks {
				if h["type"] != "command" || h["command"] == "" {
					t.Errorf("%s: hook %v is not a command hook", ev, h)
				}
			}
		}
	}
}

func TestMetadata(t *testing.T) {
	a := New()
	if a.ID() != "gemini" || a.Binary() != "gemini" || a.Name() != "Gemini CLI" || a.InstallHint() == "" {
		t.Fatalf("metadata: %q %q %q", a.ID(), a.Binary(), a.Name())
	}
	if got := a.LaunchArgs("/kk-curate"); !slices.Equal(got, []string{"-p", "/kk-curate"}) {
		t.Errorf("LaunchArgs = %q", got)
	}
	if !a.Detect(func(k string) string { return map[string]string{"GEMINI_CLI": "1"}[k] }) || a.Detect(func(string) string { return "" }) {
		t.Error("detection by GEMINI_CLI=1")
	}
	if p := a.Paths(); !slices.Equal(p.Config, []string{".gemini/settings.json"}) || p.Skills != ".gemini/skills" || !slices.Equal(p.Other, []string{".gemini/commands"}) {
		t.Errorf("Paths = %+v", p)
	}
}

func TestInstallFresh(t *testing.T) {
	root := t.TempDir()
	changes, err := New().Install(context.Background(), opts(root))
	if err != nil {
		t.Fatal(err)
	}
	settings := readFile(t, filepath.Join(root, ".gemini/settings.json"))
	golden(t, "settings.fresh.json", settings)
	validateSettings(t, settings)
	golden(t, "kk-curate.toml", readFile(t, filepath.Join(root, ".gemini/commands/kk-curate.toml")))
	want := []harness.Change{{Path: ".gemini/settings.json", Action: "created"}}
	names := []string{"kk-add", "kk-bootstrap", "kk-curate", "kk-migrate", "kk-session-extract"}
	for _, n := range names {
		want = append(want, harness.Change{Path: ".gemini/commands/" + n + ".toml", Action: "created"})
	}
	for _, n := range names {
		want = append(want, harness.Change{Path: ".gemini/skills/" + n + "/SKILL.md", Action: "created"})
	}
	if !reflect.DeepEqual(changes, want) {
		t.Errorf("changes = %v", changes)
	}
	if strings.Contains(string(settings), "KK_INTERNAL") {
		t.Error("the recursion guard was written into the hooks' environment")
	}

	before := tree(t, root)
	changes, err = New().Install(context.Background(), opts(root))
	if err != nil || len(changes) != 0 {
		t.Fatalf("second install: %v %v", changes, err)
	}
	if !reflect.DeepEqual(before, tree(t, root)) {
		t.Error("second install changed the tree")
	}

	// Without a skill list, uninstall removes the commands and skills of
	// the skills this kk ships.
	changes, err = New().Uninstall(context.Background(), harness.InstallOptions{Root: root})
	if err != nil || len(changes) != 11 || changes[0] != (harness.Change{Path: ".gemini/settings.json", Action: "removed"}) {
		t.Fatalf("uninstall: %v %v", changes, err)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("uninstall left %v", entries)
	}
}

// A user's settings survive install, upgrade (another kk command) and
// uninstall untouched.
func TestMergeKeepsUserSettings(t *testing.T) {
	user := readFile(t, "testdata/settings/user.json")
	if o, _ := harness.ParseObject(user); o == nil {
		t.Fatal("fixture does not parse")
	} else if canon, _ := o.Indented(); !bytes.Equal(canon, user) {
		t.Fatalf("fixture is not in the canonical layout:\n%s", canon)
	}
	validateSettings(t, user)
	root := t.TempDir()
	p := filepath.Join(root, ".gemini/settings.json")
	writeFile(t, p, string(user))
	userCommand := "description = \"mine\"\nprompt = \"do it\"\n"
	writeFile(t, filepath.Join(root, ".gemini/commands/deploy.toml"), userCommand)

	a := New()
	changes, err := a.Install(context.Background(), opts(root))
	if err != nil {
		t.Fatal(err)
	}
	if changes[0] != (harness.Change{Path: ".gemini/settings.json", Action: "updated"}) {
		t.Errorf("changes = %v", changes)
	}
	merged := readFile(t, p)
	golden(t, "settings.merged.json", merged)
	validateSettings(t, merged)
	keepsUser(t, user, merged)

	if changes, err := a.Install(context.Background(), opts(root)); err != nil || len(changes) != 0 {
		t.Errorf("second install: %v %v", changes, err)
	}

	o := opts(root)
	o.Command = "/opt/kk dev/kk"
	if _, err := a.Install(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	upgraded := readFile(t, p)
	golden(t, "settings.upgraded.json", upgraded)
	validateSettings(t, upgraded)
	keepsUser(t, user, upgraded)

	if _, err := a.Uninstall(context.Background(), opts(root)); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, p); !bytes.Equal(got, user) {
		t.Errorf("uninstall did not restore the user's settings:\n%s", got)
	}
	if got := tree(t, root); !reflect.DeepEqual(got, map[string]string{".gemini/settings.json": string(user), ".gemini/commands/deploy.toml": userCommand}) {
		t.Errorf("after uninstall: %v", got)
	}
}

// keepsUser checks that every key and hook of user is in merged, unchanged.
func keepsUser(t *testing.T, user, merged []byte) {
	t.Helper()
	var u, m map[string]any
	json.Unmarshal(user, &u)
	json.Unmarshal(merged, &m)
	for k, v := range u {
		if k == "hooks" {
			continue
		}
		if !reflect.DeepEqual(m[k], v) {
			t.Errorf("user key %q changed: %v", k, m[k])
		}
	}
	uh, mh := u["hooks"].(map[string]any), m["hooks"].(map[string]any)
	for ev, groups := range uh {
		got, _ := mh[ev].([]any)
		for i, g := range groups.([]any) {
			if i >= len(got) || !reflect.DeepEqual(got[i], g) {
				t.Errorf("user hook group %s[%d] changed", ev, i)
			}
		}
	}
}

func TestInstallReplacesKKEntriesInPlace(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, ".gemini/settings.json")
	writeFile(t, p, string(readFile(t, "testdata/settings/moved.json")))
	if _, err := New().Install(context.Background(), harness.InstallOptions{Root: root, Command: "kk"}); err != nil {
		t.Fatal(err)
	}
	got := readFile(t, p)
	golden(t, "settings.moved.json", got)
	validateSettings(t, got)
	var s struct {
		Hooks map[string][]struct {
			Matcher string      `json:"matcher"`
			Hooks   []hookEntry `json:"hooks"`
		} `json:"hooks"`
	}
	json.Unmarshal(got, &s)
	start := s.Hooks["SessionStart"]
	if len(start) != 1 || start[0].Matcher != "startup" || len(start[0].Hooks) != 3 ||
		start[0].Hooks[0].Name != "greet" || start[0].Hooks[1].Command != "kk hook session-start --harness gemini" ||
		start[0].Hooks[2].Name != "kk-proposal-drain" {
		t.Errorf("SessionStart = %+v", start)
	}
	if after := s.Hooks["AfterAgent"]; len(after) != 1 || len(after[0].Hooks) != 1 || after[0].Hooks[0].Name != "kk-capture" {
		t.Errorf("AfterAgent = %+v (a retired kk hook must go)", after)
	}

	if _, err := New().Uninstall(context.Background(), harness.InstallOptions{Root: root}); err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"hooks\": {\n    \"SessionStart\": [\n      {\n        \"matcher\": \"startup\",\n        \"hooks\": [\n          {\n            \"name\": \"greet\",\n            \"type\": \"command\",\n            \"command\": \"echo hi\"\n          }\n        ]\n      }\n    ],\n    \"disabled\": [\n      \"greet\"\n    ]\n  }\n}\n"
	if got := string(readFile(t, p)); got != want {
		t.Errorf("after uninstall:\n%s", got)
	}
}

func TestInstallBadInputWritesNothing(t *testing.T) {
	cases := map[string]struct {
		settings string
		skills   map[string][]byte
		errPart  string
	}{
		"hooks not an object": {`{"hooks": []}`, nil, `field "hooks" is not a JSON object`},
		"event not a list":    {`{"hooks": {"SessionStart": {"x": 1}}}`, nil, `"hooks.SessionStart" is not a list`},
		"not an object":       {`[1]`, nil, "settings.json"},
		"not JSON":            {`{"a":`, nil, "settings.json"},
		"shell in skill":      {"", map[string][]byte{"kk-x": []byte("---\nname: kk-x\ndescription: d\n---\n\nRun !{rm -rf /}.\n")}, `"!{"`},
		"file in skill":       {"", map[string][]byte{"kk-x": []byte("---\nname: kk-x\ndescription: d\n---\n\nRead @{secrets.txt}.\n")}, `"@{"`},
		"no description":      {"", map[string][]byte{"kk-x": []byte("---\nname: kk-x\n---\n\nBody.\n")}, "no description"},
		"bad name":            {"", map[string][]byte{"../x": []byte("---\ndescription: d\n---\nB\n")}, "skill name"},
	}
	for name, c := range cases {
		root := t.TempDir()
		if c.settings != "" {
			writeFile(t, filepath.Join(root, ".gemini/settings.json"), c.settings)
		}
		before := tree(t, root)
		o := opts(root)
		if c.skills != nil {
			o.Skills = c.skills
		}
		_, err := New().Install(context.Background(), o)
		if err == nil || !strings.Contains(err.Error(), c.errPart) {
			t.Errorf("%s: err = %v, want one containing %q", name, err, c.errPart)
		}
		if !reflect.DeepEqual(before, tree(t, root)) {
			t.Errorf("%s: bad input changed the tree", name)
		}
	}
}

func TestCommandsParseBack(t *testing.T) {
	for name, skill := range shippedSkills() {
		data, err := renderCommand(name, skill)
		if err != nil {
			t.Fatal(err)
		}
		got := parseTOML(t, string(data))
		doc, _ := frontmatter.Parse(skill)
		desc, _ := doc.Value("description")
		body := strings.TrimLeft(string(doc.Body()), "\n")
		if got["description"] != desc || got["prompt"] != body {
			t.Errorf("%s: TOML does not read back as the skill:\n%s", name, data)
		}
		if len(got) != 2 {
			t.Errorf("%s: keys %v", name, got)
		}
	}
}

func TestTOMLEscaping(t *testing.T) {
	bodies := []string{
		"plain\n",
		"has ''' and \"\"\" and a \\ backslash\n",
		"ends with a quote'",
		"control \x01 char and\ttab and \r\n line\n",
		"\"\"\"\n",
		"quote at the end\"",
		"unicode: é — 日本\n",
	}
	for _, b := range bodies {
		src := "description = " + tomlBasic(b) + "\nprompt = " + tomlMultiline(b) + "\n"
		got := parseTOML(t, src)
		if got["description"] != b || got["prompt"] != b {
			t.Errorf("%q round-trips as %q / %q\n%s", b, got["description"], got["prompt"], src)
		}
	}
	if !strings.HasPrefix(tomlMultiline("plain\n"), "'''") {
		t.Error("plain text should use a literal string")
	}
}

// parseTOML reads the subset of TOML kk writes: comments, blank lines and
// key = value lines whose value is a basic, literal or multi-line string.
func parseTOML(t *testing.T, src string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for len(src) > 0 {
		src = strings.TrimLeft(src, " \t\r\n")
		if src == "" {
			break
		}
		if src[0] == '#' {
			i := strings.IndexByte(src, '\n')
			if i < 0 {
				break
			}
			src = src[i+1:]
			continue
		}
		eq := strings.Index(src, " = ")
		if eq < 0 {
			t.Fatalf("no key = value at %q", src)
		}
		key := src[:eq]
		src = src[eq+3:]
		var val string
		switch {
		case strings.HasPrefix(src, "'''"):
			src = strings.TrimPrefix(strings.TrimPrefix(src[3:], "\r"), "\n")
			end := strings.Index(src, "'''")
			if end < 0 {
				t.Fatalf("unclosed ''' for %s", key)
			}
			val, src = src[:end], src[end+3:]
		case strings.HasPrefix(src, `"""`):
			src = strings.TrimPrefix(src[3:], "\n")
			val, src = basicString(t, src, `"""`)
		case strings.HasPrefix(src, `"`):
			val, src = basicString(t, src[1:], `"`)
		default:
			t.Fatalf("unexpected value for %s: %q", key, src)
		}
		if _, dup := out[key]; dup {
			t.Fatalf("duplicate key %s", key)
		}
		out[key] = val
		if i := strings.IndexByte(src, '\n'); i >= 0 {
			if rest := strings.TrimSpace(src[:i]); rest != "" {
				t.Fatalf("text after the value of %s: %q", key, rest)
			}
			src = src[i+1:]
		} else if strings.TrimSpace(src) != "" {
			t.Fatalf("text after the value of %s: %q", key, src)
		} else {
			src = ""
		}
	}
	return out
}

// basicString decodes escapes up to the closing delimiter and returns the
// value and the rest.
func basicString(t *testing.T, s, closing string) (string, string) {
	t.Helper()
	var b strings.Builder
	for i := 0; i < len(s); {
		if strings.HasPrefix(s[i:], closing) {
			return b.String(), s[i+len(closing):]
		}
		c := s[i]
		if closing == `"` && (c == '\n' || c == '\r') {
			t.Fatalf("newline in a one-line string")
		}
		if c < 0x20 && c != '\t' && c != '\n' && (closing == `"` || c != '\r' || !strings.HasPrefix(s[i:], "\r\n")) {
			t.Fatalf("raw control character %#x in a basic string", c)
		}
		if c != '\\' {
			b.WriteByte(c)
			i++
			continue
		}
		if i+1 >= len(s) {
			t.Fatal("dangling backslash")
		}
		switch e := s[i+1]; e {
		case '"', '\\':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'f':
			b.WriteByte('\f')
		case 'r':
			b.WriteByte('\r')
		case 'u':
			var r rune
			for _, h := range s[i+2 : i+6] {
				r = r*16 + rune(strings.IndexRune("0123456789ABCDEF", h))
			}
			b.WriteRune(r)
			i += 4
		default:
			t.Fatalf("unknown escape \\%c", e)
		}
		i += 2
	}
	t.Fatalf("unclosed %s string", closing)
	return "", ""
}

func TestParseHookInput(t *testing.T) {
	const sid = "3c9d2a1b-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
	const tp = "/home/u/.gemini/tmp/5f1c0a7e/chats/session-2026-11-20T10-00-3c9d2a1b.jsonl"
	base := harness.HookInput{SessionID: sid, CWD: "/work/repo", TranscriptPath: tp}
	with := func(f func(*harness.HookInput)) harness.HookInput { in := base; f(&in); return in }
	cases := map[string]harness.HookInput{
		"SessionStart.json": with(func(in *harness.HookInput) { in.HarnessEvent = "SessionStart" }),
		"BeforeAgent.json": with(func(in *harness.HookInput) {
			in.HarnessEvent, in.Prompt = "BeforeAgent", "How do retries work here?"
		}),
		"AfterAgent.json": with(func(in *harness.HookInput) {
			in.HarnessEvent, in.Prompt, in.LastMessage = "AfterAgent", "How do retries work here?", "Retries use exponential backoff."
		}),
		"PreCompress.json": with(func(in *harness.HookInput) { in.HarnessEvent = "PreCompress" }),
		"SessionEnd.json":  with(func(in *harness.HookInput) { in.HarnessEvent = "SessionEnd" }),
		"drift.json": with(func(in *harness.HookInput) {
			in.HarnessEvent, in.CWD, in.LastMessage = "AfterAgent", "", "ok"
		}),
	}
	for file, want := range cases {
		got, err := New().ParseHookInput(readFile(t, filepath.Join("testdata", "payloads", file)))
		if err != nil || got != want {
			t.Errorf("%s:\n got %+v (%v)\nwant %+v", file, got, err, want)
		}
	}
	for _, bad := range []string{"", "\n", "nope", "[]", "null", `{"session_id":`} {
		if _, err := New().ParseHookInput([]byte(bad)); err == nil {
			t.Errorf("payload %q accepted", bad)
		}
	}
}

func TestHookOutput(t *testing.T) {
	ctx := "# Project knowledge\n\nSee [ENTRY](.ai/kenkeep/ENTRY.md) & \"quotes\" <tags>.\n"
	for ev, file := range map[harness.Event]string{harness.SessionStart: "output.session-start.json", harness.PromptContext: "output.prompt-context.json"} {
		out, ok := New().HookOutput(ev, ctx)
		if !ok {
			t.Fatalf("%s: no channel", ev)
		}
		golden(t, file, out)
		var doc struct {
			HookSpecificOutput struct {
				HookEventName     string `json:"hookEventName"`
				AdditionalContext string `json:"additionalContext"`
			} `json:"hookSpecificOutput"`
		}
		if err := json.Unmarshal(out, &doc); err != nil || doc.HookSpecificOutput.AdditionalContext != ctx {
			t.Errorf("%s: %s (%v)", ev, out, err)
		}
		if bytes.Count(out, []byte("\n")) != 1 {
			t.Errorf("%s: output is not one line", ev)
		}
	}
	for _, ev := range []harness.Event{harness.Capture, harness.ProposalDrain, harness.LintTick} {
		if _, ok := New().HookOutput(ev, "x"); ok {
			t.Errorf("%s has a context channel", ev)
		}
	}
}

func TestParseTranscript(t *testing.T) {
	for _, c := range []struct {
		file  string
		turns []harness.Turn
		reads []harness.Read
	}{
		{
			"synthetic.jsonl",
			[]harness.Turn{
				{Role: harness.User, Text: "How do retries work here? @docs/net.md"},
				{Role: harness.Agent, Text: "Retries use exponential backoff."},
				{Role: harness.User, Text: "Thanks, that is all."},
				{Role: harness.Agent, Text: "You're welcome."},
			},
			[]harness.Read{
				{Path: ".ai/kenkeep/ENTRY.md", Tool: "read_file"},
				{Path: ".ai/kenkeep/nodes/net/practice-retries.md", Tool: "run_shell_command"},
				{Path: "docs/net.md", Tool: "run_shell_command"},
			},
		},
		{
			"synthetic-legacy.json",
			[]harness.Turn{
				{Role: harness.User, Text: "Where is the config loaded?"},
				{Role: harness.Agent, Text: "In internal/kb/config.go."},
			},
			[]harness.Read{{Path: "/work/repo/.ai/kenkeep/nodes/config/map-settings.md", Tool: "read_file"}},
		},
	} {
		f, err := os.Open(filepath.Join("testdata", "transcripts", c.file))
		if err != nil {
			t.Fatal(err)
		}
		tr, err := New().ParseTranscript(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(tr.Turns, c.turns) {
			t.Errorf("%s turns:\n%+v", c.file, tr.Turns)
		}
		if !reflect.DeepEqual(tr.Reads, c.reads) {
			t.Errorf("%s reads:\n%+v", c.file, tr.Reads)
		}
	}
}

func TestParseTranscriptLargeLinesAndSet(t *testing.T) {
	big := strings.Repeat("y", 4<<20)
	src := `{"sessionId":"s","projectHash":"h"}` + "\n" +
		`{"id":"a","type":"user","content":"` + big + `"}` + "\n" +
		`{"id":"b","type":"gemini","content":"first"}` + "\n" +
		`{"$set":{"messages":[{"id":"a","type":"user","content":"masked"},{"id":"b","type":"gemini","content":"second"}]}}` + "\n" +
		`{"id":"c","type":"user","content":"after the set"}` + "\n" +
		`{"id":"d","type":"gemini","content":"` + big[:5000]
	tr, err := New().ParseTranscript(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []harness.Turn{{Role: harness.User, Text: "masked"}, {Role: harness.Agent, Text: "second"}, {Role: harness.User, Text: "after the set"}}
	if !reflect.DeepEqual(tr.Turns, want) {
		t.Errorf("turns = %+v", tr.Turns)
	}
	tr, err = New().ParseTranscript(strings.NewReader(`{"id":"a","type":"user","content":"` + big + `"}` + "\n"))
	if err != nil || len(tr.Turns) != 1 || len(tr.Turns[0].Text) != len(big) {
		t.Errorf("a 4 MB line: %d turns, %v", len(tr.Turns), err)
	}
}

// BenchmarkParseTranscript parses a 5 MB chat recording (the capture
// budget is 200 ms for a transcript that size).
func BenchmarkParseTranscript(b *testing.B) {
	var sb strings.Builder
	text := strings.Repeat("word ", 400)
	sb.WriteString(`{"sessionId":"s","projectHash":"h","startTime":"2026-11-20T10:00:00.000Z"}` + "\n")
	for i := 0; sb.Len() < 5<<20; i++ {
		fmt.Fprintf(&sb, `{"id":"u%d","type":"user","content":[{"text":%q}]}`+"\n", i, text)
		fmt.Fprintf(&sb, `{"id":"g%d","type":"gemini","content":"","toolCalls":[{"id":"c%d","name":"read_file","args":{"file_path":"docs/f%d.md"}}]}`+"\n", i, i, i)
		fmt.Fprintf(&sb, `{"id":"g%d","type":"gemini","content":%q,"toolCalls":[{"id":"c%d","name":"read_file","args":{"file_path":"docs/f%d.md"}}]}`+"\n", i, text, i, i)
		sb.WriteString(`{"$set":{"lastUpdated":"2026-11-20T10:00:01.000Z"}}` + "\n")
	}
	data := sb.String()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := New().ParseTranscript(strings.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}

func TestHookCommand(t *testing.T) {
	for command, want := range map[string]string{
		"kk":            "kk hook capture --harness gemini",
		"/usr/bin/kk":   "/usr/bin/kk hook capture --harness gemini",
		"/opt/my kk/kk": "'/opt/my kk/kk' hook capture --harness gemini",
		"./bin/kk":      "$GEMINI_PROJECT_DIR/bin/kk hook capture --harness gemini",
		"tools/it's/kk": `$GEMINI_PROJECT_DIR/'tools/it'\''s/kk' hook capture --harness gemini`,
	} {
		if got := hookCommand(command, harness.Capture); got != want {
			t.Errorf("hookCommand(%q) = %s, want %s", command, got, want)
		}
		raw, _ := rawJSON(hookEntry{Name: hookName(harness.Capture), Command: hookCommand(command, harness.Capture)})
		if !owned(raw) {
			t.Errorf("the entry for %q is not recognised as kk's", command)
		}
	}
	for _, foreign := range []string{
		`{"name":"kk-capture","command":"other hook capture --harness claude"}`,
		`{"name":"capture","command":"kk hook capture --harness gemini"}`,
		`{"name":"kk-x","command":"kk hook capture --harness gemini && rm -rf /"}`,
	} {
		if owned(json.RawMessage(foreign)) {
			t.Errorf("%s counted as kk's", foreign)
		}
	}
}

// A field whose type drifted leaves that field empty; the message still counts.
func TestParseTranscriptTypeDrift(t *testing.T) {
	src := `{"id":"a","type":"user","content":"hi","displayContent":5,"toolCalls":"oops"}` + "\n" +
		`{"id":"b","type":"gemini","content":{"parts":[{"text":"from parts"}]},"toolCalls":[{"name":"read_file","args":"not an object"},{"name":"read_file","args":{"file_path":"docs/b.md"}}]}` + "\n"
	tr, err := New().ParseTranscript(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []harness.Turn{{Role: harness.User, Text: "hi"}, {Role: harness.Agent, Text: "from parts"}}
	if !reflect.DeepEqual(tr.Turns, want) {
		t.Errorf("turns = %+v", tr.Turns)
	}
	if !reflect.DeepEqual(tr.Reads, []harness.Read{{Path: "docs/b.md", Tool: "read_file"}}) {
		t.Errorf("reads = %+v", tr.Reads)
	}
}
