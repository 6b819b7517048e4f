package main

import (
	"bytes"
	"strings"
	"testing"
)

// The notices cover Go itself and every module kk links on any released
// system, each with its licence text; the Apache-2.0 validator kk keeps a
// copy of is named with its copy.
func TestNotices(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list three times")
	}
	var b bytes.Buffer
	if err := notices(&b, "github.com/kk-project/kk/cmd/kk"); err != nil {
		t.Fatal(err)
	}
	doc := b.String()
	mods, err := modules("github.com/kk-project/kk/cmd/kk")
	if err != nil {
		t.Fatal(err)
	}
	if len(mods) < 20 {
		t.Fatalf("only %d modules found", len(mods))
	}
	for _, m := range mods {
		if !strings.Contains(doc, "\n## "+m.Path+" ") {
			t.Errorf("no notice for %s", m.Path)
		}
	}
	for _, want := range []string{
		"## Go standard library and runtime (go",
		"## github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 (a copy in ./third_party/jsonschema)",
		"Apache License",
		"## github.com/inconshreveable/mousetrap ", // linked on Windows only
		"## modernc.org/sqlite ",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("the notices lack %q", want)
		}
	}
	// every module's section holds at least one licence text
	for _, m := range mods {
		i := strings.Index(doc, "\n## "+m.Path+" ")
		if i < 0 {
			continue // reported above
		}
		if rest := doc[i+1:]; !strings.HasPrefix(rest[strings.Index(rest, "\n")+1:], "\n### ") {
			t.Errorf("the section of %s starts with no licence text", m.Path)
		}
	}
}
