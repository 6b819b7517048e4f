package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/harness"
)

// TestModelSettingsParse: the model settings take {harness?, name, effort?,
// agent?} (and kenkeep's model and reasoningEffort spellings); anything
// else is an error naming the setting's line and what is wrong.
func TestModelSettingsParse(t *testing.T) {
	cfg, err := ParseConfig("config.yaml", []byte("schema_version: 1\nproposalModel: {name: sonnet, effort: medium}\n"+
		"curatorModel:\n  harness: codex\n  model: gpt-5-codex\n  reasoningEffort: high\nbootstrapModel: {harness: opencode, model: anthropic/x, agent: plan}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		got  harness.Model
		want harness.Model
	}{
		{cfg.ProposalModel.HarnessModel(), harness.Model{Name: "sonnet", Effort: "medium"}},
		{cfg.CuratorModel.HarnessModel(), harness.Model{Harness: "codex", Name: "gpt-5-codex", Effort: "high"}},
		{cfg.BootstrapModel.HarnessModel(), harness.Model{Harness: "opencode", Name: "anthropic/x", Agent: "plan"}},
	} {
		if c.got != c.want {
			t.Errorf("got %+v, want %+v", c.got, c.want)
		}
	}
	if m := (*ModelSetting)(nil).HarnessModel(); !m.IsZero() {
		t.Errorf("no setting: %+v", m)
	}
	for _, c := range []struct{ yaml, msg string }{
		{"proposalModel: sonnet", "line 2: proposalModel: must be a mapping"},
		{"proposalModel: {name: sonnet, efort: high}", `line 2: proposalModel: unknown key "efort"; known keys: harness, name, model, effort, reasoningEffort, agent`},
		{"proposalModel: {name: 5}", ""}, // a YAML number is text here: "5"
		{"proposalModel: {name: [a]}", "name must be a non-empty one-line string"},
		{"proposalModel: {name: ''}", "name must be a non-empty one-line string"},
		{"proposalModel: {name: ~}", "name must be a non-empty one-line string"},
		{"proposalModel: {effort: extreme}", `effort "extreme" is not one of minimal, low, medium, high, xhigh, max`},
		{"curatorModel: {reasoningEffort: lots}", `reasoningEffort "lots" is not one of`},
		{"bootstrapModel: {harness: claud}", `harness "claud" is not one of claude, codex, copilot, cursor, gemini, opencode`},
		{"proposalModel: {name: a, model: b}", `name "a" and model "b" name two models`},
		{"proposalModel: {effort: low, reasoningEffort: high}", `effort "low" and reasoningEffort "high" disagree`},
		// A setting that names its harness is kenkeep's variant for it, so that kenkeep reads it too.
		{"proposalModel: {harness: claude, name: sonnet}", `a claude setting needs "effort" (it takes harness, name, effort)`},
		{"proposalModel: {harness: claude, name: gpt-5, effort: high}", `name is "gpt-5"; use one of haiku, sonnet, opus`},
		{"proposalModel: {harness: claude, name: opus, effort: minimal}", `effort is "minimal"; use one of low, medium, high, xhigh, max`},
		{"proposalModel: {harness: codex, name: gpt-5-codex}", `a codex setting needs "model"`},
		{"proposalModel: {harness: cursor, model: x, effort: high}", `a cursor setting has no key "effort" (it takes harness, model)`},
		{"proposalModel: {harness: codex, model: gpt-5-codex, reasoningEffort: none}", ""}, // kenkeep takes any string here
		{"proposalModel: {harness: gemini, model: gemini-2.5-pro}", ""},
	} {
		_, err := ParseConfig("config.yaml", []byte("schema_version: 1\n"+c.yaml+"\n"))
		switch {
		case c.msg == "" && err != nil:
			t.Errorf("%s: %v", c.yaml, err)
		case c.msg != "" && (err == nil || !strings.HasPrefix(err.Error(), "config.yaml: ") || !strings.Contains(err.Error(), c.msg)):
			t.Errorf("%s: error %v, want %q", c.yaml, err, c.msg)
		}
	}
}

// A value of the wrong kind is named by its line, its setting and what
// the setting takes, not by the YAML decoder's Go types.
func TestParseConfigNamesTheSettingOfAWrongValue(t *testing.T) {
	for _, c := range []struct{ yaml, msg string }{
		{"curationThreshold: lots", "line 2: curationThreshold: \"lots\" is not a whole number"},
		{"logsRetentionDays: [1]", "line 2: logsRetentionDays: a list is not a whole number"},
		{"defaultBranch: {a: b}", "line 2: defaultBranch: a mapping is not a string"},
		{"traceability: {allowDependsOnCycles: 3}", "line 2: traceability.allowDependsOnCycles: \"3\" is not true or false"},
	} {
		_, err := ParseConfig("config.yaml", []byte("schema_version: 1\n"+c.yaml+"\n"))
		if err == nil || err.Error() != "config.yaml: "+c.msg {
			t.Errorf("%s: error %v, want %q", c.yaml, err, "config.yaml: "+c.msg)
		}
	}
}

// A config.yaml LoadConfig cannot use is a *ConfigError naming the file
// and the line, with ParseConfig's message.
func TestLoadConfigError(t *testing.T) {
	k := New(t.TempDir())
	for src, line := range map[string]int{
		"schema_version: 1\ncurationThreshold: [\n":           2,
		"schema_version: 1\n\n\ncurationThreshold: many\n":    4,
		"schema_version: 2\n":                                 0,
		"schema_version: 1\nlogsRetentionDays: 3\nbogus: 1\n": 3,
	} {
		if err := os.MkdirAll(filepath.Dir(k.ConfigPath()), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(k.ConfigPath(), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := k.LoadConfig()
		_, perr := ParseConfig(".ai/kenkeep/config.yaml", []byte(src))
		ce, ok := errors.AsType[*ConfigError](err)
		if !ok || ce.File != ".ai/kenkeep/config.yaml" || ce.Line != line || perr == nil || err.Error() != perr.Error() {
			t.Errorf("%q: %#v (%v), want line %d and %v", src, err, err, line, perr)
		}
	}
	// A config.yaml that cannot be read at all: a folder.
	if err := os.Remove(k.ConfigPath()); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(k.ConfigPath(), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := k.LoadConfig()
	if ce, ok := errors.AsType[*ConfigError](err); !ok || ce.File != ".ai/kenkeep/config.yaml" || ce.Line != 0 || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("a folder: %#v (%v)", err, err)
	}
}
