package web

import (
	"strings"
	"testing"
)

func TestLinkPolicy(t *testing.T) {
	for _, tc := range []struct {
		md   string
		dir  string
		want string // the rendered paragraph's inner HTML
	}{
		{"[a](https://example.com/x)", "", `<a href="https://example.com/x">a</a>`},
		{"[a](HTTP://Example.com)", "", `<a href="http://Example.com">a</a>`},
		{"[a](http://user:pw@example.com/)", "", `a`},
		{"[a](javascript:alert(1))", "", `a`},
		{"[a](JavaScript:alert(1))", "", `a`},
		{"[a](&#106;avascript:alert(1))", "", `a`},
		{"[a](java&#x09;script:alert(1))", "", `a`},
		{"[a](data:text/html,x)", "", `a`},
		{"[a](file:///etc/passwd)", "", `a`},
		{"[a](mailto:x@example.com)", "", `a`},
		{"[a](//evil.example/x.md)", "", `a`},
		{"[a](/abs/x.md)", "", `a`},
		{"[a](?q=1)", "", `a`},
		{"[a](x.txt)", "", `a`},
		{"[a](../../x.md)", "go", `a`},
		{"[a](b.md)", "go", `<a href="/leaf/go/b.md">a</a>`},
		{"[a](../b.md#sec)", "go/sub", `<a href="/leaf/go/b.md#sec">a</a>`},
		{"[a](sub/index.md)", "go", `<a href="/folder/go/sub">a</a>`},
		{"[a](index.md)", "", `<a href="/">a</a>`},
		{"[a](my%20leaf.md)", "", `<a href="/leaf/my%20leaf.md">a</a>`},
		{"[a](a&amp;b.md)", "", `<a href="/leaf/a%26b.md">a</a>`},
		{"[a](#x)", "", `<a href="#x">a</a>`},
		{`[a](https://example.com/"onmouseover="x)`, "", `<a href="https://example.com/%22onmouseover=%22x">a</a>`},
		{"<https://example.com/auto>", "", `<a href="https://example.com/auto">https://example.com/auto</a>`},
		{"<javascript:alert(1)>", "", `javascript:alert(1)`},
		{"<x@example.com>", "", `x@example.com`},
		{"see www.example.com now", "", `see <a href="http://www.example.com">www.example.com</a> now`},
		{"![alt](https://example.com/p.png)", "", `<a href="https://example.com/p.png">alt</a>`},
		{"![](https://example.com/p.png)", "", `<a href="https://example.com/p.png">p.png</a>`},
		{"![alt](javascript:x)", "", `alt`},
		{"![alt](p.png)", "", `alt`},
		{"[**b**](javascript:x) after", "", `<strong>b</strong> after`},
		{"<b onclick=x>hi</b>", "", `<!-- raw HTML omitted -->hi<!-- raw HTML omitted -->`},
		{"a <script>alert(1)</script> b", "", `a <!-- raw HTML omitted -->alert(1)<!-- raw HTML omitted --> b`},
	} {
		got, err := renderMarkdown(tc.md, "", tc.dir)
		if err != nil {
			t.Fatal(err)
		}
		inner := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(string(got)), "<p>"), "</p>")
		if inner != tc.want {
			t.Errorf("%q in %q:\n got %s\nwant %s", tc.md, tc.dir, inner, tc.want)
		}
	}
}

func TestMarkdownBlocks(t *testing.T) {
	got, err := renderMarkdown("<div onclick=x>\n<script>alert(1)</script>\n</div>\n\n| a |\n| - |\n| <i>1</i> |\n\n- [x] done\n\n~~old~~\n", "/p", "")
	if err != nil {
		t.Fatal(err)
	}
	s := string(got)
	for _, bad := range []string{"<div", "<script", "onclick", "<i>"} {
		if strings.Contains(s, bad) {
			t.Errorf("rendered %q carries %q", s, bad)
		}
	}
	for _, want := range []string{"<table>", "<del>old</del>", `type="checkbox"`} {
		if !strings.Contains(s, want) {
			t.Errorf("rendered %q lacks %q", s, want)
		}
	}
}
