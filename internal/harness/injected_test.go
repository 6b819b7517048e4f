package harness

import "testing"

func TestStripTags(t *testing.T) {
	tests := []struct {
		name, in string
		tags     []string
		want     string
	}{
		{"none", "  hello  ", []string{"skill"}, "hello"},
		{"whole turn", "<skill>\n<name>kk-add</name>\nbody\n</skill>", []string{"skill"}, ""},
		{"around words", "<system-reminder>a</system-reminder>\nFix it.\n<system-reminder>b</system-reminder>", []string{"system-reminder"}, "Fix it."},
		{"attributes", `<skill name="x">body</skill>words`, []string{"skill"}, "words"},
		{"longer name kept", "<skills>list</skills>", []string{"skill"}, "<skills>list</skills>"},
		{"unclosed kept", "I typed <skill> myself", []string{"skill"}, "I typed <skill> myself"},
		{"escaped", "&lt;hook_context&gt;# kk\n&gt; map&lt;/hook_context&gt;\n\nExplain it.", []string{"hook_context"}, "Explain it."},
		{"several tags", "<session_context>x</session_context><hook_context>y</hook_context>hello", []string{"session_context", "hook_context"}, "hello"},
		{"nested same name", "<a>1<a>2</a>3</a>end", []string{"a"}, "3</a>end"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := StripTags(tt.in, tt.tags...); got != tt.want {
				t.Errorf("StripTags(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestHasTag(t *testing.T) {
	if !HasTag("x <skill>y</skill>", InjectedTags...) || !HasTag("&lt;hook_context&gt;", InjectedTags...) {
		t.Error("an injected block was not seen")
	}
	if HasTag("a <skills> list and <b>bold</b>", InjectedTags...) {
		t.Error("a block that is not injected was reported")
	}
}
