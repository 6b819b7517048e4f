package copilot

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

	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/harness/harnesstest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// golden compares got with testdata/golden/<name>, or rewrites it with -update.
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
	bashQuote     = harness.ShellQuote
)

func opts(root string) harness.InstallOptions {
	return harness.InstallOptions{Root: root, Command: "kk", Skills: shippedSkills()}
}

func TestMetadata(t *testing.T) {
	a := New()
	if a.ID() != "copilot" || a.Binary() != "copilot" || a.Name() == "" || a.InstallHint() == "" {
		t.Fatalf("metadata: %q %q %q %q", a.ID(), a.Binary(), a.Name(), a.InstallHint())
	}
	if got := a.LaunchArgs("/kk-curate"); !slices.Equal(got, []string{"-p", "/kk-curate"}) {
		t.Errorf("LaunchArgs = %q", got)
	}
	env := map[string]string{"COPILOT_CLI": "1"}
	if !a.Detect(func(k string) string { return env[k] }) {
		t.Error("COPILOT_CLI=1 not detected")
	}
	if a.Detect(func(string) string { return "" }) {
		t.Error("detected without COPILOT_CLI")
	}
	if p := a.Paths(); !slices.Equal(p.Config, []string{".github/hooks/kk.json"}) || p.Skills != ".github/skills" {
		t.Errorf("Paths = %+v", p)
	}
}

func TestInstallFresh(t *testing.T) {
	root := t.TempDir()
	changes, err := New().Install(context.Background(), opts(root))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "kk.json", readFile(t, filepath.Join(root, ".github/hooks/kk.json")))
	want := []harness.Change{{Path: ".github/hooks/kk.json", Action: "created"}}
	for _, n := range []string{"kk-add", "kk-bootstrap", "kk-curate", "kk-migrate", "kk-session-extract"} {
		want = append(want, harness.Change{Path: ".github/skills/" + n + "/SKILL.md", Action: "created"})
		if got := readFile(t, filepath.Join(root, ".github/skills", n, "SKILL.md")); !bytes.Equal(got, shippedSkills()[n]) {
			t.Errorf("skill %s is not a byte copy of the template", n)
		}
	}
	if !reflect.DeepEqual(changes, want) {
		t.Errorf("changes = %v\nwant %v", changes, want)
	}
	// The file has the documented shape: version 1, event → flat list of
	// {type: command, bash, timeoutSec}.
	var file struct {
		Version int                    `json:"version"`
		Hooks   map[string][]hookEntry `json:"hooks"`
	}
	if err := json.Unmarshal(readFile(t, filepath.Join(root, ".github/hooks/kk.json")), &file); err != nil {
		t.Fatal(err)
	}
	if file.Version != 1 || len(file.Hooks["sessionEnd"]) != 2 || file.Hooks["agentStop"][0].Bash != "kk hook capture --harness copilot" {
		t.Errorf("hooks file: %+v", file)
	}
	for ev, list := range file.Hooks {
		for _, e := range list {
			if e.Type != "command" || e.TimeoutSec != 30 || e.CWD != "" || strings.Contains(e.Bash, "KK_INTERNAL") {
				t.Errorf("%s entry %+v", ev, e)
			}
		}
	}
}

func TestInstallTwiceChangesNothing(t *testing.T) {
	root := t.TempDir()
	a := New()
	if _, err := a.Install(context.Background(), opts(root)); err != nil {
		t.Fatal(err)
	}
	before := tree(t, root)
	changes, err := a.Install(context.Background(), opts(root))
	if err != nil || len(changes) != 0 {
		t.Fatalf("second install: %v %v", changes, err)
	}
	if !reflect.DeepEqual(before, tree(t, root)) {
		t.Error("second install changed the tree")
	}
}

func TestInstallRewritesKKFileAndKeepsUserFiles(t *testing.T) {
	root := t.TempDir()
	userHooks := `{"version":1,"hooks":{"preToolUse":[{"type":"command","bash":"./audit.sh","timeoutSec":5}]}}` + "\n"
	userSkill := "---\nname: release\ndescription: Cut a release.\n---\n\n1. Tag.\n"
	writeFile(t, filepath.Join(root, ".github/hooks/user.json"), userHooks)
	writeFile(t, filepath.Join(root, ".github/skills/release/SKILL.md"), userSkill)
	writeFile(t, filepath.Join(root, ".github/hooks/kk.json"), `{"version":1,"hooks":{"sessionStart":[{"type":"command","bash":"node old.cjs","env":{"KK_INTERNAL":"1"}}]}}`)
	writeFile(t, filepath.Join(root, ".github/skills/kk-add/SKILL.md"), "old")

	a := New()
	changes, err := a.Install(context.Background(), opts(root))
	if err != nil {
		t.Fatal(err)
	}
	if changes[0] != (harness.Change{Path: ".github/hooks/kk.json", Action: "updated"}) || changes[1] != (harness.Change{Path: ".github/skills/kk-add/SKILL.md", Action: "updated"}) {
		t.Errorf("changes = %v", changes)
	}
	golden(t, "kk.json", readFile(t, filepath.Join(root, ".github/hooks/kk.json")))

	// Uninstall removes exactly kk's files; the user's stay byte for byte.
	changes, err = a.Uninstall(context.Background(), opts(root))
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 6 || changes[0] != (harness.Change{Path: ".github/hooks/kk.json", Action: "removed"}) {
		t.Errorf("uninstall changes = %v", changes)
	}
	want := map[string]string{".github/hooks/user.json": userHooks, ".github/skills/release/SKILL.md": userSkill}
	if got := tree(t, root); !reflect.DeepEqual(got, want) {
		t.Errorf("after uninstall: %v", got)
	}
	if changes, err := a.Uninstall(context.Background(), opts(root)); err != nil || len(changes) != 0 {
		t.Errorf("second uninstall: %v %v", changes, err)
	}
}

func TestUninstallRemovesEmptyFolders(t *testing.T) {
	root := t.TempDir()
	a := New()
	if _, err := a.Install(context.Background(), opts(root)); err != nil {
		t.Fatal(err)
	}
	// Without a skill list, uninstall removes the skills this kk ships.
	if _, err := a.Uninstall(context.Background(), harness.InstallOptions{Root: root}); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}

func TestInstallCommandQuoting(t *testing.T) {
	cases := map[string]string{
		"spaces.json":   "/opt/my tools/kk",
		"relative.json": "./bin/kk",
	}
	for name, command := range cases {
		root := t.TempDir()
		o := opts(root)
		o.Command, o.Skills = command, nil
		if _, err := New().Install(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		golden(t, name, readFile(t, filepath.Join(root, ".github/hooks/kk.json")))
	}
	if got := bashQuote("it's"); got != `'it'\''s'` {
		t.Errorf("bashQuote = %s", got)
	}
	if got := powerShellQuote(`C:\Program Files\kk.exe`); got != `& 'C:\Program Files\kk.exe'` {
		t.Errorf("powerShellQuote = %s", got)
	}
}

func TestInstallBadInputWritesNothing(t *testing.T) {
	for _, skills := range []map[string][]byte{
		{"kk-add": []byte("x"), "../evil": []byte("x")},
		{"kk-add": nil},
	} {
		root := t.TempDir()
		o := opts(root)
		o.Skills = skills
		if _, err := New().Install(context.Background(), o); err == nil {
			t.Errorf("skills %v accepted", skills)
		}
		if entries, _ := os.ReadDir(root); len(entries) != 0 {
			t.Errorf("bad input wrote %v", entries)
		}
	}
	if _, err := New().Install(context.Background(), harness.InstallOptions{Root: filepath.Join(t.TempDir(), "missing")}); err == nil {
		t.Error("missing root accepted")
	}
}

func TestParseHookInput(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("COPILOT_HOME", "")
	const sid = "b0ff98c0-8e01-4b73-bf92-9649b139931b"
	given := "/home/u/.copilot/session-state/" + sid + "/events.jsonl"
	derived := filepath.Join(home, ".copilot", "session-state", sid, "events.jsonl")
	cases := []struct {
		file string
		want harness.HookInput
	}{
		{"camel-sessionStart.json", harness.HookInput{HarnessEvent: "sessionStart", SessionID: sid, CWD: "/work/repo", TranscriptPath: derived}},
		{"camel-agentStop.json", harness.HookInput{HarnessEvent: "agentStop", SessionID: sid, CWD: "/work/repo/sub", TranscriptPath: given}},
		{"camel-preCompact.json", harness.HookInput{HarnessEvent: "preCompact", SessionID: sid, CWD: "/work/repo", TranscriptPath: given}},
		{"camel-sessionEnd.json", harness.HookInput{HarnessEvent: "sessionEnd", SessionID: sid, CWD: "/work/repo", TranscriptPath: derived}},
		{"camel-userPromptSubmitted.json", harness.HookInput{HarnessEvent: "userPromptSubmitted", SessionID: sid, CWD: "/work/repo", TranscriptPath: derived, Prompt: "where is the retry logic?"}},
		{"pascal-SessionStart.json", harness.HookInput{HarnessEvent: "SessionStart", SessionID: sid, CWD: "/work/repo", TranscriptPath: derived}},
		{"pascal-Stop.json", harness.HookInput{HarnessEvent: "Stop", SessionID: sid, CWD: "/work/repo", TranscriptPath: given}},
		{"pascal-PreCompact.json", harness.HookInput{HarnessEvent: "PreCompact", SessionID: sid, CWD: "/work/repo", TranscriptPath: given}},
		{"pascal-SessionEnd.json", harness.HookInput{HarnessEvent: "SessionEnd", SessionID: sid, CWD: "/work/repo", TranscriptPath: derived}},
		{"pascal-UserPromptSubmit.json", harness.HookInput{HarnessEvent: "UserPromptSubmit", SessionID: sid, CWD: "/work/repo", TranscriptPath: derived, Prompt: "where is the retry logic?"}},
		// Fields of the wrong type are skipped, not fatal.
		{"drift-types.json", harness.HookInput{HarnessEvent: "agentStop", SessionID: sid, TranscriptPath: derived}},
		// An id that is not safe in a path gives no derived transcript.
		{"drift-unsafe-id.json", harness.HookInput{HarnessEvent: "sessionEnd", SessionID: "../../etc", CWD: "/work/repo"}},
	}
	a := New()
	for _, c := range cases {
		got, err := a.ParseHookInput(readFile(t, filepath.Join("testdata", "payloads", c.file)))
		if err != nil {
			t.Errorf("%s: %v", c.file, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s:\n got %+v\nwant %+v", c.file, got, c.want)
		}
	}

	t.Setenv("COPILOT_HOME", "/srv/copilot")
	got, err := a.ParseHookInput(readFile(t, "testdata/payloads/camel-sessionEnd.json"))
	if err != nil || got.TranscriptPath != filepath.Join("/srv/copilot", "session-state", sid, "events.jsonl") {
		t.Errorf("COPILOT_HOME not used: %+v %v", got, err)
	}

	for _, bad := range []string{"", "  \n", "not json", "[1,2]", `"text"`, "null", `{"sessionId":`} {
		if _, err := a.ParseHookInput([]byte(bad)); err == nil {
			t.Errorf("payload %q accepted", bad)
		}
	}
}

// Copilot reads {"additionalContext": …} from sessionStart and
// userPromptSubmitted hooks (1.0.102); the other events have no channel.
func TestHookOutput(t *testing.T) {
	for _, ev := range harness.Events {
		out, ok := New().HookOutput(ev, "# ENTRY <kk>")
		want := ev == harness.SessionStart || ev == harness.PromptContext
		if ok != want {
			t.Errorf("%s: channel %v, want %v", ev, ok, want)
		}
		if want && string(out) != `{"additionalContext":"# ENTRY <kk>"}`+"\n" {
			t.Errorf("%s: output %q", ev, out)
		}
	}
}

func TestParseTranscript(t *testing.T) {
	f, err := os.Open("testdata/transcripts/synthetic.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := New().ParseTranscript(f)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.MarshalIndent(tr, "", "  ")
	golden(t, "events.transcript.json", append(got, '\n'))

	want := []harness.Turn{
		{Role: harness.User, Text: "How do we run the migrations?"},
		{Role: harness.Agent, Text: "Run `make migrate`.\n\nIt wraps goose."},
		{Role: harness.User, Text: "And in CI?"},
		{Role: harness.Agent, Text: "CI runs it in the deploy job."},
		{Role: harness.User, Text: "thanks"},
		{Role: harness.Agent, Text: "The user is done; nothing else to do."},
	}
	if !reflect.DeepEqual(tr.Turns, want) {
		t.Errorf("turns:\n%+v\nwant\n%+v", tr.Turns, want)
	}
	wantReads := []harness.Read{
		{Path: ".ai/kenkeep/nodes/db/practice-migrations.md", Tool: "view"},
		{Path: ".ai/kenkeep/nodes/index.md", Tool: "bash"},
		{Path: "docs/db.md", Tool: "bash"},
	}
	if !reflect.DeepEqual(tr.Reads, wantReads) {
		t.Errorf("reads = %+v", tr.Reads)
	}
}

func TestParseTranscriptLargeLines(t *testing.T) {
	big := strings.Repeat("x", 3<<20)
	var b strings.Builder
	b.WriteString(`{"type":"user.message","data":{"content":"` + big + `"},"timestamp":"2026-11-20T10:00:00Z"}` + "\n")
	b.WriteString(`{"type":"assistant.message","data":{"content":"ok"},"timestamp":"2026-11-20T10:00:01Z"}` + "\n")
	b.WriteString(`{"type":"assistant.message","data":{"content":"` + big[:1000])
	tr, err := New().ParseTranscript(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Turns) != 2 || len(tr.Turns[0].Text) != len(big) || tr.Turns[1].Text != "ok" {
		t.Fatalf("got %d turns", len(tr.Turns))
	}
	empty, err := New().ParseTranscript(strings.NewReader(""))
	if err != nil || len(empty.Turns) != 0 {
		t.Errorf("empty transcript: %+v %v", empty, err)
	}
}

// BenchmarkParseTranscript parses a 5 MB events.jsonl (the capture budget
// is 200 ms for a transcript that size).
func BenchmarkParseTranscript(b *testing.B) {
	var sb strings.Builder
	text := strings.Repeat("word ", 400)
	for i := 0; sb.Len() < 5<<20; i++ {
		fmt.Fprintf(&sb, `{"type":"user.message","data":{"content":%q,"interactionId":"i%d"},"id":"u%d","timestamp":"2026-11-20T10:%02d:%02d.000Z"}`+"\n", text, i, i, i/60%60, i%60)
		fmt.Fprintf(&sb, `{"type":"tool.execution_start","data":{"toolName":"view","arguments":{"path":"docs/f%d.md"}},"id":"t%d","timestamp":"2026-11-20T10:%02d:%02d.100Z"}`+"\n", i, i, i/60%60, i%60)
		fmt.Fprintf(&sb, `{"type":"assistant.message","data":{"content":%q,"toolRequests":[],"interactionId":"i%d"},"id":"a%d","timestamp":"2026-11-20T10:%02d:%02d.200Z"}`+"\n", text, i, i, i/60%60, i%60)
	}
	data := sb.String()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := New().ParseTranscript(strings.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}

// A field whose type drifted leaves that field empty; the event still counts.
func TestParseTranscriptTypeDrift(t *testing.T) {
	src := `{"type":"user.message","data":{"content":42,"transformedContent":"<reminder>x</reminder>typed text","interactionId":7},"timestamp":12}` + "\n" +
		`{"type":"tool.execution_start","data":{"toolName":"view","arguments":"{\"path\":\"docs/a.md\"}"}}` + "\n" +
		`{"type":"assistant.message","data":"not an object"}` + "\n"
	tr, err := New().ParseTranscript(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(tr.Turns, []harness.Turn{{Role: harness.User, Text: "typed text"}}) {
		t.Errorf("turns = %+v", tr.Turns)
	}
	if !reflect.DeepEqual(tr.Reads, []harness.Read{{Path: "docs/a.md", Tool: "view"}}) {
		t.Errorf("reads = %+v", tr.Reads)
	}
}
