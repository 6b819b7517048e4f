package claude

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/harness/harnesstest"
)

var levels = harnesstest.Levels

func TestDoctor(t *testing.T) {
	installFake(t, "claude", fakeClaude)
	root := t.TempDir()
	a := New()
	ctx := context.Background()

	// phase: nothing installed.
	checks := a.Doctor(ctx, root)
	if got := levels(checks); got != "claude binary=ok claude hooks=error claude skills=error" {
		t.Fatalf("before install: %s", got)
	}
	if !strings.Contains(checks[0].Message, "2.1.330 (Claude Code)") {
		t.Errorf("binary message %q", checks[0].Message)
	}

	// phase: installed with the shipped skills.
	skills, err := shippedSkills()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Install(ctx, harness.InstallOptions{Root: root, Command: "kk", Skills: skills}); err != nil {
		t.Fatal(err)
	}
	if got := levels(a.Doctor(ctx, root)); got != "claude binary=ok claude hooks=ok claude skills=ok" {
		t.Fatalf("after install: %s", got)
	}

	// phase: an edited handler and skill are out of date.
	p := filepath.Join(root, settingsFile)
	data := read(t, p)
	if err := os.WriteFile(p, []byte(strings.Replace(string(data), `"timeout": 30`, `"timeout": 31`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	skill := filepath.Join(root, skillsDir, "kk-add", "SKILL.md")
	if err := os.WriteFile(skill, append(read(t, skill), "edited\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	checks = a.Doctor(ctx, root)
	if got := levels(checks); got != "claude binary=ok claude hooks=warn claude skills=warn" {
		t.Fatalf("after edits: %s", got)
	}
	if checks[1].Fix != "kk init --harnesses claude --upgrade" {
		t.Errorf("fix %q", checks[1].Fix)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}

	// phase: hooks switched off in the local settings.
	if err := os.WriteFile(filepath.Join(root, localFile), []byte(`{"disableAllHooks": true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if c := a.Doctor(ctx, root)[1]; c.Level != "error" || !strings.Contains(c.Message, "disableAllHooks") {
		t.Fatalf("disableAllHooks: %+v", c)
	}
	if err := os.Remove(filepath.Join(root, localFile)); err != nil {
		t.Fatal(err)
	}

	// phase: a broken settings file.
	if err := os.WriteFile(p, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c := a.Doctor(ctx, root)[1]; c.Level != "error" || !strings.Contains(c.Message, settingsFile) {
		t.Fatalf("broken file: %+v", c)
	}

	// phase: no claude on PATH.
	t.Setenv("PATH", t.TempDir())
	if c := a.Doctor(ctx, root)[0]; c.Level != "warn" || !strings.Contains(c.Fix, "npm install -g @anthropic-ai/claude-code") {
		t.Fatalf("missing binary: %+v", c)
	}
}
