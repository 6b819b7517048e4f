package store

import (
	"strings"
	"testing"
)

// Ported from kenkeep v1.17 tests/lib/settings.test.ts. The model-choice
// shapes and the notification forms kenkeep accepts and refuses are
// internal/schema TestConfigShapesAsKenkeep; these are the other cases.
func TestKenkeepLibSettingsDefaultsAndOverrides(t *testing.T) {
	k := New(t.TempDir())
	cfg, err := k.LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CurationThreshold != 20 || cfg.LogsRetentionDays != 30 || cfg.LintEveryNSessions != 50 || !cfg.Notifications.On() {
		t.Errorf("defaults without a config.yaml: %+v", cfg)
	}
	cfg, err = ParseConfig("config.yaml", []byte("schema_version: 1\ncurationThreshold: 11\nlogsRetentionDays: 7\n"))
	if err != nil || cfg.CurationThreshold != 11 || cfg.LogsRetentionDays != 7 || cfg.LintEveryNSessions != 50 {
		t.Errorf("overrides: %+v %v; want 11, 7 and the default 50", cfg, err)
	}
	cfg, err = ParseConfig("config.yaml", []byte("schema_version: 1\ncliDefaultHarness: claude\n"))
	if err != nil || cfg.CLIDefaultHarness != "claude" {
		t.Errorf("cliDefaultHarness: %+v %v", cfg, err)
	}
}

func TestKenkeepLibSettingsRefusals(t *testing.T) {
	for src, want := range map[string]string{
		"schema_version: 1\nnotifications:\n  enabled: sometimes\n":                                    "enabled",
		"schema_version: 1\nnotifications:\n  enabled: true\n  ntfy: {}\n":                             "ntfy",
		"schema_version: 1\nnotifications:\n  backends:\n    ntfy: {}\n":                               "backends",
		"schema_version: 1\nnotifications:\n":                                                          "notifications",
		"schema_version: 1\ndrainBound: 5\n":                                                           "drainBound",
		"schema_version: 1\nmystery: 1\n":                                                              "mystery",
		"schema_version: 1\ndefaultHarness: claude\n":                                                  "defaultHarness",
		"schema_version: 1\nproposalModel: {harness: claude, effort: low}\n":                           "proposalModel",
		"schema_version: 1\nproposalModel: {harness: claude, name: haiku, effort: low, extra: true}\n": "proposalModel",
		"schema_version: 1\nbootstrapModel: {harness: claude, name: sonnet, effort: turbo}\n":          "bootstrapModel",
	} {
		if _, err := ParseConfig("config.yaml", []byte(src)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseConfig(%q) = %v; want an error naming %q", src, err, want)
		}
	}
}
