package opencode

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/internal/harness"
)

// ContextWriter and TranscriptExporter are the optional harness
// interfaces the hook runtime uses for OpenCode (see harness.ContextWriter
// and harness.TranscriptExporter).
type (
	ContextWriter      = harness.ContextWriter
	TranscriptExporter = harness.TranscriptExporter
)

// contextHeader opens the context file.
const contextHeader = "<!-- Written by kk at the start of every OpenCode session (kk hook session-start --harness opencode); not tracked by git. Edits are lost. -->"

// WriteContext implements ContextWriter: it writes the session-start text
// into .ai/kenkeep/.state/opencode-context.md, which kk's entry in
// opencode.json "instructions" makes OpenCode read. The file is written
// only when its content changes.
func (*Adapter) WriteContext(root, text string) error {
	kbDir := filepath.Join(root, ".ai", "kenkeep")
	if fi, err := os.Stat(kbDir); err != nil || !fi.IsDir() {
		return fmt.Errorf("no knowledge base at %s: %s is missing", root, kbDir)
	}
	p := filepath.Join(root, filepath.FromSlash(contextFile))
	data := []byte(contextHeader + "\n\n" + strings.TrimRight(text, "\n") + "\n")
	if old, err := os.ReadFile(p); err == nil && bytes.Equal(old, data) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(p, data, 0o644)
}

// exportTimeout bounds `opencode export`, which takes 1.4–3 s.
var exportTimeout = 30 * time.Second

// exportID is an OpenCode session id that can be passed to `opencode
// export` as an argument.
var exportID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)

// ExportTranscript implements TranscriptExporter: it runs `opencode export
// <ses_id>` in the session's project folder (in.CWD) with stdout going
// straight to the file at path (OpenCode cuts the export short when its
// stdout is a pipe), with KK_INTERNAL set so the OpenCode it starts runs
// no kk hook. in.SessionID is OpenCode's id, as ParseHookInput returns
// it. On failure the file is removed.
func (a *Adapter) ExportTranscript(ctx context.Context, in harness.HookInput, path string) (err error) {
	if in.SessionID == "" {
		return errors.New("the OpenCode hook payload names no session: nothing to export")
	}
	if !exportID.MatchString(in.SessionID) {
		return fmt.Errorf("OpenCode session id %q is not one `opencode export` takes", in.SessionID)
	}
	bin, err := a.lookPath(binary)
	if err != nil && in.Binary != "" && filepath.IsAbs(in.Binary) {
		// Not on PATH: the OpenCode the plugin runs in (the plugin names
		// it).
		bin, err = a.lookPath(in.Binary)
	}
	if err != nil {
		return fmt.Errorf("exporting the OpenCode session: %v; %s", err, a.InstallHint())
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("exporting the OpenCode session: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = cerr
		}
		if err != nil {
			os.Remove(path)
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, exportTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "export", in.SessionID)
	if fi, err := os.Stat(in.CWD); in.CWD != "" && err == nil && fi.IsDir() {
		cmd.Dir = in.CWD // sessions belong to a project, found from the folder
	}
	cmd.Env = harness.ChildEnv(os.Environ())
	cmd.Stdout = f
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.WaitDelay = harness.DefaultWaitDelay
	runErr := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("opencode export %s did not finish in time (it takes a few seconds; kk waits at most %s)", in.SessionID, exportTimeout)
	case errors.As(runErr, &exit):
		return fmt.Errorf("opencode export %s failed (exit code %d)%s", in.SessionID, exit.ExitCode(), harness.OutputTail(stderr.String()))
	case runErr != nil:
		return fmt.Errorf("running opencode export: %w", runErr)
	}
	if fi, err := f.Stat(); err != nil || fi.Size() == 0 {
		return fmt.Errorf("opencode export %s printed nothing%s", in.SessionID, harness.OutputTail(stderr.String()))
	}
	return nil
}
