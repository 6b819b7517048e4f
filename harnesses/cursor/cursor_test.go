package cursor

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/harness/harnesstest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// testSkills stand in for the shipped skills in install tests.
var testSkills = harnesstest.TwoSkills

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	harnesstest.Golden(t, filepath.Join("testdata", "golden", name), got, *update)
}

// The doctor check levels.
const (
	levelOK   = harness.LevelOK
	levelWarn = harness.LevelWarn
	levelErr  = harness.LevelError
)

// The shared helpers, under the names the tests use.
var (
	env     = harnesstest.Env
	read    = harnesstest.ReadFile
	write   = harnesstest.WriteFile
	exists  = harnesstest.Exists
	marshal = harness.MustRawJSON

	shippedSkills = harnesstest.ShippedSkills
)

func install(t *testing.T, root, command string) []harness.Change {
	t.Helper()
	return harnesstest.Install(t, New(), root, command, testSkills)
}

func uninstall(t *testing.T, root string) []harness.Change {
	t.Helper()
	return harnesstest.Uninstall(t, New(), root, testSkills)
}

func TestInstallFresh(t *testing.T) {
	root := t.TempDir()
	ch := install(t, root, "kk")
	want := []harness.Change{
		{Path: ".cursor/hooks.json", Action: "created"},
		{Path: ".cursor/skills/kk-add/SKILL.md", Action: "created"},
		{Path: ".cursor/skills/kk-curate/SKILL.md", Action: "created"},
	}
	if !reflect.DeepEqual(ch, want) {
		t.Fatalf("changes %v, want %v", ch, want)
	}
	golden(t, "hooks.json", read(t, filepath.Join(root, ".cursor", "hooks.json")))
	if got := read(t, filepath.Join(root, ".cursor", "skills", "kk-add", "SKILL.md")); !bytes.Equal(got, testSkills["kk-add"]) {
		t.Errorf("skill not copied byte for byte: %q", got)
	}
	if again := install(t, root, "kk"); len(again) != 0 {
		t.Errorf("second install changed %v", again)
	}
	if ch := uninstall(t, root); len(ch) != 3 {
		t.Errorf("uninstall changes %v", ch)
	}
	if exists(filepath.Join(root, ".cursor")) {
		t.Error("uninstall left .cursor behind though kk created everything in it")
	}
	if again := uninstall(t, root); len(again) != 0 {
		t.Errorf("second uninstall changed %v", again)
	}
}

func TestInstallKeepsUserHooks(t *testing.T) {
	root := t.TempDir()
	user := read(t, filepath.Join("testdata", "user-hooks.json"))
	hooksPath := filepath.Join(root, ".cursor", "hooks.json")
	write(t, hooksPath, user)
	userSkill := filepath.Join(root, ".cursor", "skills", "review", "SKILL.md")
	write(t, userSkill, []byte("---\nname: review\n---\nmine\n"))

	ch := install(t, root, "kk")
	if ch[0] != (harness.Change{Path: ".cursor/hooks.json", Action: "updated"}) {
		t.Errorf("changes %v", ch)
	}
	golden(t, "hooks-merged.json", read(t, hooksPath))
	if again := install(t, root, "kk"); len(again) != 0 {
		t.Errorf("second install changed %v", again)
	}

	// An upgrade with another kk command replaces kk's entries where they
	// are instead of adding a second set.
	install(t, root, "/opt/kk tools/kk")
	golden(t, "hooks-upgraded.json", read(t, hooksPath))

	uninstall(t, root)
	if got := read(t, hooksPath); !bytes.Equal(got, user) {
		t.Errorf("uninstall did not give back the user's file:\n%s\nwant\n%s", got, user)
	}
	if got := read(t, userSkill); string(got) != "---\nname: review\n---\nmine\n" {
		t.Errorf("user skill changed: %q", got)
	}
	if exists(filepath.Join(root, ".cursor", "skills", "kk-add")) {
		t.Error("kk's skill folder left behind")
	}
}

func TestInstallKeepsLayoutOfUnchangedFile(t *testing.T) {
	root := t.TempDir()
	install(t, root, "kk")
	hooksPath := filepath.Join(root, ".cursor", "hooks.json")
	// The same document, indented with four spaces instead of two.
	var b bytes.Buffer
	if err := json.Indent(&b, compactBytes(t, read(t, hooksPath)), "", "    "); err != nil {
		t.Fatal(err)
	}
	write(t, hooksPath, b.Bytes())
	if ch := install(t, root, "kk"); len(ch) != 0 {
		t.Errorf("a layout-only difference rewrote the file: %v", ch)
	}
	if got := read(t, hooksPath); !bytes.Equal(got, b.Bytes()) {
		t.Error("the user's layout was not kept")
	}
}

func compactBytes(t *testing.T, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, data); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestInstallReplacesKenkeepHooks(t *testing.T) {
	root := t.TempDir()
	hooksPath := filepath.Join(root, ".cursor", "hooks.json")
	write(t, hooksPath, []byte(`{
  "version": 1,
  "hooks": {
    "sessionStart": [
      {"command": "node ./.ai/kenkeep/hooks/cursor/kk-session-start.cjs", "timeout": 30},
      {"command": "./scripts/warm-cache.sh"}
    ],
    "stop": [
      {"command": "node ./.ai/kenkeep/hooks/cursor/kk-capture.cjs", "timeout": 30}
    ]
  }
}
`))
	install(t, root, "kk")
	got := string(read(t, hooksPath))
	if strings.Contains(got, "kenkeep/hooks") {
		t.Errorf("kenkeep's entries survived:\n%s", got)
	}
	var file struct {
		Hooks map[string][]entry `json:"hooks"`
	}
	if err := json.Unmarshal([]byte(got), &file); err != nil {
		t.Fatal(err)
	}
	start := file.Hooks["sessionStart"]
	if len(start) != 3 || start[0].Command != "kk hook session-start --harness cursor" || start[2].Command != "./scripts/warm-cache.sh" {
		t.Errorf("sessionStart %+v: kk's entries should take kenkeep's place, before the user's", start)
	}
}

func TestInstallRejectsBadFiles(t *testing.T) {
	for name, content := range map[string]string{
		"not json":         "{\"version\": 1,",
		"hooks not object": `{"version": 1, "hooks": []}`,
		"event not list":   `{"version": 1, "hooks": {"stop": {"command": "x"}}}`,
		"array":            `[]`,
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			hooksPath := filepath.Join(root, ".cursor", "hooks.json")
			write(t, hooksPath, []byte(content))
			_, err := New().Install(context.Background(), harness.InstallOptions{Root: root, Command: "kk", Skills: testSkills})
			if err == nil || !strings.Contains(err.Error(), "hooks.json") {
				t.Fatalf("error %v should name hooks.json", err)
			}
			if got := read(t, hooksPath); string(got) != content {
				t.Errorf("file changed to %q", got)
			}
			if exists(filepath.Join(root, ".cursor", "skills")) {
				t.Error("skills were written although the install failed")
			}
			if _, err := New().Uninstall(context.Background(), harness.InstallOptions{Root: root, Skills: testSkills}); err == nil {
				t.Error("uninstall accepted a broken file")
			}
			if got := read(t, hooksPath); string(got) != content {
				t.Errorf("uninstall changed the file to %q", got)
			}
		})
	}
}

func TestInstallRejectsBadInput(t *testing.T) {
	root := t.TempDir()
	for _, opts := range []harness.InstallOptions{
		{Root: root, Command: `/opt/$HOME/kk`, Skills: testSkills},
		{Root: root, Command: "kk", Skills: map[string][]byte{"../evil": []byte("x")}},
	} {
		if _, err := New().Install(context.Background(), opts); err == nil {
			t.Errorf("install %+v succeeded", opts)
		}
	}
	if exists(filepath.Join(root, ".cursor")) {
		t.Error("a rejected install wrote files")
	}
}

func TestCommandWord(t *testing.T) {
	for in, want := range map[string]string{
		"":                      "kk",
		"kk":                    "kk",
		"/usr/local/bin/kk":     "/usr/local/bin/kk",
		`C:\Tools\kk.exe`:       `C:\Tools\kk.exe`,
		"/opt/kk tools/kk":      `"/opt/kk tools/kk"`,
		"/home/me/it's/kk":      `"/home/me/it's/kk"`,
		"/opt/a&b/kk":           `"/opt/a&b/kk"`,
		"/Applications/K K/kk+": `"/Applications/K K/kk+"`,
	} {
		got, err := commandWord(in)
		if err != nil || got != want {
			t.Errorf("commandWord(%q) = %q, %v; want %q", in, got, err, want)
		}
		if err == nil && in != "" && unquoteWord(got) != in {
			t.Errorf("unquoteWord(%q) = %q", got, unquoteWord(got))
		}
	}
	for _, bad := range []string{`/opt/"x"/kk`, "/opt/$X/kk", "/opt/`x`/kk", "/opt/x!/kk", "/opt/x y\\kk"} {
		if _, err := commandWord(bad); err == nil {
			t.Errorf("commandWord(%q) accepted", bad)
		}
	}
}

func TestOwned(t *testing.T) {
	for cmd, want := range map[string]bool{
		"kk hook capture --harness cursor":                   true,
		`"/opt/kk tools/kk" hook lint-tick --harness cursor`: true,
		"node ./.ai/kenkeep/hooks/cursor/kk-capture.cjs":     true,
		"kk hook capture --harness claude":                   false,
		"kk hook frobnicate --harness cursor":                false,
		"./scripts/kk hook capture --harness cursor --loud":  false,
		"echo kk": false,
	} {
		raw := marshal(entry{Command: cmd})
		if got := owned(raw); got != want {
			t.Errorf("owned(%q) = %v", cmd, got)
		}
	}
	if owned(json.RawMessage(`"kk hook capture --harness cursor"`)) {
		t.Error("a string entry is owned")
	}
}

func TestParseHookInput(t *testing.T) {
	home := t.TempDir()
	a := &Adapter{Base: harness.Base{S: spec}, getenv: env(map[string]string{"HOME": home})}
	// A transcript for the stop payload, where the CLI keeps it.
	flat := filepath.Join(home, ".cursor", "projects", "home-dev-shop", "agent-transcripts", "3f2a9c1e-7b4d-4e8a-9f10-2c3d4e5f6a7b.jsonl")
	write(t, flat, []byte("{}\n"))
	for _, tc := range []struct {
		file string
		want harness.HookInput
	}{
		// No search for the transcript where no hook reads it.
		{"sessionStart.json", harness.HookInput{HarnessEvent: "sessionStart", SessionID: "3f2a9c1e-7b4d-4e8a-9f10-2c3d4e5f6a7b", CWD: "/home/dev/shop"}},
		{"stop.json", harness.HookInput{HarnessEvent: "stop", SessionID: "3F2A9C1E-7B4D-4E8A-9F10-2C3D4E5F6A7B", CWD: "/home/dev/shop", TranscriptPath: flat}},
		{"sessionEnd.json", harness.HookInput{HarnessEvent: "sessionEnd", SessionID: "conv-7781", CWD: "/home/dev/shop", TranscriptPath: "/home/dev/.cursor/projects/home-dev-shop/agent-transcripts/conv-7781/conv-7781.jsonl"}},
		{"beforeSubmitPrompt.json", harness.HookInput{HarnessEvent: "beforeSubmitPrompt", SessionID: "3f2a9c1e-7b4d-4e8a-9f10-2c3d4e5f6a7b", CWD: "/home/dev/shop", Prompt: "Where do we keep the payment retry rules?"}},
		// No workspace root: the transcript is found by searching every project.
		{"preCompact.json", harness.HookInput{HarnessEvent: "preCompact", SessionID: "3f2a9c1e-7b4d-4e8a-9f10-2c3d4e5f6a7b", TranscriptPath: flat}},
	} {
		got, err := a.ParseHookInput(read(t, filepath.Join("testdata", "payloads", tc.file)))
		if err != nil {
			t.Errorf("%s: %v", tc.file, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.file, got, tc.want)
		}
	}
	for _, bad := range []string{"", "  \n", "{", `[1]`, `{"workspace_roots": "x"}`} {
		if _, err := a.ParseHookInput([]byte(bad)); err == nil {
			t.Errorf("payload %q accepted", bad)
		}
	}
}

func TestFindTranscript(t *testing.T) {
	home := t.TempDir()
	projects := filepath.Join(home, ".cursor", "projects")
	ide := filepath.Join(projects, "home-dev-shop", "agent-transcripts", "c1", "c1.jsonl")
	write(t, ide, []byte("{}\n"))
	older := filepath.Join(projects, "other", "agent-transcripts", "x-c2.jsonl")
	newer := filepath.Join(projects, "third", "agent-transcripts", "y", "c2-y.jsonl")
	write(t, older, []byte("{}\n"))
	write(t, newer, []byte("{}\n"))
	past := time.Now().Add(-time.Hour)
	os.Chtimes(older, past, past)
	envPath := filepath.Join(home, "elsewhere.jsonl")
	write(t, envPath, []byte("{}\n"))

	a := &Adapter{Base: harness.Base{S: spec}, getenv: env(map[string]string{"HOME": home})}
	for _, tc := range []struct{ conv, cwd, want string }{
		{"c1", "/home/dev/shop", ide},   // the IDE's nested layout
		{"c2", "/home/dev/shop", newer}, // the newest file naming the id, anywhere
		{"c3", "/home/dev/shop", ""},
		{"../c1", "/home/dev/shop", ""}, // never a path from the payload
		{"", "/home/dev/shop", ""},
	} {
		if got := a.findTranscript(tc.conv, tc.cwd); got != tc.want {
			t.Errorf("findTranscript(%q) = %q, want %q", tc.conv, got, tc.want)
		}
	}
	withEnv := &Adapter{Base: harness.Base{S: spec}, getenv: env(map[string]string{"HOME": home, "CURSOR_TRANSCRIPT_PATH": envPath})}
	if got := withEnv.findTranscript("c1", "/home/dev/shop"); got != envPath {
		t.Errorf("CURSOR_TRANSCRIPT_PATH not used: %q", got)
	}
	noHome := &Adapter{Base: harness.Base{S: spec}, getenv: env(nil)}
	if got := noHome.findTranscript("c1", "/home/dev/shop"); got != "" {
		t.Errorf("found %q without a home folder", got)
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"/home/dev/shop":       "home-dev-shop",
		"/Users/me/my.proj_v2": "Users-me-my-proj-v2",
		"/srv/café":            "srv-caf-",
	} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseTranscriptRejectsOtherFiles(t *testing.T) {
	if _, err := New().ParseTranscript(strings.NewReader("User: hi\nAssistant: hello\n")); err == nil {
		t.Errorf("a plain-text transcript gave %v", err)
	}
	tr, err := New().ParseTranscript(strings.NewReader(""))
	if err != nil || len(tr.Turns) != 0 {
		t.Errorf("empty transcript: %+v %v", tr, err)
	}
}

func TestHookOutput(t *testing.T) {
	out, ok := New().HookOutput(harness.SessionStart, "# Project knowledge\n\nSee <ENTRY.md> & \"nodes\".\n")
	if !ok {
		t.Fatal("no session-start output")
	}
	golden(t, "session-start-output.json", out)
	var v map[string]string
	if err := json.Unmarshal(out, &v); err != nil || v["additional_context"] == "" {
		t.Errorf("output %s: %v", out, err)
	}
	if out, ok := New().HookOutput(harness.PromptContext, "x"); ok || out != nil {
		t.Errorf("Cursor has no prompt-time context channel, got %q", out)
	}
}

func TestDetect(t *testing.T) {
	a := New()
	for _, tc := range []struct {
		env  map[string]string
		want bool
	}{
		{map[string]string{"CURSOR_AGENT": "1"}, true},
		{map[string]string{"CURSOR_VERSION": "2026.06.12"}, true},
		{map[string]string{"CURSOR_AGENT": "0"}, false},
		{map[string]string{"CLAUDECODE": "1"}, false},
		{nil, false},
	} {
		if got := a.Detect(env(tc.env)); got != tc.want {
			t.Errorf("Detect(%v) = %v", tc.env, got)
		}
	}
	if got := a.LaunchArgs("/kk-curate"); !reflect.DeepEqual(got, []string{"-p", "/kk-curate"}) {
		t.Errorf("LaunchArgs = %v", got)
	}
}
