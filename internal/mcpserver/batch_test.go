package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// startSession runs srv over pipes and initializes a session at protocol
// version v; it returns send, read and close.
func startSession(t *testing.T, v string) (send func(string), read func() string, end func()) {
	t.Helper()
	srv := newServer(newKB(t), Options{Version: "test"}, Tools())
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- Run(context.Background(), srv, inR, outW, nil)
		_ = outW.Close()
	}()
	out := bufio.NewReader(outR)
	send = func(line string) {
		t.Helper()
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	read = func() string {
		t.Helper()
		line, err := out.ReadString('\n')
		if err != nil {
			t.Fatalf("stdout ended: %v", err)
		}
		return line
	}
	end = func() {
		t.Helper()
		if err := inW.Close(); err != nil {
			t.Fatal(err)
		}
		if err := <-served; err != nil {
			t.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"` + v + `","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if line := read(); !strings.Contains(line, `"protocolVersion":"`+v+`"`) {
		t.Fatalf("initialize at %s: %s", v, line)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return send, read, end
}

// TestBatchesOfProtocol20250326: MCP 2025-03-26 says a server MUST accept
// JSON-RPC batches (2025-06-18 removed them), and the go-sdk's own stdio
// transport did; kk's refused every batch whatever the version the
// session negotiated. In a 2025-03-26 session a batch is answered with
// one array holding the answer to each request of the batch, in order,
// and an error for each element that is not a valid message; a batch
// holding no request gets no answer. Later versions refuse batches.
func TestBatchesOfProtocol20250326(t *testing.T) {
	send, read, end := startSession(t, "2025-03-26")
	send(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}},` +
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"},5,{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"kk_search","arguments":{"query":7}}},` +
		`{"jsonrpc":"2.0","id":4,"method":"initialize","params":{}}]`)
	var answers []struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code int64 `json:"code"`
		} `json:"error"`
	}
	line := read()
	if err := json.Unmarshal([]byte(line), &answers); err != nil {
		t.Fatalf("the answer to a batch is not an array: %v\n%.300s", err, line)
	}
	var ids []string
	for _, a := range answers {
		ids = append(ids, string(a.ID))
	}
	if got := strings.Join(ids, " "); got != "1 2 null 3 4" {
		t.Fatalf("answers to ids %s, want 1 2 null 3 4:\n%.500s", got, line)
	}
	if answers[0].Error != nil || answers[1].Error != nil || !strings.Contains(string(answers[1].Result), `"kk_search"`) {
		t.Errorf("ping or tools/list failed: %.500s", line)
	}
	if answers[2].Error == nil || answers[2].Error.Code != -32600 {
		t.Errorf("the element 5: %.500s", line)
	}
	if !strings.Contains(string(answers[3].Result), `"isError":true`) {
		t.Errorf("tools/call with a number for a string: %.500s", line)
	}
	if answers[4].Error == nil || answers[4].Error.Code != -32600 {
		t.Errorf("initialize in a batch: %.500s", line)
	}
	// Only notifications: no answer. The ping after it is answered alone.
	send(`[{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":98}}]`)
	send(`{"jsonrpc":"2.0","id":6,"method":"ping"}`)
	if line := read(); !strings.HasPrefix(line, `{"jsonrpc":"2.0","id":6,"result":{}}`) {
		t.Errorf("after a batch of notifications: %s", line)
	}
	// An id in use by an open request of the batch is refused within it.
	send(`[{"jsonrpc":"2.0","id":7,"method":"ping"},{"jsonrpc":"2.0","id":7,"method":"ping"}]`)
	if line := read(); !strings.HasPrefix(line, `[{"jsonrpc":"2.0","id":7,"result":{}},{"jsonrpc":"2.0","id":null,"error":{"code":-32600`) &&
		!strings.HasPrefix(line, `[{"jsonrpc":"2.0","id":null,"error":{"code":-32600`) {
		t.Errorf("a batch reusing its own id: %s", line)
	}
	end()

	// A client that writes its batch before it reads the answer to
	// initialize: the batch is taken at the version it asked for.
	srv := newServer(newKB(t), Options{Version: "test"}, Tools())
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`,
	}, "\n") + "\n"
	var out strings.Builder
	if err := Run(context.Background(), srv, strings.NewReader(in), &out, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":{}}]`) {
		t.Errorf("a batch written before the answer to initialize was read:\n%s", out.String())
	}

	send, read, end = startSession(t, "2025-06-18")
	// A second initialize, asking for 2025-03-26, is refused and changes
	// nothing.
	send(`{"jsonrpc":"2.0","id":"again","method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if line := read(); !strings.Contains(line, `"id":"again","error"`) {
		t.Errorf("a second initialize: %s", line)
	}
	send(`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`)
	if line := read(); !strings.Contains(line, `"id":null,"error":{"code":-32600,"message":"invalid request: batches are not supported`) {
		t.Errorf("a batch at 2025-06-18: %s", line)
	}
	end()
}
