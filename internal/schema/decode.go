package schema

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/kk-project/kk/internal/op"
)

// Decode is the one decode-and-validate step of every face that takes a
// parameter object (kk --input, the MCP tools, the HTTP service): raw is
// checked strictly (op.CheckRaw: UTF-8, size, one object, no key twice,
// no NUL), then against the JSON Schema registered as name, then decoded
// into v (no unknown field, nothing after the object). Any problem is a VALIDATION_ERROR naming the JSON
// pointer of the first failing place.
func Decode(name string, raw []byte, v any) error {
	if err := op.CheckRaw(raw); err != nil {
		return err
	}
	if err := validationError(Validate(name, json.RawMessage(raw))); err != nil {
		return err
	}
	return op.DecodeInto(raw, v)
}

// validationError turns a schema failure into a VALIDATION_ERROR.
func validationError(err error) error {
	if err == nil {
		return nil
	}
	var ve *ValidationError
	if errors.As(err, &ve) {
		msg := "the parameters do not match the input schema"
		details := map[string]any{"failures": ve.Failures}
		if len(ve.Failures) > 0 {
			msg = ve.Failures[0].String()
			details["field"] = ve.Failures[0].Pointer
			if len(ve.Failures) > 1 {
				msg += fmt.Sprintf(" (and %d more)", len(ve.Failures)-1)
			}
		}
		return &op.Error{Code: op.CodeValidation, Message: msg, Details: details}
	}
	return &op.Error{Code: op.CodeValidation, Message: "the parameters are not valid JSON: " + err.Error()}
}
