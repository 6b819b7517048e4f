package hooks

import (
	"testing"

	"github.com/kk-project/kk/internal/harness"
)

// TestKenkeepRenderSelfReviewApply: a session log renders turns as
// "[USER]: …" and "[AGENT]: …" paragraphs; a user turn that is only
// /self-review-apply <file>.xml, and the agent turn after it, carry the
// markers kenkeep's extraction prompt reads (kenkeep's transcript.test.ts,
// renderRoleTagged).
func TestKenkeepRenderSelfReviewApply(t *testing.T) {
	for _, c := range []struct {
		name  string
		turns []harness.Turn
		want  string
	}{
		{"plain", []harness.Turn{{Role: harness.User, Text: "normal message"}, {Role: harness.Agent, Text: "normal reply"}},
			"[USER]: normal message\n\n[AGENT]: normal reply"},
		{"self-review-apply", []harness.Turn{
			{Role: harness.User, Text: "/self-review-apply feedback/round-2.xml"},
			{Role: harness.Agent, Text: "I worked through the comments..."},
			{Role: harness.Agent, Text: "Done."},
		}, "[USER /self-review-apply feedback/round-2.xml]: /self-review-apply feedback/round-2.xml\n\n" +
			"[AGENT NARRATION OF SELF-REVIEW feedback/round-2.xml]: I worked through the comments...\n\n[AGENT]: Done."},
		{"the command among other words", []harness.Turn{
			{Role: harness.User, Text: "please run /self-review-apply feedback/round-2.xml"},
			{Role: harness.Agent, Text: "ok"},
		}, "[USER]: please run /self-review-apply feedback/round-2.xml\n\n[AGENT]: ok"},
		{"no answer before the next prompt", []harness.Turn{
			{Role: harness.User, Text: "/self-review-apply a.xml"},
			{Role: harness.User, Text: "never mind"},
			{Role: harness.Agent, Text: "ok"},
		}, "[USER /self-review-apply a.xml]: /self-review-apply a.xml\n\n[USER]: never mind\n\n[AGENT]: ok"},
		{"not a review file", []harness.Turn{
			{Role: harness.User, Text: "/self-review-apply notes.md"},
			{Role: harness.Agent, Text: "ok"},
		}, "[USER]: /self-review-apply notes.md\n\n[AGENT]: ok"},
	} {
		if got, _ := Render(c.turns); got != c.want {
			t.Errorf("%s:\n%q\nwant\n%q", c.name, got, c.want)
		}
	}
}
