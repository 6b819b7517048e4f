package web

import (
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/index"
)

func TestSnippetParts(t *testing.T) {
	o, c := index.SnippetOpen, index.SnippetClose
	m := func(w string) string { return o + w + c }
	for _, tc := range []struct {
		in   string
		want string // the parts, marked ones in {}
	}{
		{"wrap " + m("errors") + " with the operation", "wrap {errors} with the operation"},
		{"**Always** " + m("wrap") + " `fmt.Errorf` and _then_ return", "Always {wrap} fmt.Errorf and then return"},
		// a link keeps its text, loses its target; a marked word inside it too
		{"see [the " + m("retry") + " helper](http/retry.md) first", "see the {retry} helper first"},
		{"see [" + m("retry") + "](http/retry.md) first", "see {retry} first"},
		{"see [retry](http/retry.md) and [docs](https://example.com/x)", "see retry and docs"},
		// the index drops a link's "](target)" and leaves its "["
		{"see [the " + m("backoff") + " " + m("helper") + " first, [" + m("docs") + " too", "see the {backoff} {helper} first, {docs} too"},
		// a matched function name before its arguments is a call, not a link
		{"call fmt." + m("Errorf") + `("reading %s: %w", path, err)`, `call fmt.{Errorf}("reading %s: %w", path, err)`},
		{"call " + m("retry") + "(ctx)", "call {retry}(ctx)"},
		// heading marks are not text (the window folds lines, so a list item
		// mid-window is text as it stands); brackets the
		// index did not write stay
		{"## Why " + m("timeouts") + " matter - [x] set one", "Why {timeouts} matter - [x] set one"},
		{"arr" + o + "0" + c + " is the " + m("first"), "arr" + o + "0" + c + " is the {first}"},
		{"…a glob `src/**/*.go` " + m("matches") + "…", "…a glob src/**/*.go {matches}…"},
		// raw HTML is text, never markup
		{"<b>" + m("bold") + "</b> <script>alert(1)</script>", "<b>{bold}</b> <script>alert(1)</script>"},
		{"no match at all", "no match at all"},
		{"", ""},
	} {
		var b strings.Builder
		for _, p := range snippetParts(tc.in) {
			if p.Mark {
				b.WriteString("{" + p.Text + "}")
			} else {
				b.WriteString(p.Text)
			}
		}
		if b.String() != tc.want {
			t.Errorf("snippetParts(%q)\n got %q\nwant %q", tc.in, b.String(), tc.want)
		}
	}
}
