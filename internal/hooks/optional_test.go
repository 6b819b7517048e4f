package hooks

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/hooks/hookstest"
)

// contextFileAdapter has no context channel in its hook output and takes
// the session-start text as a file instead, like OpenCode.
type contextFileAdapter struct {
	hookstest.Adapter
	root, text string
}

func (a *contextFileAdapter) WriteContext(root, text string) error {
	a.root, a.text = root, text
	return nil
}

// exportingAdapter sends no transcript path and exports on request.
type exportingAdapter struct {
	hookstest.Adapter
	source string // transcript file to "export"
	fail   bool
}

func (a *exportingAdapter) ExportTranscript(ctx context.Context, in harness.HookInput, path string) error {
	if a.fail {
		return errors.New("export failed")
	}
	data, err := os.ReadFile(a.source)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

func TestSessionStartWritesContextFile(t *testing.T) {
	k := newKB(t)
	addNode(t, k, contracts.NodeInput{Type: "practice", Title: "Wrap errors", Description: "d", Body: "b"}, false)
	r, _ := request(k, harness.HookInput{})
	a := &contextFileAdapter{Adapter: hookstest.Adapter{NoContext: true}}
	r.Adapter = a
	out, err := SessionStart(context.Background(), r)
	if err != nil || out != nil {
		t.Fatalf("output %q, %v", out, err)
	}
	if a.root != k.Root || a.text != sessionStartText(t, k, t0) {
		t.Fatalf("context written to %q: %q", a.root, a.text)
	}
}

func TestCaptureExportsTranscript(t *testing.T) {
	k := newKB(t)
	src := transcript(t, t.TempDir(), "user", question, "assistant", answer)
	r, _ := request(k, harness.HookInput{HarnessEvent: "Stop", SessionID: sid, CWD: k.Root})
	r.Adapter = &exportingAdapter{source: src}
	res, err := Capture(context.Background(), r)
	if err != nil || res.Action == "empty" {
		t.Fatalf("capture: %+v %v", res, err)
	}
	if len(sessionFiles(t, k)) != 1 {
		t.Fatalf("session logs: %v", sessionFiles(t, k))
	}
	entries, _ := os.ReadDir(k.StateDir())
	for _, e := range entries {
		if len(e.Name()) > 11 && e.Name()[:11] == "transcript-" {
			t.Fatalf("export %s left behind", e.Name())
		}
	}
	r.Adapter = &exportingAdapter{fail: true}
	if _, err := Capture(context.Background(), r); err == nil {
		t.Fatal("a failed export was not reported")
	}
	r.Adapter = &hookstest.Adapter{}
	if _, err := Capture(context.Background(), r); !errors.Is(err, ErrNoTranscript) {
		t.Fatalf("no transcript and no exporter: %v", err)
	}
	// An adapter that knows why it names no transcript says why.
	r.Input.NoTranscript = "HOME is not set"
	if _, err := Capture(context.Background(), r); err == nil || err.Error() != "HOME is not set; nothing was captured" {
		t.Fatalf("the adapter's reason: %v", err)
	}
}
