package opencode

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/harness"
)

func TestDoctor(t *testing.T) {
	root := t.TempDir()
	bin := fakeBinary(t, "opencode", "echo '1.18.33'\n")
	if err := os.WriteFile(filepath.Join(bin, "kk"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	a := &Adapter{Base: harness.Base{S: spec}, getenv: env(map[string]string{"PATH": bin})}

	cs := checksByName(a.Doctor(context.Background(), root))
	for _, name := range []string{"config", "plugin", "skills"} {
		if cs[name].Level != levelWarn {
			t.Errorf("%s before install: %+v", name, cs[name])
		}
	}
	if c := cs["binary"]; c.Level != levelOK || c.Message != "opencode 1.18.33" {
		t.Errorf("binary: %+v", c)
	}

	if _, err := a.Install(context.Background(), harness.InstallOptions{Root: root, Command: "kk", Skills: shippedSkills()}); err != nil {
		t.Fatal(err)
	}
	all := a.Doctor(context.Background(), root)
	for _, c := range all {
		if c.Level != levelOK {
			t.Errorf("%s: %s %s (fix: %s)", c.Name, c.Level, c.Message, c.Fix)
		}
	}
	cs = checksByName(all)
	for _, name := range []string{"binary", "config", "plugin", "kk-command", "skills", "context", "limits"} {
		if _, ok := cs[name]; !ok {
			t.Errorf("no %s check", name)
		}
	}
	if !strings.Contains(cs["context"].Message, contextFile) {
		t.Errorf("the context check should say where the context goes: %q", cs["context"].Message)
	}

	// The instructions entry removed by hand; the plugin edited.
	cfg := filepath.Join(root, ".opencode", "opencode.json")
	write(t, cfg, []byte(`{"plugin": ["./plugins/kk.mjs"]}`))
	plugin := filepath.Join(root, ".opencode", "plugins", "kk.mjs")
	write(t, plugin, []byte(strings.Replace(string(read(t, plugin)), "lint-tick", "lint", 1)))
	cs = checksByName(a.Doctor(context.Background(), root))
	if c := cs["config"]; c.Level != levelWarn || !strings.Contains(c.Message, "instructions") || strings.Contains(c.Message, "under plugin") {
		t.Errorf("config: %+v", c)
	}
	if c := cs["plugin"]; c.Level != levelWarn || !strings.Contains(c.Message, "differs") {
		t.Errorf("plugin: %+v", c)
	}

	// kenkeep's plugin in kk's place; a broken config; nothing on PATH.
	write(t, plugin, []byte("// kenkeep opencode plugin\n"))
	write(t, cfg, []byte("{"))
	a = &Adapter{Base: harness.Base{S: spec}, getenv: env(map[string]string{"PATH": t.TempDir()})}
	cs = checksByName(a.Doctor(context.Background(), root))
	if c := cs["plugin"]; c.Level != levelWarn || !strings.Contains(c.Message, "not kk's") {
		t.Errorf("plugin: %+v", c)
	}
	if c := cs["config"]; c.Level != levelErr {
		t.Errorf("config: %+v", c)
	}
	if c := cs["binary"]; c.Level != levelWarn || c.Fix == "" {
		t.Errorf("binary: %+v", c)
	}
	if _, ok := cs["kk-command"]; ok {
		t.Error("kk-command checked without kk's plugin")
	}
}

func TestDoctorCommandNotOnPath(t *testing.T) {
	root := t.TempDir()
	if _, err := New().Install(context.Background(), harness.InstallOptions{Root: root, Command: "/nowhere/kk", Skills: testSkills}); err != nil {
		t.Fatal(err)
	}
	a := &Adapter{Base: harness.Base{S: spec}, getenv: env(map[string]string{"PATH": t.TempDir()})}
	if c := checksByName(a.Doctor(context.Background(), root))["kk-command"]; c.Level != levelWarn || !strings.Contains(c.Message, "/nowhere/kk") {
		t.Errorf("kk-command: %+v", c)
	}
}
