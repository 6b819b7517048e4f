package mcpserver

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestBadFramesSession runs the kk binary and sends, in one session, every
// kind of malformed line a client or a fault can produce, waiting for each
// answer: each gets its JSON-RPC error, and afterwards tools/list and ping
// are answered, the server is still running, and it exits 0 when stdin
// closes, having written one warning per refused line and nothing else.
func TestBadFramesSession(t *testing.T) {
	needBinary(t)
	k := newKB(t)
	bigRequest := `{"jsonrpc":"2.0","id":40,"method":"tools/call","params":{"name":"kk_search","arguments":{"query":"` +
		strings.Repeat("a", MaxFrameBytes) + `"}}}`
	frames := []struct {
		name, line string
		code       int64
		id         string
	}{
		{"not json", "not json", -32700, "null"},
		{"open brace", "{", -32700, "null"},
		{"empty object", "{}", -32600, "null"},
		{"empty array", "[]", -32600, "null"},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":10,"method":"tools/list"}`, -32600, "10"},
		{"object id", `{"jsonrpc":"2.0","id":{"n":11},"method":"tools/list"}`, -32600, "null"},
		{"batch", `[{"jsonrpc":"2.0","id":12,"method":"tools/list"},{"jsonrpc":"2.0","id":13,"method":"ping"}]`, -32600, "null"},
		{"NUL", "\x00", -32700, "null"},
		{"NUL in a request", "{\"jsonrpc\":\"2.0\",\"id\":14,\"method\":\"ping\"}\x00", -32700, "null"},
		{"deep nesting", strings.Repeat("[", 100000) + strings.Repeat("]", 100000), -32700, "null"},
		{"deep params", `{"jsonrpc":"2.0","id":15,"method":"ping","params":` + strings.Repeat(`{"a":`, 2000) + "1" + strings.Repeat("}", 2001), -32700, "null"},
		{"id but no method", `{"jsonrpc":"2.0","id":16}`, -32600, "16"},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"tools/list"}`, -32600, "null"},
		{"over the frame cap", bigRequest, -32600, "40"},
		{"junk over the frame cap", strings.Repeat("x", MaxFrameBytes+1), -32600, "null"},
	}

	cmd := exec.Command(kkBin, "--root", k.Root, "mcp")
	cmd.Env = append(os.Environ(), "KK_ROOT=", "KK_MCP_LOG_LEVEL=")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	// stdout is a plain pipe, not cmd.StdoutPipe, so that waiting for the
	// process does not close it under the reader.
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = outR.Close() }()
	cmd.Stdout = outW
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := outW.Close(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = stdin.Close()
		_ = cmd.Process.Kill()
		if err := <-exited; err != nil {
			t.Logf("kk mcp, killed: %v", err)
		}
	}()
	out := bufio.NewReader(outR)

	type answer struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
		Error   *struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	send := func(line string) answer {
		t.Helper()
		if _, err := fmt.Fprintf(stdin, "%s\n", line); err != nil {
			t.Fatalf("writing: %v\nstderr:\n%s", err, stderr.String())
		}
		raw, err := out.ReadBytes('\n')
		if err != nil {
			t.Fatalf("stdout ended (%v) after sending %.80q\nstderr:\n%s", err, line, stderr.String())
		}
		var a answer
		if err := json.Unmarshal(raw, &a); err != nil || a.JSONRPC != "2.0" {
			t.Fatalf("stdout line is not a JSON-RPC message: %q", raw)
		}
		return a
	}

	if a := send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bad","version":"1"}}}`); a.Error != nil {
		t.Fatalf("initialize: %s", a.Error.Message)
	}
	if _, err := fmt.Fprintln(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		t.Fatal(err)
	}
	for _, f := range frames {
		a := send(f.line)
		if a.Error == nil || a.Error.Code != f.code || string(a.ID) != f.id || a.Result != nil {
			t.Errorf("%s: answered %+v %s, want error %d with id %s", f.name, a.Error, a.ID, f.code, f.id)
		}
	}

	a := send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	var list struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if a.Error != nil || string(a.ID) != "2" || json.Unmarshal(a.Result, &list) != nil || len(list.Tools) != len(Tools()) {
		t.Fatalf("tools/list after the bad lines: id %s, %d tools, error %+v", a.ID, len(list.Tools), a.Error)
	}
	select {
	case err := <-exited:
		t.Fatalf("kk mcp exited after answering tools/list: %v\nstderr:\n%s", err, stderr.String())
	default:
	}
	if a := send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`); a.Error != nil || string(a.ID) != "3" {
		t.Fatalf("ping: %+v", a)
	}

	if err := stdin.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-exited; err != nil {
		t.Fatalf("kk mcp: %v\nstderr:\n%s", err, stderr.String())
	}
	exited <- nil // for the deferred cleanup
	if rest, _ := out.ReadString('\n'); rest != "" {
		t.Fatalf("unexpected stdout after the session: %.200q", rest)
	}
	lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
	if len(lines) != len(frames) {
		t.Fatalf("%d stderr lines for %d refused frames:\n%s", len(lines), len(frames), stderr.String())
	}
	for _, l := range lines {
		if !strings.Contains(l, `level=WARN msg="refused a message"`) {
			t.Fatalf("stderr line %q, want only refusal warnings", l)
		}
	}
}
