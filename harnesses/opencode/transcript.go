package opencode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/kk-project/kk/internal/harness"
)

// export is the document `opencode export <session>` prints
// (harnesses.md §4.3): {info, messages: [{info: {role, time: {created}},
// parts: [...]}]}.
type export struct {
	Messages *[]json.RawMessage `json:"messages"`
}

type message struct {
	Info struct {
		Role string `json:"role"`
		Time struct {
			Created float64 `json:"created"`
		} `json:"time"`
	} `json:"info"`
	Parts []json.RawMessage `json:"parts"`
}

// part is one part of a message: text (synthetic when OpenCode made it up,
// such as a file's content attached to a prompt), or a tool call.
type part struct {
	Type      string  `json:"type"`
	Text      *string `json:"text"`
	Synthetic bool    `json:"synthetic"`
	Ignored   bool    `json:"ignored"`
	Tool      string  `json:"tool"`
	State     struct {
		Input json.RawMessage `json:"input"`
	} `json:"state"`
}

// ParseTranscript implements harness.Adapter: it reads an `opencode
// export` document. Messages are taken in the order they were created;
// a message's text is its non-synthetic text parts. Anything printed
// before the document's opening brace is skipped.
func (*Adapter) ParseTranscript(r io.Reader) (harness.Transcript, error) {
	var t harness.Transcript
	data, err := io.ReadAll(r)
	if err != nil {
		return t, fmt.Errorf("reading the OpenCode export: %w", err)
	}
	if i := bytes.IndexByte(data, '{'); i > 0 {
		data = data[i:]
	}
	var doc export
	if err := json.Unmarshal(data, &doc); err != nil {
		return t, fmt.Errorf("not an OpenCode export: %w", err)
	}
	if doc.Messages == nil {
		return t, errors.New("not an OpenCode export: it has no \"messages\" list")
	}
	var msgs []message
	for _, raw := range *doc.Messages {
		var m message
		if json.Unmarshal(raw, &m) == nil {
			msgs = append(msgs, m)
		}
	}
	sort.SliceStable(msgs, func(i, j int) bool { return msgs[i].Info.Time.Created < msgs[j].Info.Time.Created })
	for _, m := range msgs {
		var text []string
		for _, raw := range m.Parts {
			var p part
			if json.Unmarshal(raw, &p) != nil {
				continue
			}
			switch p.Type {
			case "text":
				if p.Text != nil && !p.Synthetic && !p.Ignored && strings.TrimSpace(*p.Text) != "" {
					text = append(text, *p.Text)
				}
			case "tool":
				t.Reads = append(t.Reads, toolReads(p)...)
			}
		}
		body := strings.TrimSpace(strings.Join(text, "\n"))
		if body == "" {
			continue
		}
		switch m.Info.Role {
		case "user":
			t.Turns = append(t.Turns, harness.Turn{Role: harness.User, Text: body})
		case "assistant":
			t.Turns = append(t.Turns, harness.Turn{Role: harness.Agent, Text: body})
		}
	}
	return t, nil
}

// toolReads returns the files a tool call read, for the usage ledger
// (kenkeep-v1.17.md §16): the file of the read tool, and the .md paths
// named in a bash command.
func toolReads(p part) []harness.Read {
	var input map[string]any
	_ = json.Unmarshal(p.State.Input, &input) // an input that is not an object names no file
	switch p.Tool {
	case "read":
		if f := harness.FirstString(input, "filePath", "path", "file_path"); f != "" {
			return []harness.Read{{Path: f, Tool: p.Tool}}
		}
	case "bash", "shell":
		var out []harness.Read
		for _, f := range harness.MarkdownPaths(harness.FirstString(input, "command", "cmd")) {
			out = append(out, harness.Read{Path: f, Tool: p.Tool})
		}
		return out
	}
	return nil
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
			_ = os.Remove(path)
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
