package graph

import (
	"errors"
	"fmt"

	"github.com/kk-project/kk/internal/txn"
)

// Error codes of the graph operations (seed 002, "Error codes").
const (
	// CodeValidation is bad input: a missing or malformed parameter, a field
	// out of bounds, an invalid glob.
	CodeValidation = "VALIDATION_ERROR"
	// CodeNotFound is a referenced atom, molecule or parent that does not exist.
	CodeNotFound = "NOT_FOUND"
	// CodeConflict is a version mismatch; details carry the current version.
	CodeConflict = "CONFLICT"
	// CodeInvariant is a request that would break a rule of the model: an
	// atom without paths, cross-project membership.
	CodeInvariant = "INVARIANT_VIOLATION"
	// CodeInternal is a failure that is not the caller's fault (an unreadable
	// tree, a full disk, a lock that could not be taken).
	CodeInternal = "INTERNAL_ERROR"
)

// Error is a failed graph operation: a code from the list above, a message
// naming the field or entity, and details a caller can act on.
type Error struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details,omitempty"`
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

func newError(code string, details map[string]any, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Details: details}
}

// invalid is a VALIDATION_ERROR about one parameter.
func invalid(field, format string, args ...any) *Error {
	return newError(CodeValidation, map[string]any{"field": field}, "%s: %s", field, fmt.Sprintf(format, args...))
}

func notFound(kind, id string) *Error {
	return newError(CodeNotFound, map[string]any{"entityType": kind, "id": id}, "no %s with id %q", kind, id)
}

func conflict(kind, id string, given, current int64) *Error {
	return newError(CodeConflict, map[string]any{"entityType": kind, "id": id, "version": given, "currentVersion": current},
		"%s %s is at version %d, not %d; re-read it and retry", kind, id, current, given)
}

func invariant(field, format string, args ...any) *Error {
	return newError(CodeInvariant, map[string]any{"field": field}, "%s: %s", field, fmt.Sprintf(format, args...))
}

// asError turns any error into an *Error; errors that are not already one
// are internal.
func asError(err error) *Error {
	var ge *Error
	if errors.As(err, &ge) {
		return ge
	}
	if ce, ok := errors.AsType[*txn.ConflictError](err); ok {
		kind := ce.Type
		switch ce.Type {
		case TypeMolecule:
			kind = KindMolecule
		case TypeAtom:
			kind = KindAtom
		}
		return conflict(kind, ce.ID, ce.Given, ce.Current)
	}
	return &Error{Code: CodeInternal, Message: err.Error()}
}

// Response is the envelope every operation returns:
// {"success":true,"data":…} or {"success":false,"error":{code,message,details}}.
type Response struct {
	Success bool   `json:"success"`
	Data    any    `json:"data,omitempty"`
	Error   *Error `json:"error,omitempty"`
}

func ok(data any) Response { return Response{Success: true, Data: data} }

func fail(err error) Response { return Response{Success: false, Error: asError(err)} }
