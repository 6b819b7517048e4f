package codex

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/harness/harnesstest"
)

var levels = harnesstest.Levels

// userConfig writes the user's Codex config.toml: the project's trust
// level and a trust state for each of kk's hooks (in the layout Codex
// writes, harnesses.md §2.1), leaving out the hooks named in skip.
func userConfig(t *testing.T, home, root string, trustProject bool, skip ...string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("model = \"gpt-5-codex\" # the default\n\n[features]\nweb_search = true\n\n")
	if trustProject {
		fmt.Fprintf(&b, "[projects.%q]\ntrust_level = \"trusted\"\n\n", filepath.Dir(root))
	}
	b.WriteString("[notice]\nlines = [\n  \"[hooks.state.\\\"fake\\\"]\",\n]\n\n")
	hooks := filepath.Join(root, ".codex", "hooks.json")
	for _, k := range []string{"pre_compact:0:0", "session_end:0:0", "session_start:0:0", "session_start:0:1", "session_start:0:2", "stop:1:0", "stop:1:1", "user_prompt_submit:0:0"} {
		if !strings.Contains(strings.Join(skip, " "), k) {
			fmt.Fprintf(&b, "[hooks.state.%q]\ntrusted_hash = \"sha256:%x\"\n\n", hooks+":"+k, len(k))
		}
	}
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestDoctor(t *testing.T) {
	installFake(t, "codex", fakeCodex)
	home := t.TempDir()
	t.Setenv("CODEX_HOME", home)
	root := t.TempDir()
	a := New()
	ctx := context.Background()

	// phase: nothing installed.
	if got := levels(a.Doctor(ctx, root)); got != "codex binary=ok codex hooks=error codex config.toml=ok codex hook trust=warn codex skills=error" {
		t.Fatalf("before install: %s", got)
	}

	// phase: installed next to a user hook, but not trusted yet.
	hooks := filepath.Join(root, hooksFile)
	if err := os.MkdirAll(filepath.Dir(hooks), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hooks, []byte(`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"say done"}]}]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	skills, err := shippedSkills()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Install(ctx, harness.InstallOptions{Root: root, Command: "kk", Skills: skills}); err != nil {
		t.Fatal(err)
	}
	checks := a.Doctor(ctx, root)
	if got := levels(checks); got != "codex binary=ok codex hooks=ok codex config.toml=ok codex hook trust=warn codex skills=ok" {
		t.Fatalf("after install: %s", got)
	}
	if !strings.Contains(checks[3].Message, "cannot read") || !strings.Contains(checks[3].Fix, "/hooks") {
		t.Errorf("trust without a user config: %+v", checks[3])
	}
	if !strings.Contains(checks[0].Message, "codex-cli 0.169.0") {
		t.Errorf("binary: %+v", checks[0])
	}

	// phase: the project is not trusted.
	userConfig(t, home, root, false)
	if c := a.Doctor(ctx, root)[3]; c.Level != "warn" || !strings.Contains(c.Message, "does not trust this project") {
		t.Fatalf("untrusted project: %+v", c)
	}

	// phase: one hook not trusted.
	userConfig(t, home, root, true, "stop:1:0")
	if c := a.Doctor(ctx, root)[3]; c.Level != "warn" || !strings.Contains(c.Message, "1 of kk's 8 hooks are not trusted in Codex yet (Stop)") {
		t.Fatalf("one untrusted hook: %+v", c)
	}

	// phase: everything trusted.
	userConfig(t, home, root, true)
	if c := a.Doctor(ctx, root)[3]; c.Level != "ok" {
		t.Fatalf("all trusted: %+v", c)
	}

	// phase: a switched-off hook.
	f, _ := os.OpenFile(filepath.Join(home, "config.toml"), os.O_APPEND|os.O_WRONLY, 0)
	fmt.Fprintf(f, "[hooks.state.%q]\nenabled = false\n", hooks+":user_prompt_submit:0:0")
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if c := a.Doctor(ctx, root)[3]; c.Level != "warn" || !strings.Contains(c.Message, "UserPromptSubmit hooks are switched off") {
		t.Fatalf("switched-off hook: %+v", c)
	}
	userConfig(t, home, root, true)

	// phase: hooks defined in the project's config.toml too.
	cfg := filepath.Join(root, configFile)
	if err := os.WriteFile(cfg, []byte("model = \"o3\"\n\n[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"command\"\ncommand = \"say hi\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c := a.Doctor(ctx, root)[2]; c.Level != "warn" || !strings.Contains(c.Message, ".codex/config.toml line 3 defines hooks too") {
		t.Fatalf("[hooks] in config.toml: %+v", c)
	}

	// phase: hooks switched off.
	if err := os.WriteFile(cfg, []byte("[features]\ncodex_hooks = false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c := a.Doctor(ctx, root)[2]; c.Level != "error" || !strings.Contains(c.Message, "features.codex_hooks = false") {
		t.Fatalf("hooks off: %+v", c)
	}
	if err := os.Remove(cfg); err != nil {
		t.Fatal(err)
	}

	// phase: an edited kk handler is out of date.
	data := read(t, hooks)
	if err := os.WriteFile(hooks, []byte(strings.Replace(string(data), `"timeout": 30`, `"timeout": 60`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, _ := hooksCheck(root); c.Level != "warn" || !strings.Contains(c.Fix, "--upgrade") {
		t.Fatalf("edited handler: %+v", c)
	}

	// phase: no codex on PATH.
	t.Setenv("PATH", t.TempDir())
	if c := a.Doctor(ctx, root)[0]; c.Level != "warn" || !strings.Contains(c.Fix, "npm install -g @openai/codex") {
		t.Fatalf("missing binary: %+v", c)
	}
}

func TestHooksTableLine(t *testing.T) {
	for src, want := range map[string]int{
		"model = \"o3\"\n":           0,
		"[features]\nhooks = true\n": 0,
		"[hooks.state.\"/x/.codex/hooks.json:stop:0:0\"]\ntrusted_hash = \"h\"\n": 0,
		"a = \"\"\"\n[hooks]\n\"\"\"\n":                                           0,
		"x = [\n  \"a\",\n]\n[hooks]\n":                                           4,
		"# [hooks]\n[[hooks.SessionStart]]\n":                                     2,
		"hooks.Stop = []\n":                                                       1,
		"[features]\n[ hooks . Stop ]\n":                                          2,
	} {
		if got := hooksTableLine(src); got != want {
			t.Errorf("%q: line %d, want %d", src, got, want)
		}
	}
}
