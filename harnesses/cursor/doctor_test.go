package cursor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/harness"
)

func TestDoctor(t *testing.T) {
	root := t.TempDir()
	home := t.TempDir()
	bin := fakeBinary(t, "agent", "echo '2026.06.12-abc123'\n")
	if err := os.WriteFile(filepath.Join(bin, "kk"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	a := &Adapter{Base: harness.Base{S: spec}, getenv: env(map[string]string{"PATH": bin, "HOME": home})}

	// Nothing installed.
	cs := checksByName(a.Doctor(context.Background(), root))
	if c := cs["hooks"]; c.Level != levelWarn || !strings.Contains(c.Message, "missing") {
		t.Errorf("hooks: %+v", c)
	}
	if c := cs["binary"]; c.Level != levelOK || c.Message != "agent 2026.06.12-abc123" {
		t.Errorf("binary: %+v", c)
	}
	if c := cs["transcripts"]; c.Level != levelWarn || !strings.Contains(c.Message, "no transcript path") {
		t.Errorf("transcripts: %+v", c)
	}

	// Installed with the shipped skills, transcripts present.
	if _, err := a.Install(context.Background(), harness.InstallOptions{Root: root, Command: "kk", Skills: shippedSkills()}); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, ".cursor", "projects", slug(root), "agent-transcripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	all := a.Doctor(context.Background(), root)
	for _, c := range all {
		if c.Level != levelOK {
			t.Errorf("%s: %s %s (fix: %s)", c.Name, c.Level, c.Message, c.Fix)
		}
	}
	cs = checksByName(all)
	for _, name := range []string{"binary", "hooks", "kk-command", "skills", "context", "transcripts", "limits"} {
		if _, ok := cs[name]; !ok {
			t.Errorf("no %s check", name)
		}
	}

	// Out of date: an entry timeout changed by hand, a skill edited.
	hooksPath := filepath.Join(root, ".cursor", "hooks.json")
	write(t, hooksPath, []byte(strings.Replace(string(read(t, hooksPath)), `"timeout": 30`, `"timeout": 99`, 1)))
	write(t, filepath.Join(root, ".cursor", "skills", "kk-add", "SKILL.md"), []byte("edited\n"))
	cs = checksByName(a.Doctor(context.Background(), root))
	if c := cs["hooks"]; c.Level != levelWarn || !strings.Contains(c.Message, "older set") {
		t.Errorf("hooks: %+v", c)
	}
	if c := cs["skills"]; c.Level != levelWarn || !strings.Contains(c.Message, "kk-add") {
		t.Errorf("skills: %+v", c)
	}

	// The hook command is not on PATH; the agent binary is missing.
	a = &Adapter{Base: harness.Base{S: spec}, getenv: env(map[string]string{"PATH": t.TempDir(), "HOME": home})}
	cs = checksByName(a.Doctor(context.Background(), root))
	if c := cs["kk-command"]; c.Level != levelWarn || !strings.Contains(c.Message, `"kk"`) {
		t.Errorf("kk-command: %+v", c)
	}
	if c := cs["binary"]; c.Level != levelWarn || c.Fix == "" {
		t.Errorf("binary: %+v", c)
	}

	// A broken file is an error; kenkeep's hooks are reported.
	write(t, hooksPath, []byte("{"))
	if c := checksByName(a.Doctor(context.Background(), root))["hooks"]; c.Level != levelErr {
		t.Errorf("broken hooks file: %+v", c)
	}
	write(t, hooksPath, []byte(`{"version":1,"hooks":{"stop":[{"command":"node ./.ai/kenkeep/hooks/cursor/kk-capture.cjs"}]}}`))
	if c := checksByName(a.Doctor(context.Background(), root))["hooks"]; c.Level != levelWarn || !strings.Contains(c.Message, "kenkeep") {
		t.Errorf("kenkeep hooks: %+v", c)
	}
}

func TestDoctorBinaryTimeout(t *testing.T) {
	old := versionTimeout
	versionTimeout = 200 * time.Millisecond
	defer func() { versionTimeout = old }()
	a := &Adapter{Base: harness.Base{S: spec}, getenv: env(map[string]string{"PATH": fakeBinary(t, "agent", "exec sleep 5\n")})}
	c := a.checkBinary(context.Background())
	if c.Level != levelWarn || !strings.Contains(c.Message, "did not answer") {
		t.Errorf("%+v", c)
	}
}
