//go:build unix

package hooks

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/harness"
)

// On a machine too busy for the whole call, session-start prints at its
// deadline ENTRY.md and the snapshot note, read first, instead of
// nothing: here the notes for the user wait on a config.yaml that never
// gives its bytes (a named pipe nobody writes), past the deadline.
func TestSessionStartAnswersAtTheDeadline(t *testing.T) {
	k := newKB(t)
	addNode(t, k, contracts.NodeInput{Type: "practice", Title: "Wrap errors with the operation", Description: "Every returned error names what failed.", Body: "Use fmt.Errorf."}, false)
	want := sessionStartText(t, k, t0)

	cfg := k.ConfigPath()
	if err := os.Remove(cfg); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	// The worker the deadline abandons stays blocked in that open, writing
	// nothing more, until the test process ends.
	inv, out, _ := invocation(t, k.Root, "session-start", `{"session_id":"`+sid+`","cwd":"`+k.Root+`"}`)
	inv.Options = Options{Deadlines: map[harness.Event]time.Duration{harness.SessionStart: 300 * time.Millisecond}}
	Run(context.Background(), inv)
	var env struct{ Event, Context string }
	if err := json.Unmarshal(out.Bytes(), &env); err != nil || env.Context != want {
		t.Fatalf("stdout %q (%v), want the context\n%s", out, err, want)
	}
	ds := diagnostics(t, k)
	if len(ds) != 1 || ds[0].Phase != "deadline" || !strings.HasSuffix(ds[0].Error, "printed the answer found before") {
		t.Fatalf("diagnostics %+v", ds)
	}
}
