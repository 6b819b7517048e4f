package frontmatter

import (
	"bytes"
	"errors"
	"testing"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		name     string
		src      string
		has      bool
		yaml     string
		body     string
		bom      bool
		crlf     bool
		unclosed bool
	}{
		{name: "no front matter", src: "# Title\n\ntext\n", body: "# Title\n\ntext\n"},
		{name: "empty document", src: "", body: ""},
		{name: "basic", src: "---\na: 1\n---\nbody\n", has: true, yaml: "a: 1\n", body: "body\n"},
		{name: "empty block", src: "---\n---\nbody", has: true, yaml: "", body: "body"},
		{name: "body starts blank", src: "---\na: 1\n---\n\nbody\n", has: true, yaml: "a: 1\n", body: "\nbody\n"},
		{name: "no body", src: "---\na: 1\n---\n", has: true, yaml: "a: 1\n", body: ""},
		{name: "closing at EOF without newline", src: "---\na: 1\n---", has: true, yaml: "a: 1\n", body: ""},
		{name: "dots close", src: "---\na: 1\n...\nbody", has: true, yaml: "a: 1\n", body: "body"},
		{name: "trailing spaces on delimiters", src: "--- \na: 1\n---  \nbody", has: true, yaml: "a: 1\n", body: "body"},
		{name: "bom", src: "\xEF\xBB\xBF---\na: 1\n---\nbody", has: true, yaml: "a: 1\n", body: "body", bom: true},
		{name: "crlf", src: "---\r\na: 1\r\n---\r\nbody\r\n", has: true, yaml: "a: 1\r\n", body: "body\r\n", crlf: true},
		{name: "dashes inside body stay", src: "---\na: 1\n---\nx\n---\ny\n", has: true, yaml: "a: 1\n", body: "x\n---\ny\n"},
		{name: "four dashes is not a delimiter", src: "----\na: 1\n", body: "----\na: 1\n"},
		{name: "unclosed", src: "---\na: 1\nbody\n", unclosed: true},
		{name: "only opening", src: "---", unclosed: true},
		{name: "only opening with newline", src: "---\n", unclosed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Split([]byte(tt.src))
			if tt.unclosed {
				if !errors.Is(err, ErrUnclosed) {
					t.Fatalf("err = %v, want ErrUnclosed", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Has != tt.has || string(p.YAML) != tt.yaml || string(p.Body) != tt.body || p.BOM != tt.bom || p.CRLF != tt.crlf {
				t.Fatalf("got has=%v yaml=%q body=%q bom=%v crlf=%v", p.Has, p.YAML, p.Body, p.BOM, p.CRLF)
			}
			if got := p.Join(); !bytes.Equal(got, []byte(tt.src)) {
				t.Fatalf("Join = %q, want the source back", got)
			}
		})
	}
}

func FuzzSplitParse(f *testing.F) {
	for _, s := range []string{
		"---\na: 1\n---\nbody\n", "---\n---\n", "\xEF\xBB\xBF---\r\nk: v\r\n---\r\n", "no front matter",
		"---\ntags:\n  - a\n  - b\n---\n", "---\nk: &a [1,2]\nj: *a\n---\n", "---\n{a: 1, b: 2}\n---\n",
		"---\na: >-\n  folded\n  text\n---\n\nbody", "---\n- list\n---\n", "---\na: 1\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		p, err := Split(src)
		if err != nil {
			return
		}
		if !bytes.Equal(p.Join(), src) {
			t.Fatalf("Split/Join lost bytes: %q", src)
		}
		d, err := Parse(src)
		if err != nil {
			return
		}
		// Re-rendering every key with its own value must give the source back.
		items := make([]Item, 0, len(d.Keys()))
		for _, k := range d.Keys() {
			v, _ := d.Value(k)
			items = append(items, Item{Key: k, Value: v})
		}
		if !d.HasFrontMatter() {
			return
		}
		out, err := d.Render(items, d.Body(), func(string, any) (string, error) { return "", errors.New("no emit expected") })
		if err != nil {
			t.Fatalf("render: %v", err)
		}
		if !bytes.Equal(out, src) {
			t.Fatalf("unchanged render differs:\n%q\n%q", src, out)
		}
	})
}
