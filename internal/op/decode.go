package op

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxDepth is the deepest nesting of arrays and objects a parameter
// object may have: Go's JSON decoder's own limit.
const MaxDepth = 10000

// MaxParams is the largest parameter object an operation accepts, in
// bytes (8 MiB: a changeset of the largest size with long bodies fits).
const MaxParams = 8 << 20

// DecodeStrict decodes one parameter object into v, the way every face
// does before calling an operation: the bytes must be valid UTF-8 and at
// most MaxParams long; the JSON must be one object, with no key given
// twice at any depth (the last one would otherwise win silently), no
// unknown field, no NUL character in a string, and nothing after it. A
// problem is a VALIDATION_ERROR naming where it is. The schema package's
// Decode adds the check against the operation's registered JSON Schema.
func DecodeStrict(raw []byte, v any) error {
	if err := CheckRaw(raw); err != nil {
		return err
	}
	return DecodeInto(raw, v)
}

// CheckRaw checks the bytes of a parameter object without decoding it:
// size, UTF-8, one object, no key twice, no NUL in a string.
func CheckRaw(raw []byte) error { return checkRaw(raw, true) }

// CheckDocument is CheckRaw for a JSON document of any shape (a list of
// curator actions, a plan): the same checks, whatever its top-level value.
func CheckDocument(raw []byte) error { return checkRaw(raw, false) }

func checkRaw(raw []byte, object bool) error {
	if len(raw) > MaxParams {
		return New(CodeValidation, map[string]any{"size": len(raw), "limit": MaxParams},
			"the parameters are %d bytes; the limit is %d", len(raw), MaxParams)
	}
	if !utf8.Valid(raw) {
		at := len(raw)
		for i := 0; i < len(raw); {
			r, n := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && n <= 1 {
				at = i
				break
			}
			i += n
		}
		return New(CodeValidation, map[string]any{"offset": at}, "the parameters are not valid UTF-8 (at byte %d)", at)
	}
	return scanJSON(raw, object)
}

// DecodeInto decodes a parameter object CheckRaw accepted into v,
// refusing unknown fields and data after the object.
func DecodeInto(raw []byte, v any) error {
	err := decodeInto(raw, v)
	if te, ok := errors.AsType[*Error](err); ok && te.wholeNumber {
		// JSON Schema's integer is any number without a fraction, so a
		// tool's input schema takes 1.0 and 1e2 where Go's decoder wants
		// digits: the object is decoded again with such numbers written
		// in digits.
		if digits, changed := wholeNumbersInDigits(raw); changed {
			return decodeInto(digits, v)
		}
	}
	return err
}

// wholeNumbersInDigits rewrites the numbers of raw that are whole but
// written with a fraction or an exponent (1.0, 1e2) in digits (1, 100),
// and says whether it changed any. raw is a checked object (CheckRaw):
// no key is given twice, so decoding it into maps loses nothing.
func wholeNumbersInDigits(raw []byte) ([]byte, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc any
	if dec.Decode(&doc) != nil {
		return raw, false
	}
	changed := false
	var walk func(v any) any
	walk = func(v any) any {
		switch t := v.(type) {
		case map[string]any:
			for k, x := range t {
				t[k] = walk(x)
			}
		case []any:
			for i, x := range t {
				t[i] = walk(x)
			}
		case json.Number:
			if !strings.ContainsAny(string(t), ".eE") {
				return t
			}
			f, _, err := big.ParseFloat(string(t), 10, 0, big.ToNearestEven)
			// Past 2^200 no Go integer holds it: left as written (and
			// never expanded, whatever its exponent).
			if err != nil || !f.IsInt() || f.MantExp(nil) > 200 {
				return t
			}
			i, _ := f.Int(nil)
			changed = true
			return json.Number(i.String())
		}
		return v
	}
	doc = walk(doc)
	if !changed {
		return raw, false
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(doc) != nil {
		return raw, false
	}
	return b.Bytes(), true
}

func decodeInto(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var field string
		if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok && te.Field != "" {
			field = te.Field
			e := New(CodeValidation, map[string]any{"field": field}, "%s: %s", field, TypeProblem(te))
			e.wholeNumber = jsonKind(te.Type) == "integer" && strings.HasPrefix(te.Value, "number ") && strings.ContainsAny(te.Value, ".eE")
			return e
		}
		if msg, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			field = strings.Trim(msg, `"`)
			return New(CodeValidation, map[string]any{"field": field}, "%s: is not a parameter of this operation", field)
		}
		return New(CodeValidation, nil, "the parameters are not a valid JSON object: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if dec.More() {
		return New(CodeValidation, nil, "the parameters hold data after the JSON object")
	}
	return nil
}

// foldKey is key with each letter in one case, by Unicode's simple case
// folding (the least rune of its orbit), as bytes.EqualFold compares: two
// keys Go's decode takes for one field give the same foldKey ("tagſ" and
// "TAGS" are tags).
func foldKey(key string) string {
	var b strings.Builder
	for _, r := range key {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		b.WriteRune(least)
	}
	return b.String()
}

// scanJSON walks raw's tokens and refuses, with the JSON pointer of the
// place, a key given twice in one object (in a parameter object, also in
// two cases: see foldKey) and a string holding U+0000. A
// value that is not an object is refused too.
func scanJSON(raw []byte, object bool) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	// Each frame keeps its own step from its parent (seg): the pointer
	// of a place is joined from the stack only when an error names it,
	// so that the check costs what the document weighs however deep it
	// nests (each level's whole pointer made the cost grow with the
	// square of the depth).
	type frame struct {
		object bool
		keys   map[string]bool
		folded map[string]string // parameter objects: key in one case → the key as given
		seg    string            // "/<key or index>" of this value in its parent; "" for the root
		index  int
		key    string // the key whose value comes next (objects)
		want   bool   // an object expects a key next
	}
	var stack []*frame
	// path is the pointer of the innermost open value.
	path := func() string {
		var b strings.Builder
		for _, f := range stack {
			b.WriteString(f.seg)
		}
		return b.String()
	}
	// step is the step from the innermost open value to its next member.
	step := func() string {
		if len(stack) == 0 {
			return ""
		}
		f := stack[len(stack)-1]
		if f.object {
			return "/" + escapePointer(f.key)
		}
		return "/" + strconv.Itoa(f.index)
	}
	pointer := func() string { return path() + step() }
	valueDone := func() {
		if len(stack) == 0 {
			return
		}
		f := stack[len(stack)-1]
		if f.object {
			f.want = true
		} else {
			f.index++
		}
	}
	first := true
	for {
		tok, err := dec.Token()
		if err == io.EOF && (first || len(stack) > 0) {
			return New(CodeValidation, nil, "the parameters are not a valid JSON object: unexpected end of input")
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return New(CodeValidation, map[string]any{"cause": err.Error()}, "the parameters are not a valid JSON object: %v", err)
		}
		if first {
			first = false
			if d, ok := tok.(json.Delim); object && (!ok || d != '{') {
				return New(CodeValidation, nil, "the parameters must be a JSON object")
			}
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				if len(stack) == MaxDepth {
					p := Cut(pointer())
					return New(CodeValidation, map[string]any{"field": p}, "%s: the parameters are nested deeper than %d", p, MaxDepth)
				}
				f := &frame{object: t == '{', seg: step(), want: t == '{'}
				if f.object {
					f.keys, f.folded = map[string]bool{}, map[string]string{}
				}
				stack = append(stack, f)
			default:
				stack = stack[:len(stack)-1]
				valueDone()
				if len(stack) == 0 && dec.More() {
					return New(CodeValidation, nil, "the parameters hold data after the JSON object")
				}
			}
		case string:
			if len(stack) == 0 { // a document that is one string
				if strings.ContainsRune(t, 0) {
					return New(CodeValidation, nil, "/: holds a NUL character")
				}
				if dec.More() {
					return New(CodeValidation, nil, "the document holds data after its value")
				}
				continue
			}
			f := stack[len(stack)-1]
			if f.object && f.want {
				f.key, f.want = t, false
				if f.keys[t] {
					p := path() + "/" + escapePointer(t)
					return New(CodeValidation, map[string]any{"field": p}, "%s: is given twice; give each key once", p)
				}
				f.keys[t] = true
				if object {
					// Go's decode takes a key for a field whatever its
					// case, and the last of two such keys would win.
					if k, ok := f.folded[foldKey(t)]; ok {
						p := path() + "/" + escapePointer(t)
						return New(CodeValidation, map[string]any{"field": p}, "%s: is given twice (as %s and %s); give each key once", p, k, t)
					}
					f.folded[foldKey(t)] = t
				}
				if strings.ContainsRune(t, 0) {
					p := path()
					return New(CodeValidation, map[string]any{"field": p}, "%s: a key holds a NUL character", orRoot(p))
				}
				continue
			}
			if strings.ContainsRune(t, 0) {
				p := pointer()
				return New(CodeValidation, map[string]any{"field": p}, "%s: holds a NUL character", orRoot(p))
			}
			valueDone()
		default:
			valueDone()
		}
	}
}

func escapePointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

func orRoot(p string) string {
	if p == "" {
		return "/"
	}
	return p
}

// TypeProblem says in JSON's words what is wrong with a value of the wrong
// type: what it is and what the field takes, never the Go type behind the
// field ("is number 1.5, not integer"). A Value that is already a phrase
// ("a string that is not a JSON array (…)", from a field's own decoder)
// is said as it is.
func TypeProblem(te *json.UnmarshalTypeError) string {
	if strings.HasPrefix(te.Value, "a ") {
		return "is " + te.Value
	}
	want := jsonKind(te.Type)
	if want == "integer" && strings.HasPrefix(te.Value, "number") {
		return fmt.Sprintf("is %s, not integer: write a whole number in digits, without a fraction or an exponent, of at most %s", Cut(te.Value), intMax(te.Type))
	}
	return fmt.Sprintf("is %s, not %s", Cut(te.Value), want)
}

// jsonKind names the JSON value a Go type decodes from.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "a value of this kind"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.String:
		return "string"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	}
	return "a value of this kind"
}

// intMax is the largest value of an integer type.
func intMax(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(uint64(math.MaxUint64)>>(64-t.Bits()), 10)
	}
	return strconv.FormatInt(int64(math.MaxInt64)>>(64-t.Bits()), 10)
}
