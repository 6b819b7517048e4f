package copilot

import (
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/harness/harnesstest"
	"github.com/kk-project/kk/internal/safetext"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// golden compares got with testdata/golden/<name>, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	harnesstest.Golden(t, filepath.Join("testdata", "golden", name), got, *update)
}

func writeFile(t *testing.T, p string, data string) {
	t.Helper()
	harnesstest.WriteFile(t, p, []byte(data))
}

// The doctor check levels.
const (
	levelOK    = harness.LevelOK
	levelWarn  = harness.LevelWarn
	levelError = harness.LevelError
)

// The shared helpers, under the names the tests use.
var (
	readFile = harnesstest.ReadFile
	tree     = harnesstest.Tree

	shippedSkills = harnesstest.ShippedSkills
	bashQuote     = safetext.ShellQuote
)

func opts(root string) harness.InstallOptions {
	return harness.InstallOptions{Root: root, Command: "kk", Skills: shippedSkills()}
}

// BenchmarkParseTranscript parses a 5 MB events.jsonl (the capture budget
// is 200 ms for a transcript that size).
func BenchmarkParseTranscript(b *testing.B) {
	var sb strings.Builder
	text := strings.Repeat("word ", 400)
	for i := 0; sb.Len() < 5<<20; i++ {
		fmt.Fprintf(&sb, `{"type":"user.message","data":{"content":%q,"interactionId":"i%d"},"id":"u%d","timestamp":"2026-11-20T10:%02d:%02d.000Z"}`+"\n", text, i, i, i/60%60, i%60)
		fmt.Fprintf(&sb, `{"type":"tool.execution_start","data":{"toolName":"view","arguments":{"path":"docs/f%d.md"}},"id":"t%d","timestamp":"2026-11-20T10:%02d:%02d.100Z"}`+"\n", i, i, i/60%60, i%60)
		fmt.Fprintf(&sb, `{"type":"assistant.message","data":{"content":%q,"toolRequests":[],"interactionId":"i%d"},"id":"a%d","timestamp":"2026-11-20T10:%02d:%02d.200Z"}`+"\n", text, i, i, i/60%60, i%60)
	}
	data := sb.String()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := New().ParseTranscript(strings.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}
