package mcpserver

import (
	"context"
	"log/slog"
)

// sdkClientMistakes are the messages the go-sdk (v1.8.0) logs at level
// ERROR about what the client got wrong, each mapped to the message kk's
// transport logs for its own refusals: "refused a message" when the
// client gets an error answer, "ignored a message" for a notification,
// which gets none. TestClientMistakesAreNotErrors sends each mistake of
// the 2025 protocol versions, so a new SDK that words one differently
// fails it.
var sdkClientMistakes = map[string]string{
	"method invalid during initialization": "refused a message",
	"duplicate initialize request":         "refused a message",
	"method removed in the new protocol":   "refused a message",
	"initialized before initialize":        "ignored a message",
	"duplicate initialized notification":   "ignored a message",
}

// clientMistakes is the handler of the go-sdk's logger. The SDK logs a
// client's mistakes about the session at level ERROR, which a harness
// shows as kk failing; they are the client's errors, answered already, and
// are logged as the refusals of kk's transport are: a warning, the SDK's
// message as the reason. Every other record (the SDK's or kk's own
// failures) passes as it is.
type clientMistakes struct{ slog.Handler }

func (h clientMistakes) Handle(ctx context.Context, r slog.Record) error {
	msg, ok := sdkClientMistakes[r.Message]
	if !ok || r.Level < slog.LevelError {
		return h.Handler.Handle(ctx, r)
	}
	if !h.Handler.Enabled(ctx, slog.LevelWarn) {
		return nil
	}
	out := slog.NewRecord(r.Time, slog.LevelWarn, msg, r.PC)
	out.AddAttrs(slog.String("reason", r.Message))
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(a)
		return true
	})
	return h.Handler.Handle(ctx, out)
}

func (h clientMistakes) WithAttrs(attrs []slog.Attr) slog.Handler {
	return clientMistakes{h.Handler.WithAttrs(attrs)}
}

func (h clientMistakes) WithGroup(name string) slog.Handler {
	return clientMistakes{h.Handler.WithGroup(name)}
}
