package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Limits on what the client may send (docs/limits.md, section MCP).
const (
	// MaxFrameBytes caps one inbound message: one line of input, its
	// newline excluded. A longer line is refused and skipped without being
	// held in memory.
	MaxFrameBytes = 16 << 20
	// MaxDepth caps the nesting of objects and arrays in a message; it is
	// the go-sdk's own limit on what it decodes.
	MaxDepth = 1000
	// idSearchBytes is how much of an oversize line is searched for the
	// request's id, so that the refusal can name the request it answers.
	idSearchBytes = 64 << 10
	// maxExactID bounds numeric ids: the SDK reads them as float64, and
	// beyond 2^53 it would answer under a different id.
	maxExactID = 1 << 53
)

// frameReader splits newline-delimited input into frames of at most max
// bytes. It never holds more than max bytes of one line (plus its bufio
// buffer): the rest of an oversize line is read and dropped.
type frameReader struct {
	r   *bufio.Reader
	max int
}

func newFrameReader(r io.Reader, max int) *frameReader {
	return &frameReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// oversizeError reports a line longer than the frame cap. Head is its
// beginning (at most idSearchBytes), Size its full length.
type oversizeError struct {
	Size  int64
	Limit int
	Head  []byte
}

func (e *oversizeError) Error() string {
	return fmt.Sprintf("the message is %d bytes, over the %s limit", e.Size, sizeText(e.Limit))
}

// next returns the next line without its newline. A last line without a
// newline is a frame too. It returns an *oversizeError for a line over the
// cap (the reader is then at the start of the next line), io.EOF at the
// end of input, and any other read error as it comes.
func (fr *frameReader) next() ([]byte, error) {
	var frame []byte
	var head []byte // the beginning of an oversize line, once frame is dropped
	var size int64
	for {
		chunk, err := fr.r.ReadSlice('\n')
		end := len(chunk) > 0 && chunk[len(chunk)-1] == '\n'
		if end {
			chunk = chunk[:len(chunk)-1]
		}
		size += int64(len(chunk))
		switch {
		case head != nil:
			// Discarding the rest of an oversize line.
		case size > int64(fr.max):
			head = append(frame, chunk...)
			head = append([]byte(nil), head[:min(len(head), idSearchBytes)]...)
			frame = nil
		default:
			frame = append(frame, chunk...)
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil && !errors.Is(err, io.EOF):
			return nil, err
		case head != nil:
			return nil, &oversizeError{Size: size, Limit: fr.max, Head: head}
		case end || len(frame) > 0:
			if frame == nil {
				frame = []byte{}
			}
			return frame, nil
		default:
			return nil, err // io.EOF
		}
	}
}

// refusal is the error answer to a frame that is not a valid message.
type refusal struct {
	// ID is the raw id of the refused request, nil when it can't be read
	// (the answer then carries "id": null).
	ID      json.RawMessage
	Code    int64
	Message string
	// Quiet refusals are error responses from the client itself: they are
	// logged, never answered.
	Quiet bool
	// Batch marks the refusal of a batch that is not empty: a session at
	// a protocol version that has batches takes it (lineConn.batch).
	Batch bool
}

// errorReply is a JSON-RPC error response as the transport writes it; the
// SDK's encoder drops a null id, which JSON-RPC requires here.
type errorReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   jsonrpc.Error   `json:"error"`
}

func (r *refusal) reply() []byte {
	e := errorReply{JSONRPC: "2.0", ID: r.ID, Error: jsonrpc.Error{Code: r.Code, Message: r.Message}}
	b, err := json.Marshal(e)
	if err != nil {
		// Only an id that is not JSON can fail, and ids come out of valid
		// frames; answer with a null id all the same.
		e.ID = nil
		b, _ = json.Marshal(e)
	}
	return append(b, '\n')
}

func parseError(format string, args ...any) *refusal {
	return &refusal{Code: jsonrpc.CodeParseError, Message: "parse error: " + fmt.Sprintf(format, args...)}
}

func invalid(id json.RawMessage, format string, args ...any) *refusal {
	return &refusal{ID: id, Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: " + fmt.Sprintf(format, args...)}
}

// oversize is the refusal of a line over the cap, naming the request when
// its id comes early in the line (as clients write it).
func oversize(e *oversizeError) *refusal {
	return invalid(idFromHead(e.Head), "%v; it was skipped", e)
}

// decodeFrame reads one frame as a JSON-RPC 2.0 message for an MCP server.
// It returns the message, or the refusal to answer with, or neither for a
// blank line. It is stricter than JSON-RPC where MCP is: ids are never
// null, and batches are refused (MCP removed them in 2025-06-18; a
// session at an earlier version reads them with lineConn.batch).
func decodeFrame(frame []byte) (jsonrpc.Message, *refusal) {
	frame = bytes.Trim(frame, " \t\r\n")
	if len(frame) == 0 {
		return nil, nil
	}
	if !utf8.Valid(frame) {
		return nil, parseError("the message is not valid UTF-8")
	}
	if !json.Valid(frame) {
		var raw json.RawMessage
		err := json.Unmarshal(frame, &raw)
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, parseError("%v at byte %d", se, se.Offset)
		}
		return nil, parseError("the message is not JSON")
	}
	if depth(frame) > MaxDepth {
		return nil, parseError("the message nests deeper than %d levels", MaxDepth)
	}
	switch frame[0] {
	case '{':
	case '[':
		if string(bytes.Trim(frame[1:len(frame)-1], " \t\r\n")) == "" {
			return nil, invalid(nil, "an empty batch")
		}
		r := invalid(nil, "batches are not supported (MCP removed them in protocol version 2025-06-18); send one message per line")
		r.Batch = true
		return nil, r
	default:
		return nil, invalid(nil, "a message is a JSON object, not %s", kind(frame))
	}
	m, dup := members(frame)
	rawID, hasID := m["id"]
	id, idErr := readID(rawID)
	var replyID json.RawMessage
	if hasID && idErr == nil && id.IsValid() && dup != "id" {
		replyID = rawID
	}
	_, hasMethod := m["method"]
	rawErr, hasErr := m["error"]
	rawResult, hasResult := m["result"]
	if !hasMethod && hasErr {
		// An error response from the client. It is never answered, so that
		// two peers can't trade error answers forever.
		var werr jsonrpc.Error
		switch {
		case string(m["jsonrpc"]) != `"2.0"`, dup != "", hasResult, idErr != nil, !wellFormedError(rawErr, &werr):
			return nil, &refusal{ID: replyID, Code: jsonrpc.CodeInvalidRequest, Message: "ignored a malformed error response from the client", Quiet: true}
		case !id.IsValid():
			return nil, &refusal{Code: werr.Code, Message: "the client reported an error: " + werr.Message, Quiet: true}
		}
		return &jsonrpc.Response{ID: id, Error: &werr}, nil
	}
	switch {
	case string(m["jsonrpc"]) != `"2.0"`:
		return nil, invalid(replyID, `"jsonrpc" must be "2.0"`)
	case dup != "":
		return nil, invalid(replyID, "the member %q appears twice", dup)
	case idErr != nil:
		return nil, invalid(nil, "%v", idErr)
	}
	if !hasMethod {
		switch {
		case !hasResult:
			return nil, invalid(replyID, `no "method": a request names its method, a response carries "result" or "error"`)
		case !id.IsValid():
			return nil, invalid(nil, "a response without an id")
		}
		return &jsonrpc.Response{ID: id, Result: rawResult}, nil
	}
	var method string
	if err := json.Unmarshal(m["method"], &method); err != nil {
		return nil, invalid(replyID, `"method" must be a string`)
	}
	if hasID && !id.IsValid() {
		return nil, invalid(nil, "the id is null; MCP requests carry a string or integer id, notifications none")
	}
	if hasID && strings.HasPrefix(method, "notifications/") {
		// Refused here, before the go-sdk: it answers such a message as an
		// invalid request but acts on it first (a notifications/cancelled
		// with an id still cancelled the request it named).
		return nil, invalid(replyID, "%q is a notification, which carries no id", method)
	}
	if hasResult || hasErr {
		return nil, invalid(replyID, `a request carries no "result" or "error"`)
	}
	params := m["params"]
	switch {
	case len(params) == 0 || string(params) == "null":
		params = nil
	case params[0] != '{' && params[0] != '[':
		return nil, invalid(replyID, `"params" must be an object or an array`)
	}
	if id.IsValid() {
		if problem := checkParams(method, params); problem != "" {
			return nil, &refusal{ID: replyID, Code: jsonrpc.CodeInvalidParams, Message: "invalid params: " + problem}
		}
	}
	return &jsonrpc.Request{ID: id, Method: method, Params: params}, nil
}

// paramMember is a member of a request's params that MCP gives a type:
// kind is "a string" or "an object" (as kind names JSON values).
type paramMember struct {
	name, kind string
	required   bool
}

// paramMembers are the params members of the requests kk serves whose
// type the go-sdk's decoding reports by Go type rather than by name (or
// not at all: an empty tool name is an unknown tool).
var paramMembers = map[string][]paramMember{
	"initialize": {{"protocolVersion", "a string", false}, {"capabilities", "an object", false},
		{"clientInfo", "an object", false}},
	"tools/call":               {{"name", "a string", true}, {"_meta", "an object", false}},
	"prompts/get":              {{"name", "a string", true}, {"arguments", "an object", false}},
	"resources/read":           {{"uri", "a string", true}},
	"logging/setLevel":         {{"level", "a string", true}},
	"tools/list":               {{"cursor", "a string", false}},
	"resources/list":           {{"cursor", "a string", false}},
	"resources/templates/list": {{"cursor", "a string", false}},
	"prompts/list":             {{"cursor", "a string", false}},
}

// logLevels are MCP's (RFC 5424's) levels, what logging/setLevel takes.
var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// checkParams returns what is wrong with the params of a request for
// method, naming the member, or "".
func checkParams(method string, params json.RawMessage) string {
	members, ok := paramMembers[method]
	if !ok {
		return ""
	}
	required := slices.IndexFunc(members, func(m paramMember) bool { return m.required })
	if len(params) == 0 {
		if required < 0 {
			return ""
		}
		return fmt.Sprintf("%s needs params, an object with %q", method, "params."+members[required].name)
	}
	if params[0] != '{' {
		return fmt.Sprintf("params of %s must be an object", method)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(params, &m); err != nil {
		return fmt.Sprintf("params of %s: %v", method, err)
	}
	for _, want := range members {
		raw, given := m[want.name]
		if !given || string(raw) == "null" {
			if want.required {
				return fmt.Sprintf("params.%s is required by %s", want.name, method)
			}
			continue
		}
		if got := kind(raw); got != want.kind {
			return fmt.Sprintf("params.%s must be %s, not %s", want.name, want.kind, got)
		}
		if want.kind != "a string" {
			continue
		}
		var v string
		_ = json.Unmarshal(raw, &v) // valid JSON, a string
		if want.required && v == "" {
			return fmt.Sprintf("params.%s is empty", want.name)
		}
		if method == "logging/setLevel" && !slices.Contains(logLevels, v) {
			return fmt.Sprintf("params.level %q is not a log level; use one of %s", v, strings.Join(logLevels, ", "))
		}
	}
	return ""
}

func wellFormedError(raw json.RawMessage, werr *jsonrpc.Error) bool {
	var e struct {
		Code    *json.Number    `json:"code"`
		Message *string         `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if raw[0] != '{' || json.Unmarshal(raw, &e) != nil || e.Code == nil || e.Message == nil {
		return false
	}
	code, err := e.Code.Int64()
	if err != nil {
		return false
	}
	*werr = jsonrpc.Error{Code: code, Message: *e.Message, Data: e.Data}
	return true
}

// members returns the top-level members of a valid JSON object, and the
// first key that appears twice ("" if none).
func members(obj []byte) (map[string]json.RawMessage, string) {
	m := map[string]json.RawMessage{}
	dup := ""
	dec := json.NewDecoder(bytes.NewReader(obj))
	if _, err := dec.Token(); err != nil { // {
		return m, dup
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return m, dup
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return m, dup
		}
		if _, seen := m[key]; seen && dup == "" {
			dup = key
		}
		m[key] = v
	}
	return m, dup
}

// readID reads a request id: a string, or an integer written in digits
// (no fraction or exponent) of at most 2^53 in magnitude. A missing id and null both give the zero ID.
func readID(raw json.RawMessage) (jsonrpc.ID, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return jsonrpc.ID{}, nil
	}
	bad := fmt.Errorf("the id must be a string or an integer, not %s", kind(raw))
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return jsonrpc.ID{}, bad
		}
		return jsonrpc.MakeID(s)
	case '{', '[', 't', 'f':
		return jsonrpc.ID{}, bad
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || n > maxExactID || n < -maxExactID {
		return jsonrpc.ID{}, fmt.Errorf("the id %s is not an integer of at most 2^53 written in digits", raw)
	}
	return jsonrpc.MakeID(float64(n))
}

// idFromHead finds a usable top-level "id" in the beginning of a message,
// or returns nil.
func idFromHead(head []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(head))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		key, ok := tok.(string)
		if !ok {
			return nil
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil
		}
		if key == "id" {
			if id, err := readID(v); err == nil && id.IsValid() {
				return v
			}
			return nil
		}
	}
}

// depth returns how deeply the objects and arrays of a valid JSON text
// nest.
func depth(data []byte) int {
	d, most := 0, 0
	inString, escaped := false, false
	for _, b := range data {
		switch {
		case inString && escaped:
			escaped = false
		case inString && b == '\\':
			escaped = true
		case inString:
			inString = b != '"'
		case b == '"':
			inString = true
		case b == '{' || b == '[':
			d++
			most = max(most, d)
		case b == '}' || b == ']':
			d--
		}
	}
	return most
}

// kind names the JSON type of a valid JSON value, for messages.
func kind(v []byte) string {
	switch v[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// sizeText writes a byte count the way docs/limits.md does.
func sizeText(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
