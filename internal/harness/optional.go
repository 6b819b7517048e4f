package harness

import "context"

// ContextWriter is implemented by adapters whose harness has no channel
// for context in a hook's output (OpenCode): session-start writes the
// context into a file the harness reads instead.
type ContextWriter interface {
	WriteContext(root, text string) error
}

// TranscriptExporter is implemented by adapters whose hook payloads carry
// no transcript path (OpenCode): capture asks the harness to export the
// session's transcript to path and parses that.
type TranscriptExporter interface {
	ExportTranscript(ctx context.Context, in HookInput, path string) error
}

// TranscriptSettler is implemented by adapters whose Spec.Capture is
// CaptureSettled: the harness writes a turn to its transcript only after
// its hooks have run, so a detached capture waits until Settled reports
// that the transcript at path ends a turn (or the session).
type TranscriptSettler interface {
	Settled(path string) (bool, error)
}
