// Package op holds what every operation behind a parameter object shares,
// whichever face calls it: the error codes of seed 002 with the typed
// error that carries them, and the {success, data | error} envelope the
// faces (kk --json, the MCP tools, the HTTP service) build from an
// operation's result. The core operations (graph, trace, search) return
// (result, error); they never build an envelope.
package op

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/store"
)

// Error codes.
const (
	// CodeValidation is bad input: a missing or malformed parameter, a field
	// out of bounds, an invalid glob.
	CodeValidation = "VALIDATION_ERROR"
	// CodeNotFound is a referenced atom, molecule, entity or parent that
	// does not exist.
	CodeNotFound = "NOT_FOUND"
	// CodeConflict is a version mismatch; details carry the current version.
	CodeConflict = "CONFLICT"
	// CodeInvariant is a request that would break a rule of the model: an
	// atom without paths, cross-project membership.
	CodeInvariant = "INVARIANT_VIOLATION"
	// CodeInternal is a failure that is not the caller's fault (an unreadable
	// tree, a full disk, a lock that could not be taken).
	CodeInternal = "INTERNAL_ERROR"
	// CodeConfig is a config.yaml that does not parse or holds a setting
	// kk refuses: nothing that reads the settings can run until a person
	// fixes the file, which the message and details (file, line) name.
	CodeConfig = "CONFIG_ERROR"
)

// Error is a failed operation: a code from the list above, a message
// naming the field or entity, and details a caller can act on.
type Error struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details,omitempty"`
	// wholeNumber marks a type error on an integer field given a number
	// with a fraction or an exponent, which DecodeInto retries in digits.
	wholeNumber bool
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// New is an error with the given code.
func New(code string, details map[string]any, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Details: details}
}

// Invalid is a VALIDATION_ERROR about one parameter.
func Invalid(field, format string, args ...any) *Error {
	return New(CodeValidation, map[string]any{"field": field}, "%s: %s", field, fmt.Sprintf(format, args...))
}

// NotFound is a NOT_FOUND error about an entity of a kind. An id too long
// to be one is cut in the message and the details (see Quote).
func NotFound(kind, id string) *Error {
	return New(CodeNotFound, map[string]any{"entityType": kind, "id": Cut(id)}, "no %s with id %s", kind, Quote(id))
}

// MaxQuoted is how many bytes of a value a message quotes: an id, a query
// or a path sent back in an error is cut there, so that a caller sending
// megabytes does not get them back (into a model's context) twice.
const MaxQuoted = 200

// Cut is s, or its first MaxQuoted bytes (whole characters) followed by
// "…" and how many bytes were left out.
func Cut(s string) string {
	if len(s) <= MaxQuoted {
		return s
	}
	n := MaxQuoted
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return fmt.Sprintf("%s… (%d more bytes)", s[:n], len(s)-n)
}

// Quote is s quoted as Go's %q does, cut by Cut when it is long: the
// quotes close after the cut, and the count follows them.
func Quote(s string) string {
	if len(s) <= MaxQuoted {
		return fmt.Sprintf("%q", s)
	}
	n := MaxQuoted
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return fmt.Sprintf("%q… (%d more bytes)", s[:n], len(s)-n)
}

// Conflict is a CONFLICT: the entity is at current, not given. The
// details carry the current version, so a caller can re-read and retry at
// once.
func Conflict(kind, id string, given, current int64) *Error {
	return New(CodeConflict, map[string]any{"entityType": kind, "id": id, "version": given, "currentVersion": current},
		"%s %s is at version %d, not %d; re-read it and retry with version %d", kind, id, current, given, current)
}

// Invariant is an INVARIANT_VIOLATION about one parameter.
func Invariant(field, format string, args ...any) *Error {
	return New(CodeInvariant, map[string]any{"field": field}, "%s: %s", field, fmt.Sprintf(format, args...))
}

// ErrorOf classifies any error: an *Error as it is, a version conflict of
// the store transaction as CONFLICT, anything else as INTERNAL_ERROR.
func ErrorOf(err error) *Error {
	if e, ok := errors.AsType[*Error](err); ok {
		return e
	}
	if ce, ok := errors.AsType[*store.ConfigError](err); ok {
		details := map[string]any{"file": ce.File}
		if ce.Line > 0 {
			details["line"] = ce.Line
		}
		return &Error{Code: CodeConfig, Message: err.Error(), Details: details}
	}
	if _, ok := errors.AsType[*store.TreeError](err); ok {
		// Leaves of the tree that cannot be read: not the caller's
		// fault; the message names every file and problem.
		return &Error{Code: CodeInternal, Message: err.Error()}
	}
	if ne, ok := errors.AsType[*node.Error](err); ok && ne.Field != "" {
		// A leaf a writer staged failed its checks: the caller's input.
		msg := fmt.Sprintf("%s: %s", ne.Field, ne.Msg)
		if len(ne.More) > 0 {
			msg = ne.Detail()
		}
		return New(CodeValidation, map[string]any{"field": ne.Field, "path": ne.Path}, "%s", msg)
	}
	if ce, ok := errors.AsType[ConflictError](err); ok {
		typ, id, given, current := ce.Conflict()
		e := Conflict(KindOf(typ), id, given, current)
		if changes, missed := ce.Missed(); len(missed) > 0 {
			e.Details["changes"] = changes
			e.Message += "; changes you did not see: " + strings.Join(missed, "; ")
		}
		return e
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &Error{Code: CodeInternal, Message: "the operation was interrupted: " + err.Error()}
	}
	return &Error{Code: CodeInternal, Message: err.Error()}
}

// ConflictError is an optimistic write made at a version that is not the
// leaf's current one (the transaction's *txn.ConflictError): it becomes a
// CONFLICT.
type ConflictError interface {
	error
	// Conflict names the leaf's type and id, the version given and the
	// current one.
	Conflict() (typ, id string, given, current int64)
	// Missed returns the writes the caller did not see, as details, and
	// the newest of them in a few words each ("v4 (title) by kk_upsert").
	Missed() (changes any, summary []string)
}

// KindOf names the kind of entity a leaf type is in error details: the
// graph's atom and molecule, or the type itself.
func KindOf(typ string) string {
	switch typ {
	case "molecule":
		return "molecule"
	case "map":
		return "atom"
	}
	return typ
}

// Envelope is the answer of an operation as faces print or send it:
// {"success":true,"data":…} or {"success":false,"error":{code,message,details}}.
type Envelope struct {
	Success bool   `json:"success"`
	Data    any    `json:"data,omitempty"`
	Error   *Error `json:"error,omitempty"`
}

// Wrap builds the envelope of an operation's result.
func Wrap(data any, err error) Envelope {
	if err != nil {
		return Envelope{Error: ErrorOf(err)}
	}
	return Envelope{Success: true, Data: data}
}
