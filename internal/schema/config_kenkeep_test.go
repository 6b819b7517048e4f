package schema

import (
	"testing"

	"github.com/kk-project/kk/internal/store"
)

// kk reads every config.yaml kenkeep 1.17 accepts and refuses every one
// it refuses (its strict settings schema), through both doors: the
// reader (store.ParseConfig) and the JSON Schema `kk validate config`
// uses. kk's own keys (projectId, defaultBranch, traceability, extractors,
// embeddings, llm) and the model settings' harness-less form ({name,
// effort}, for whichever harness runs) are the documented exceptions: kk
// accepts them, and kk init does not write them.
func TestConfigShapesAsKenkeep(t *testing.T) {
	t.Parallel()
	valid := []string{
		"schema_version: 1\n",
		"schema_version: 1\nnotifications: {}\n",
		"schema_version: 1\nnotifications:\n  enabled: false\n",
		"schema_version: 1\nnotifications:\n  backends: {}\n",
		"schema_version: 1\nproposalModel: {harness: claude, name: haiku, effort: low}\n",
		"schema_version: 1\ncuratorModel: {harness: codex, model: gpt-5}\n",
		"schema_version: 1\nbootstrapModel: {harness: codex, model: gpt-5, reasoningEffort: high}\n",
		"schema_version: 1\nproposalModel: {harness: opencode, model: anthropic/claude, agent: build}\n",
		"schema_version: 1\nproposalModel: {harness: cursor, model: auto}\n",
		"schema_version: 1\nproposalModel: {harness: copilot, model: gpt-5}\n",
		"schema_version: 1\ncliDefaultHarness: codex\n",
		// kk's own harness-less form (docs/format.md): kenkeep refuses it.
		"schema_version: 1\nproposalModel: {name: haiku, effort: low}\n",
		"schema_version: 1\ncuratorModel: {name: gpt-5-codex, effort: minimal}\n",
	}
	invalid := []string{
		"schema_version: 1\nnotifications: {backends: {x: 1}}\n",
		"schema_version: 1\nnotifications: {enabled: true, ntfy: {}}\n",
		"schema_version: 1\nnotifications: {enabled: sometimes}\n",
		"schema_version: 1\nnotifications:\n",
		"schema_version: 1\nproposalModel: {harness: claude, name: haiku}\n",
		"schema_version: 1\nproposalModel: {harness: claude, name: gpt, effort: low}\n",
		"schema_version: 1\nproposalModel: {harness: claude, name: haiku, effort: huge}\n",
		"schema_version: 1\nproposalModel: {harness: claude, model: haiku, name: haiku, effort: low}\n",
		"schema_version: 1\ncuratorModel: {harness: codex}\n",
		"schema_version: 1\ncuratorModel: {harness: codex, model: ''}\n",
		"schema_version: 1\ncuratorModel: {harness: codex, model: m, effort: high}\n",
		"schema_version: 1\nbootstrapModel: {harness: opencode, model: m, agent: ''}\n",
		"schema_version: 1\nbootstrapModel: {harness: cursor, model: m, agent: a}\n",
		"schema_version: 1\nbootstrapModel: {harness: emacs, model: m}\n",
		"schema_version: 1\ncliDefaultHarness: ''\n",
		"schema_version: 1\ncliDefaultHarness:\n",
		"schema_version: 1\nproposalModel: {name: haiku, effort: huge}\n",
		"schema_version: 1\nproposalModel: {name: haiku, harnes: claude}\n",
	}
	for _, src := range valid {
		if _, err := store.ParseConfig("config.yaml", []byte(src)); err != nil {
			t.Errorf("the reader refuses %q: %v", src, err)
		}
		doc, err := ParseDocument([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if err := Validate("config", doc); err != nil {
			t.Errorf("the schema refuses %q: %v", src, err)
		}
	}
	for _, src := range invalid {
		if _, err := store.ParseConfig("config.yaml", []byte(src)); err == nil {
			t.Errorf("the reader accepts %q", src)
		}
		doc, err := ParseDocument([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if err := Validate("config", doc); err == nil {
			t.Errorf("the schema accepts %q", src)
		}
	}
	// notifications: {} keeps notifications on, as kenkeep's default.
	cfg, err := store.ParseConfig("config.yaml", []byte("schema_version: 1\nnotifications: {}\n"))
	if err != nil || !cfg.Notifications.On() {
		t.Errorf("notifications: {} turned notifications off (%v)", err)
	}
	if cfg, _ := store.ParseConfig("config.yaml", []byte("schema_version: 1\nnotifications: {enabled: false}\n")); cfg.Notifications.On() {
		t.Error("enabled: false left notifications on")
	}
}
