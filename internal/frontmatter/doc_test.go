package frontmatter

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/yamlstyle"
)

func plainEmit(key string, v any) (string, error) { return fmt.Sprintf("%s: %v", key, v), nil }

func TestParseValues(t *testing.T) {
	src := "---\n# lead comment\ntitle: Hello\ncount: 3\nratio: 1.5\nok: true\nnone: ~\nwhen: 2024-01-02\nlist:\n  - a\n  - b\nmap:\n  x: 1\n---\nbody\n"
	d, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"title": "Hello", "count": int64(3), "ratio": 1.5, "ok": true, "none": nil, "when": "2024-01-02",
		"list": []any{"a", "b"}, "map": map[string]any{"x": int64(1)},
	}
	for k, w := range want {
		got, ok := d.Value(k)
		if !ok || !Equal(got, w) {
			t.Errorf("%s = %#v, want %#v", k, got, w)
		}
	}
	if got := strings.Join(d.Keys(), ","); got != "title,count,ratio,ok,none,when,list,map" {
		t.Errorf("keys = %s", got)
	}
}

func TestParseErrors(t *testing.T) {
	tests := map[string]string{
		"---\na: [1\n---\n":      "invalid YAML",
		"---\n- a\n- b\n---\n":   "must be a mapping",
		"---\na: 1\na: 2\n---\n": "a",
		"---\n? [a]\n: 1\n---\n": "keys must be plain strings",
		"---\na: 1\nno close\n":  "never closed",
		"---\nx: &a [*a]\n---\n": "",
	}
	for src, want := range tests {
		_, err := Parse([]byte(src))
		if err == nil {
			if want == "" {
				continue
			}
			t.Errorf("%q: no error", src)
			continue
		}
		if want != "" && !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %q does not mention %q", src, err, want)
		}
	}
}

func TestAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("---\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 10; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [", i, i)
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*a%d", i-1)
		}
		b.WriteString("]\n")
	}
	b.WriteString("---\n")
	_, err := Parse([]byte(b.String()))
	if err == nil || !strings.Contains(err.Error(), "alias") {
		t.Fatalf("err = %v, want an alias expansion error", err)
	}
}

func TestRenderKeepsUnchangedKeys(t *testing.T) {
	src := "---\n# keep me\ntitle: 'Quoted: title'\ntags:   [a, b]   # flow style\ncount: 1\n---\nbody\n"
	d, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	items := []Item{{"title", "Quoted: title"}, {"tags", []string{"a", "b"}}, {"count", 2}}
	out, err := d.Render(items, d.Body(), plainEmit)
	if err != nil {
		t.Fatal(err)
	}
	want := "---\n# keep me\ntitle: 'Quoted: title'\ntags:   [a, b]   # flow style\ncount: 2\n---\nbody\n"
	if string(out) != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
	// Unchanged: exactly the source.
	items[2].Value = int64(1)
	out, _ = d.Render(items, d.Body(), func(string, any) (string, error) { return "", errors.New("unexpected emit") })
	if string(out) != src {
		t.Fatalf("unchanged render = %q", out)
	}
}

func TestRenderCRLF(t *testing.T) {
	src := "---\r\na: 1\r\nb: 2\r\n---\r\nbody\r\n"
	d, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	out, err := d.Render([]Item{{"a", 1}, {"b", 3}}, d.Body(), plainEmit)
	if err != nil {
		t.Fatal(err)
	}
	if want := "---\r\na: 1\r\nb: 3\r\n---\r\nbody\r\n"; string(out) != want {
		t.Fatalf("got %q want %q", out, want)
	}
}

func TestRenderFlowMappingReEmits(t *testing.T) {
	d, err := Parse([]byte("---\n{a: 1, b: 2}\n---\n"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := d.Render([]Item{{"a", 1}, {"b", 5}}, d.Body(), plainEmit)
	if err != nil {
		t.Fatal(err)
	}
	if want := "---\na: 1\nb: 5\n---\n"; string(out) != want {
		t.Fatalf("got %q want %q", out, want)
	}
}

func TestEmitKeepsNestedOrder(t *testing.T) {
	v := []any{yamlstyle.Map{{Key: "id", Value: "map-x"}, {Key: "reason", Value: "calls it"}}}
	got, err := Emit("kk_related", v)
	if err != nil {
		t.Fatal(err)
	}
	if want := "kk_related:\n  - id: map-x\n    reason: calls it"; got != want {
		t.Fatalf("got %q want %q", got, want)
	}
	if !Equal(v, []any{map[string]any{"reason": "calls it", "id": "map-x"}}) {
		t.Fatal("an ordered map does not equal its decoded form")
	}
}

// TestParseErrorsNameFileLines: a line number in a front matter error is
// the line of the file, as an editor numbers it (the opening --- is line
// 1), as kk validate numbers it; not the line within the YAML block.
func TestParseErrorsNameFileLines(t *testing.T) {
	tests := map[string]string{
		"---\ntitle: T\ntags: a: b\n---\nbody\n":             "line 3: mapping values are not allowed",
		"---\ntype: practice\ntitle: A\ntitle: B\n---\n":     "appears twice (line 4)",
		"\xef\xbb\xbf---\r\ntitle: T\r\n\tbad: 1\r\n---\r\n": "line 3: found a tab character",
		"---\na: 1\n? [a]\n: 1\n---\n":                       "front matter line 3: keys must be plain strings",
		"---\na: 1\nb:\n  c: &x [*x]\n---\n":                 "line 4",
	}
	for src, want := range tests {
		_, err := Parse([]byte(src))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want it to say %q", src, err, want)
		}
	}
}

// A document saved with CRLF keeps CRLF on every line of its body when
// rendered: the body given (a kept body whose last line end was trimmed
// to LF, or a new body written with LF) takes the file's line ends.
func TestRenderCRLFBody(t *testing.T) {
	src := "---\r\na: 1\r\n---\r\none\r\n\r\n- item\r\n"
	d, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for body, want := range map[string]string{
		"one\r\n\r\n- item\n": "---\r\na: 2\r\n---\r\none\r\n\r\n- item\r\n",
		"new\n\nbody\n":       "---\r\na: 2\r\n---\r\nnew\r\n\r\nbody\r\n",
		"mixed\r\nends\nhere": "---\r\na: 2\r\n---\r\nmixed\r\nends\r\nhere",
	} {
		out, err := d.Render([]Item{{"a", 2}}, []byte(body), plainEmit)
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != want {
			t.Errorf("body %q: got %q want %q", body, out, want)
		}
	}
}

// A note written by hand may share a value through a YAML anchor (title:
// &t Retry, description: *t). Changing the anchored value wrote it anew,
// without the anchor, and kept the alias's bytes: the result named an
// anchor that no longer existed, and kk refused the write with "unknown
// anchor 't' referenced", as if the note were broken. The alias is now
// written anew too, as the value it stood for; with the anchored value
// unchanged, every byte is kept.
func TestRenderExpandsAliasesOfALostAnchor(t *testing.T) {
	src := []byte("---\ntitle: &t Retry\ndescription: *t\ntags: [a]\n---\nbody\n")
	d, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	out, err := d.Render([]Item{{"title", "New"}, {"description", "Retry"}, {"tags", []any{"a"}}}, d.Body(), plainEmit)
	if err != nil {
		t.Fatal(err)
	}
	want := "---\ntitle: New\ndescription: Retry\ntags: [a]\n---\nbody\n"
	if string(out) != want {
		t.Errorf("Render = %q, want %q", out, want)
	}
	if _, err := Parse(out); err != nil {
		t.Errorf("the result does not parse: %v", err)
	}
	out, err = d.Render([]Item{{"title", "Retry"}, {"description", "Retry"}, {"tags", []any{"b"}}}, d.Body(), plainEmit)
	if err != nil {
		t.Fatal(err)
	}
	if want := "---\ntitle: &t Retry\ndescription: *t\ntags: [b]\n---\nbody\n"; string(out) != want {
		t.Errorf("Render with the anchor kept = %q, want %q", out, want)
	}
}
