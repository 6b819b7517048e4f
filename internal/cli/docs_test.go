package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIDocsUpToDate fails when docs/cli/ differs from the command tree.
// Refresh with: go test ./internal/cli -run TestCLIDocsUpToDate -update
func TestCLIDocsUpToDate(t *testing.T) {
	pages := CommandDocs()
	for name, page := range pages {
		pages[name] = append(page, '\n')
	}
	checkGenerated(t, filepath.Join("..", "..", "docs", "cli"), ".md", pages, "TestCLIDocsUpToDate")
}

// TestManPagesUpToDate fails when docs/man/ differs from the command tree.
// Refresh with: go test ./internal/cli -run TestManPagesUpToDate -update
func TestManPagesUpToDate(t *testing.T) {
	checkGenerated(t, filepath.Join("..", "..", "docs", "man"), ".1", ManPages(), "TestManPagesUpToDate")
}

// checkGenerated compares the files with suffix ext in dir with pages, or
// rewrites them with -update.
func checkGenerated(t *testing.T, dir, ext string, pages map[string][]byte, test string) {
	t.Helper()
	if len(pages) < 50 {
		t.Fatalf("only %d pages generated; the command tree walk is broken", len(pages))
	}
	rel := filepath.ToSlash(strings.TrimPrefix(dir, filepath.Join("..", "..")+string(filepath.Separator)))
	for name, page := range pages {
		path := filepath.Join(dir, name)
		if *update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, page, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		old, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(old, page) {
			t.Errorf("%s/%s is out of date; run: go test ./internal/cli -run %s -update", rel, name, test)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if _, ok := pages[e.Name()]; !ok && strings.HasSuffix(e.Name(), ext) {
			if *update {
				if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
					t.Fatal(err)
				}
				continue
			}
			t.Errorf("%s/%s documents no command; delete it or run with -update", rel, e.Name())
		}
	}
}

// TestManPagesRender formats every page with man(1)'s formatter, when the
// machine has one, and fails on any warning it prints.
func TestManPagesRender(t *testing.T) {
	pages := ManPages()
	for _, name := range []string{"kk.1", "kk-node-write.1", "kk-version.1"} {
		page, ok := pages[name]
		if !ok {
			t.Fatalf("no page %s", name)
		}
		if !bytes.Contains(page, []byte(".SH NAME\n")) || !bytes.Contains(page, []byte(".TH ")) {
			t.Errorf("%s: no .TH or NAME section:\n%s", name, page)
		}
	}
	if !bytes.Contains(pages["kk-node-write.1"], []byte(`.B \-\-description string`)) {
		t.Errorf("kk-node-write.1 lacks its --description option:\n%s", pages["kk-node-write.1"])
	}
	groff, err := exec.LookPath("groff")
	if err != nil {
		return // the text checks above still ran
	}
	for name, page := range pages {
		cmd := exec.Command(groff, "-man", "-Tutf8", "-ww", "-z")
		cmd.Stdin = bytes.NewReader(page)
		out, err := cmd.CombinedOutput()
		if err != nil || len(out) > 0 {
			t.Errorf("groff on %s: %v\n%s", name, err, out)
		}
	}
}

// TestDocsStandAlone: the README, docs/ and third_party/ name no path of a
// development machine (a reference they need is summarised in docs/, with
// its public source named).
func TestDocsStandAlone(t *testing.T) {
	var files []string
	for _, pattern := range []string{"README.md", "docs/*.md", "docs/ported/*.md", "docs/cli/*.md", "third_party/*/*.md"} {
		m, err := filepath.Glob(filepath.Join("..", "..", pattern))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 20 {
		t.Fatalf("only %d documents found", len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			for _, bad := range []string{"/work/", "shared/reference", "../shared", "/root/", "/home/"} {
				if strings.Contains(line, bad) {
					t.Errorf("%s:%d names a path of a development machine (%s): %s", strings.TrimPrefix(f, "../../"), i+1, bad, line)
				}
			}
		}
	}
}
