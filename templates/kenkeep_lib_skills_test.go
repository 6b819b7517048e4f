package templates_test

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/kk-project/kk/templates"
)

// Ported from kenkeep v1.17 tests/skills/kk-session-extract.test.ts: the
// skill ships and documents the live extraction workflow and its scoped
// dedup, in kk's commands and words. (The skill set itself is
// TestSkillsParse; every command a skill names is checked against the
// command tree by TestSkillCommandsExist.)
func TestKenkeepLibSessionExtractWorkflow(t *testing.T) {
	src, err := fs.ReadFile(templates.Skills, "skills/kk-session-extract/SKILL.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(src)
	for _, want := range []string{
		"kk prompt show proposal-extract", // the extraction prompt
		"kk session-log stage-live",       // staging the live session
		"--session-id <session-id>",       // under the host's id, replacing the same log
		"--generate-session-id",           // or an id kk makes up
		"Nothing is written",              // no candidates: no writes
		"kk curate-dedup --session-id",    // dedup scoped to this session
		"kk curate-persist",               // persist
		"kk index rebuild",                // rebuild
		"kk rebalance trigger",            // structure
		"<kk-private>",                    // private spans stay out
	} {
		if !strings.Contains(text, want) {
			t.Errorf("kk-session-extract does not say %q", want)
		}
	}
}
