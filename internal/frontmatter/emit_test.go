package frontmatter

import (
	"testing"
)

// TestEmitKeepsNumberLikeTextAString: a string js-yaml 3 writes plain but
// YAML 1.2 reads as a number is written quoted, and reads back as the
// string it was; every other string is written as js-yaml writes it.
func TestEmitKeepsNumberLikeTextAString(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"0o17", "title: '0o17'"},
		{"0O7", "title: '0O7'"},
		{"0B101", "title: '0B101'"},
		{"0X1F", "title: '0X1F'"},
		{"+.5", "title: '+.5'"},
		{"-.5", "title: '-.5'"},
		{"01.5", "title: '01.5'"},
		{"01e5", "title: '01e5'"},
		{"1.5", "title: '1.5'"},               // js-yaml's own quoting
		{"0x1F", "title: '0x1F'"},             // js-yaml's own quoting
		{"2026-1-2", "title: 2026-1-2"},       // a timestamp, which kk reads as its text
		{"1.2.3", "title: 1.2.3"},             // a version: a string for both
		{"10 things", "title: 10 things"},     // a string for both
		{"-dash", "title: '-dash'"},           // js-yaml's own quoting
		{"'0o17", "title: '''0o17'"},          // js-yaml's own quoting
		{".hidden", "title: .hidden"},         // a string for both
		{"0o17 apples", "title: 0o17 apples"}, // a string for both
	} {
		got, err := Emit("title", c.in)
		if err != nil {
			t.Fatalf("Emit(%q): %v", c.in, err)
		}
		if got != c.want {
			t.Errorf("Emit(%q) = %q, want %q", c.in, got, c.want)
		}
		d, err := Parse([]byte("---\n" + got + "\n---\n"))
		if err != nil {
			t.Fatalf("%q does not parse: %v", got, err)
		}
		if v, _ := d.Value("title"); v != c.in {
			t.Errorf("%q reads back as %#v, want %q", got, v, c.in)
		}
	}
	got, err := Emit("tags", []string{"0o17", "go"})
	if want := "tags:\n  - '0o17'\n  - go"; err != nil || got != want {
		t.Errorf("Emit(tags) = %q, %v; want %q", got, err, want)
	}
}
