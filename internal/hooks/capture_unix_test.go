//go:build unix

package hooks

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/session"
	"github.com/kk-project/kk/internal/usage"
)

// A usage ledger, or a session's log under _sessions/, that is a named
// pipe held the capture to its deadline (each was opened for reading,
// which waits for a writer): each is refused at once. With a ledger that
// is a pipe the turn is captured and the ledger's problem is a warning
// naming it; a session log that is a pipe is an error naming it (kk
// writes no file in its place), not a hook that hangs.
func TestCaptureFilesNotRegular(t *testing.T) {
	for _, which := range []string{"ledger", "session log"} {
		t.Run(which, func(t *testing.T) {
			k := newKB(t)
			id := addNode(t, k, contracts.NodeInput{Type: "practice", Title: "Retry policy", Description: "d", Body: "b"}, false)
			fifo := usage.Path(k)
			if which == "session log" {
				fifo = filepath.Join(k.SessionsDir(), "20260520-0830-"+sid+".md")
			}
			if err := os.MkdirAll(filepath.Dir(fifo), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			p := transcript(t, k.Root, "user", question, "assistant", answer, "read:.ai/kenkeep/nodes/"+id+".md")
			r, warnings := request(k, harness.HookInput{HarnessEvent: "Stop", SessionID: sid, TranscriptPath: p, CWD: k.Root})
			res, err := Capture(context.Background(), r)
			if which == "session log" {
				if err == nil || !strings.Contains(err.Error(), fifo) || !strings.Contains(err.Error(), "not a regular file") {
					t.Errorf("capture into a named pipe: %+v, %v", res, err)
				}
				if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
					t.Errorf("the named pipe was replaced: %v, %v", fi, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Action != session.CaptureCreated {
				t.Errorf("capture: %+v", res)
			}
			if len(*warnings) != 1 || !strings.Contains((*warnings)[0], "usage.jsonl") || !strings.Contains((*warnings)[0], "not a regular file") {
				t.Errorf("warnings: %q", *warnings)
			}
		})
	}
}
