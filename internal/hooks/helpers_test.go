package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/curate"
	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/hooks/hookstest"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// t0 is the fixed clock of these tests.
var t0 = time.Date(2026, 5, 20, 8, 30, 0, 0, time.UTC)

const sid = "0d9f6c2e-8f1a-4b7e-9c3d-2a1b4c5d6e7f"

// newKB returns an initialized knowledge base in a temporary repository.
func newKB(t *testing.T) *store.KB {
	t.Helper()
	k := store.New(t.TempDir())
	if _, err := txn.Init(context.Background(), k, store.InitOptions{Version: "test", Now: t0, Command: "test"}); err != nil {
		t.Fatal(err)
	}
	return k
}

// writeFile writes a file under the repository, creating folders.
func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// addNode writes a leaf through kk's writer, regenerating the index unless
// noIndex.
func addNode(t *testing.T, k *store.KB, in contracts.NodeInput, noIndex bool) string {
	t.Helper()
	res, err := curate.WriteNode(context.Background(), k, in, curate.WriteOptions{Command: "test", NoIndex: noIndex})
	if err != nil {
		t.Fatal(err)
	}
	return res.ID
}

// setConfig replaces config.yaml.
func setConfig(t *testing.T, k *store.KB, extra string) {
	t.Helper()
	writeFile(t, k.ConfigPath(), "schema_version: 1\n"+extra)
}

// request returns a request for the fake harness.
func request(k *store.KB, in harness.HookInput) (Request, *[]string) {
	var warnings []string
	return Request{KB: k, Adapter: &hookstest.Adapter{}, Input: in, Now: t0,
		Warn: func(phase string, err error) { warnings = append(warnings, phase+": "+err.Error()) }}, &warnings
}

// transcript writes a fake-harness transcript from (role, text) pairs and
// read lines ("read:<path>") and returns its path.
func transcript(t *testing.T, dir string, lines ...string) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for i := 0; i < len(lines); i++ {
		if p, ok := strings.CutPrefix(lines[i], "read:"); ok {
			if err := enc.Encode(map[string]string{"tool": "Read", "path": p}); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := enc.Encode(map[string]string{"role": lines[i], "text": lines[i+1]}); err != nil {
			t.Fatal(err)
		}
		i++
	}
	p := filepath.Join(dir, "transcript.jsonl")
	writeFile(t, p, b.String())
	return p
}

// sessionFiles lists the files in _sessions/ (dotfiles included).
func sessionFiles(t *testing.T, k *store.KB) []string {
	t.Helper()
	entries, err := os.ReadDir(k.SessionsDir())
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// diagnostics returns the lines of today's (t0's) hook error log.
func diagnostics(t *testing.T, k *store.KB) []Diagnostic {
	t.Helper()
	data, err := os.ReadFile(LogPath(k, t0))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []Diagnostic
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var d Diagnostic
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, d)
	}
	return out
}

// registry holds the fake adapter (and one posing as claude).
func registry(t *testing.T, adapters ...harness.Adapter) *harness.Registry {
	t.Helper()
	if len(adapters) == 0 {
		adapters = []harness.Adapter{&hookstest.Adapter{}}
	}
	r, err := harness.NewRegistry(adapters...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// invocation returns a hook call in dir with the given payload.
func invocation(t *testing.T, dir, event, payload string) (Invocation, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return Invocation{
		Event: event, Harness: hookstest.ID, Harnesses: registry(t),
		Stdin: strings.NewReader(payload), Stdout: &out, Stderr: &errb,
		Getenv: func(string) string { return "" },
		Getwd:  func() (string, error) { return dir, nil },
		Now:    func() time.Time { return t0 },
	}, &out, &errb
}

func mustContain(t *testing.T, s string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(s, w) {
			t.Errorf("%q\nlacks %q", s, w)
		}
	}
}

func mustNotContain(t *testing.T, s string, bad ...string) {
	t.Helper()
	for _, w := range bad {
		if strings.Contains(s, w) {
			t.Errorf("%q\nholds %q", s, w)
		}
	}
}
