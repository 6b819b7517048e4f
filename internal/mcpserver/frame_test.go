package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestDecodeFrameRefusals: every malformed line gets the JSON-RPC error
// 2.0 prescribes, with the request's id when it can be read and null when
// it can't.
func TestDecodeFrameRefusals(t *testing.T) {
	deep := strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)
	deepObj := `{"jsonrpc":"2.0","id":4,"method":"ping","params":` + strings.Repeat(`{"a":`, MaxDepth) + "1" + strings.Repeat("}", MaxDepth+1)
	for _, c := range []struct {
		name, in string
		code     int64
		id       string // the answer's id, as JSON
		quiet    bool
	}{
		{"not json", "not json", -32700, "null", false},
		{"open brace", "{", -32700, "null", false},
		{"NUL", "\x00", -32700, "null", false},
		{"NUL in a string", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\x00b\"}", -32700, "null", false},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}", -32700, "null", false},
		{"trailing data", `{"jsonrpc":"2.0","id":1,"method":"ping"} {}`, -32700, "null", false},
		{"deep arrays", deep, -32700, "null", false},
		{"deep params", deepObj, -32700, "null", false},
		{"very deep", strings.Repeat("[", 20000), -32700, "null", false},
		{"empty object", "{}", -32600, "null", false},
		{"empty batch", "[]", -32600, "null", false},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, -32600, "null", false},
		{"string", `"ping"`, -32600, "null", false},
		{"number", `7`, -32600, "null", false},
		{"null", `null`, -32600, "null", false},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":3,"method":"ping"}`, -32600, "3", false},
		{"jsonrpc number", `{"jsonrpc":2.0,"id":"a","method":"ping"}`, -32600, `"a"`, false},
		{"no jsonrpc", `{"id":3,"method":"ping"}`, -32600, "3", false},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, -32600, "null", false},
		{"array id", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, -32600, "null", false},
		{"bool id", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, -32600, "null", false},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, -32600, "null", false},
		{"exponent id", `{"jsonrpc":"2.0","id":1e2,"method":"ping"}`, -32600, "null", false},
		{"id over 2^53", `{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, -32600, "null", false},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, -32600, "null", false},
		{"id but no method", `{"jsonrpc":"2.0","id":5}`, -32600, "5", false},
		{"string id but no method", `{"jsonrpc":"2.0","id":"x"}`, -32600, `"x"`, false},
		{"params", `{"jsonrpc":"2.0","id":6,"method":"ping","params":"x"}`, -32600, "6", false},
		{"method number", `{"jsonrpc":"2.0","id":6,"method":6}`, -32600, "6", false},
		{"request with result", `{"jsonrpc":"2.0","id":6,"method":"ping","result":{}}`, -32600, "6", false},
		{"duplicate method", `{"jsonrpc":"2.0","id":7,"method":"ping","method":"tools/list"}`, -32600, "7", false},
		{"duplicate id", `{"jsonrpc":"2.0","id":7,"method":"ping","id":8}`, -32600, "null", false},
		{"response without id", `{"jsonrpc":"2.0","result":{}}`, -32600, "null", false},
		{"notification with an id", `{"jsonrpc":"2.0","id":9,"method":"notifications/cancelled","params":{"requestId":2}}`, -32600, "9", false},
		{"initialized with an id", `{"jsonrpc":"2.0","id":"n","method":"notifications/initialized"}`, -32600, `"n"`, false},
		{"client error without id", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}`, -32700, "null", true},
		{"malformed client error", `{"jsonrpc":"2.0","id":3,"error":"bad"}`, -32600, "3", true},
		{"client error and result", `{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"m"},"result":{}}`, -32600, "3", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			msg, ref := decodeFrame([]byte(c.in))
			if msg != nil || ref == nil {
				t.Fatalf("decoded %#v, want a refusal", msg)
			}
			if ref.Code != c.code || ref.Quiet != c.quiet {
				t.Fatalf("refusal %d quiet=%v (%s), want %d quiet=%v", ref.Code, ref.Quiet, ref.Message, c.code, c.quiet)
			}
			var reply struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   struct {
					Code    int64  `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			line := ref.reply()
			if bytes.Count(line, []byte("\n")) != 1 || line[len(line)-1] != '\n' {
				t.Fatalf("the answer is not one line: %q", line)
			}
			if err := json.Unmarshal(line, &reply); err != nil {
				t.Fatal(err)
			}
			if reply.JSONRPC != "2.0" || string(reply.ID) != c.id || reply.Error.Code != c.code || reply.Error.Message == "" {
				t.Fatalf("answer %s, want code %d and id %s", line, c.code, c.id)
			}
		})
	}
}

// TestDecodeFrameMessages: valid messages reach the SDK as they were sent.
func TestDecodeFrameMessages(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     jsonrpc.Message // nil for a blank line
	}{
		{"call", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, &jsonrpc.Request{ID: mustID(t, 1.0), Method: "tools/list"}},
		{"string id, params", `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x"}}`,
			&jsonrpc.Request{ID: mustID(t, "a"), Method: "tools/call", Params: json.RawMessage(`{"name":"x"}`)}},
		{"null params", `{"jsonrpc":"2.0","id":-3,"method":"ping","params":null}`, &jsonrpc.Request{ID: mustID(t, -3.0), Method: "ping"}},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, &jsonrpc.Request{Method: "notifications/initialized"}},
		{"escaped key", `{"jsonrpc":"2.0","id":2,"\u006dethod":"ping"}`, &jsonrpc.Request{ID: mustID(t, 2.0), Method: "ping"}},
		{"largest id", `{"jsonrpc":"2.0","id":9007199254740992,"method":"ping"}`, &jsonrpc.Request{ID: mustID(t, 9007199254740992.0), Method: "ping"}},
		{"unknown member", `{"jsonrpc":"2.0","id":1,"method":"ping","x":[]}`, &jsonrpc.Request{ID: mustID(t, 1.0), Method: "ping"}},
		{"CRLF and spaces", " {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\t\r", &jsonrpc.Request{ID: mustID(t, 1.0), Method: "ping"}},
		{"result", `{"jsonrpc":"2.0","id":9,"result":{"roots":[]}}`, &jsonrpc.Response{ID: mustID(t, 9.0), Result: json.RawMessage(`{"roots":[]}`)}},
		{"client error", `{"jsonrpc":"2.0","id":9,"error":{"code":-1,"message":"no"}}`, &jsonrpc.Response{ID: mustID(t, 9.0), Error: &jsonrpc.Error{Code: -1, Message: "no"}}},
		{"blank", " \r", nil},
		{"empty", "", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			msg, ref := decodeFrame([]byte(c.in))
			if ref != nil {
				t.Fatalf("refused: %d %s", ref.Code, ref.Message)
			}
			if c.want == nil {
				if msg != nil {
					t.Fatalf("decoded %#v from a blank line", msg)
				}
				return
			}
			got, err := jsonrpc.EncodeMessage(msg)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := jsonrpc.EncodeMessage(c.want)
			if !bytes.Equal(got, want) {
				t.Fatalf("decoded %s, want %s", got, want)
			}
		})
	}
}

func mustID(t *testing.T, v any) jsonrpc.ID {
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestFrameReader: lines come out without their newline, a last line
// without one counts, and a line over the cap is skipped whole and
// reported with its size and beginning.
func TestFrameReader(t *testing.T) {
	long := `{"jsonrpc":"2.0","id":42,"method":"x","params":"` + strings.Repeat("a", 100) + `"}`
	in := "a\n\nb\r\n" + long + "\n" + strings.Repeat("z", 5000) + "\nc\nlast"
	fr := newFrameReader(strings.NewReader(in), 64)
	var got []string
	var big []*oversizeError
	for {
		f, err := fr.next()
		var o *oversizeError
		if errors.As(err, &o) {
			big = append(big, o)
			got = append(got, "<oversize>")
			continue
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(f))
	}
	if want := []string{"a", "", "b\r", "<oversize>", "<oversize>", "c", "last"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("frames %q, want %q", got, want)
	}
	if big[0].Size != int64(len(long)) || big[1].Size != 5000 || string(big[1].Head) != strings.Repeat("z", 5000) {
		t.Fatalf("oversize reports: %d %d", big[0].Size, big[1].Size)
	}
	// The refusal names the request whose id comes early in the line.
	if r := oversize(big[0]); string(r.ID) != "42" || r.Code != jsonrpc.CodeInvalidRequest {
		t.Fatalf("refusal of the long request: id %s code %d", r.ID, r.Code)
	}
	if r := oversize(big[1]); r.ID != nil {
		t.Fatalf("refusal of the long junk: id %s", r.ID)
	}
}

// TestFrameReaderBounded: a line far over the cap is dropped as it is
// read; the reader never holds more than the cap and its buffer.
func TestFrameReaderBounded(t *testing.T) {
	const limit = 1 << 10
	src := &countingReader{r: io.MultiReader(strings.NewReader(`{"id":7,`), &zeros{n: 64 << 20}, strings.NewReader("\nok\n"))}
	fr := newFrameReader(src, limit)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := fr.next()
	runtime.ReadMemStats(&after)
	var o *oversizeError
	if !errors.As(err, &o) || o.Size != 8+64<<20 || len(o.Head) > idSearchBytes {
		t.Fatalf("next: %v", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Fatalf("reading a 64 MiB line allocated %d bytes", n)
	}
	if f, err := fr.next(); err != nil || string(f) != "ok" {
		t.Fatalf("after the long line: %q %v", f, err)
	}
	if src.n != 8+64<<20+4 {
		t.Fatalf("read %d bytes", src.n)
	}
}

type zeros struct{ n int }

func (z *zeros) Read(p []byte) (int, error) {
	if z.n == 0 {
		return 0, io.EOF
	}
	n := min(len(p), z.n)
	clear(p[:n])
	z.n -= n
	return n, nil
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// FuzzFrameReader feeds arbitrary input through the frame reader (with a
// small cap) and the decoder, and checks that the lines come out as a
// plain split gives them, and that each line is either a message that
// encodes back to what it said or a refusal with a well-formed answer.
func FuzzFrameReader(f *testing.F) {
	for _, s := range []string{
		"not json\n{\n{}\n[]\n\x00\n",
		`{"jsonrpc":"1.0","id":1,"method":"ping"}` + "\n" + `{"jsonrpc":"2.0","id":{},"method":"ping"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]` + "\n" + `{"jsonrpc":"2.0","id":5}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"kk_search","arguments":{"query":"x"}}}` + "\r\n",
		`{"jsonrpc":"2.0","id":9,"result":{}}` + "\n" + `{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"m"}}`,
		strings.Repeat("[", 1200) + "\n\n" + `{"jsonrpc":"2.0","method":"x","id":1e2,"id":3}`,
		`{"jsonrpc":"2.0","id":77,"method":"x","params":{"long":"` + strings.Repeat("y", 200) + `"}}`,
	} {
		f.Add([]byte(s))
	}
	const limit = 128
	f.Fuzz(func(t *testing.T, data []byte) {
		want := bytes.Split(data, []byte("\n"))
		if len(want[len(want)-1]) == 0 {
			want = want[:len(want)-1] // a trailing newline ends the last line
		}
		fr := newFrameReader(bytes.NewReader(data), limit)
		for i := 0; ; i++ {
			frame, err := fr.next()
			if err == io.EOF {
				if i != len(want) {
					t.Fatalf("%d frames, want %d", i, len(want))
				}
				return
			}
			if i >= len(want) {
				t.Fatalf("frame %d beyond the %d lines", i, len(want))
			}
			var o *oversizeError
			if errors.As(err, &o) {
				if len(want[i]) <= limit || o.Size != int64(len(want[i])) || !bytes.Equal(o.Head, want[i][:min(len(want[i]), idSearchBytes)]) {
					t.Fatalf("line %d (%d bytes) reported oversize as %d bytes", i, len(want[i]), o.Size)
				}
				checkRefusal(t, oversize(o))
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(frame, want[i]) {
				t.Fatalf("frame %d is %q, want %q", i, frame, want[i])
			}
			msg, ref := decodeFrame(frame)
			switch {
			case ref != nil && msg != nil:
				t.Fatalf("line %q: both a message and a refusal", frame)
			case ref != nil:
				checkRefusal(t, ref)
			case msg != nil:
				checkMessage(t, frame, msg)
			case len(bytes.Trim(frame, " \t\r\n")) != 0:
				t.Fatalf("line %q: neither a message nor a refusal", frame)
			}
		}
	})
}

func checkRefusal(t *testing.T, r *refusal) {
	t.Helper()
	// Invalid params: a protocol method's params lack a member MCP
	// requires, or hold one of the wrong type (tools/call without params).
	if r.Code != jsonrpc.CodeParseError && r.Code != jsonrpc.CodeInvalidRequest && r.Code != jsonrpc.CodeInvalidParams && !r.Quiet {
		t.Fatalf("refusal code %d", r.Code)
	}
	var reply map[string]json.RawMessage
	var werr jsonrpc.Error
	line := r.reply()
	if err := json.Unmarshal(line, &reply); err != nil || len(reply) != 3 || string(reply["jsonrpc"]) != `"2.0"` ||
		json.Unmarshal(reply["error"], &werr) != nil || werr.Code != r.Code {
		t.Fatalf("answer %q: %v", line, err)
	}
	id, ok := reply["id"]
	if !ok {
		t.Fatalf("answer %q without an id", line)
	}
	if string(id) != "null" {
		if _, err := readID(id); err != nil {
			t.Fatalf("answer id %s: %v", id, err)
		}
	}
}

// checkMessage: a message the decoder accepts is valid JSON-RPC 2.0, and
// the SDK's own decoder reads the same message from it.
func checkMessage(t *testing.T, frame []byte, msg jsonrpc.Message) {
	t.Helper()
	if !json.Valid(frame) {
		t.Fatalf("accepted invalid JSON %q", frame)
	}
	var v struct {
		JSONRPC string `json:"jsonrpc"`
	}
	if json.Unmarshal(frame, &v) != nil || v.JSONRPC != "2.0" {
		t.Fatalf("accepted %q without jsonrpc 2.0", frame)
	}
	sdk, err := jsonrpc.DecodeMessage(frame)
	if err != nil {
		t.Fatalf("accepted %q, which the SDK refuses: %v", frame, err)
	}
	null := func(raw json.RawMessage) json.RawMessage {
		if string(raw) == "null" {
			return nil
		}
		return raw
	}
	switch m := msg.(type) {
	case *jsonrpc.Request:
		s, ok := sdk.(*jsonrpc.Request)
		if !ok || s.ID != m.ID || s.Method != m.Method || !bytes.Equal(null(s.Params), m.Params) {
			t.Fatalf("%q: decoded %#v, the SDK reads %#v", frame, m, sdk)
		}
	case *jsonrpc.Response:
		s, ok := sdk.(*jsonrpc.Response)
		if !ok || s.ID != m.ID || !bytes.Equal(s.Result, m.Result) || (s.Error == nil) != (m.Error == nil) {
			t.Fatalf("%q: decoded %#v, the SDK reads %#v", frame, m, sdk)
		}
		if m.Error != nil {
			se, me := s.Error.(*jsonrpc.Error), m.Error.(*jsonrpc.Error)
			if se.Code != me.Code || se.Message != me.Message || !bytes.Equal(se.Data, me.Data) {
				t.Fatalf("%q: decoded error %#v, the SDK reads %#v", frame, me, se)
			}
		}
	default:
		t.Fatalf("%q: decoded a %T", frame, msg)
	}
}

// TestDecodeFrameParamsNameTheField: a protocol request whose params lack
// a member the method needs, or hold it with the wrong type, is refused
// with -32602 naming the member; the go-sdk said "unknown tool \"\"", or
// "invalid params: unmarshaling … into a *mcp.CallToolParamsRaw", or
// accepted a log level MCP does not have.
func TestDecodeFrameParamsNameTheField(t *testing.T) {
	for _, c := range []struct{ in, field string }{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, "params"},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":["kk_search"]}`, "params"},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}`, "params.name"},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}`, "params.name"},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":""}}`, "params.name"},
		{`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{}}`, "params.uri"},
		{`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":5}}`, "params.uri"},
		{`{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"loud"}}`, "params.level"},
		{`{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{}}`, "params.level"},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":5}}`, "params.cursor"},
		{`{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":null}}`, "params.name"},
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":5}}`, "params.protocolVersion"},
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":[]}}`, "params.capabilities"},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"kk_search","_meta":"x"}}`, "params._meta"},
	} {
		msg, ref := decodeFrame([]byte(c.in))
		if ref == nil {
			t.Errorf("%s: decoded %#v, want a refusal", c.in, msg)
			continue
		}
		if ref.Code != jsonrpc.CodeInvalidParams || string(ref.ID) != "1" || !strings.Contains(ref.Message, c.field) {
			t.Errorf("%s: refused %d %q (id %s), want -32602 naming %s", c.in, ref.Code, ref.Message, ref.ID, c.field)
		}
	}
	for _, ok := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"kk_search","arguments":{"query":"x"},"_meta":{"progressToken":1}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","extra":true}}`,
		`{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"emergency"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2099-01-01","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"kk://entry"}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"loud"}}`,
	} {
		if _, ref := decodeFrame([]byte(ok)); ref != nil {
			t.Errorf("%s: refused %d %s", ok, ref.Code, ref.Message)
		}
	}
}
