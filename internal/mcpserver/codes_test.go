package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kk-project/kk/internal/search"
	"github.com/kk-project/kk/internal/store"
)

// TestErrorCodesAreJSONRPC runs the kk binary over raw pipes and sends
// what a client gets wrong about the session rather than about one line:
// a request before initialize, a second initialize, a resource kk refuses
// to read. Each answer is a JSON-RPC error whose code is one JSON-RPC
// defines (-32600 invalid request, -32602 invalid params), never 0, which
// no client can tell apart from anything else, and the session goes on.
func TestErrorCodesAreJSONRPC(t *testing.T) {
	needBinary(t)
	k := newKB(t)
	nodes := filepath.Dir(k.NodePath("x"))
	if err := os.MkdirAll(filepath.Join(nodes, "ext"), 0o755); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "index.md")
	if err := os.WriteFile(outside, []byte("# outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(nodes, "ext", "index.md")); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(kkBin, "--root", k.Root, "mcp")
	cmd.Env = append(os.Environ(), "KK_ROOT=", "KK_MCP_LOG_LEVEL=")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	}()
	out := bufio.NewReader(stdout)
	type answer struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	send := func(line string) answer {
		t.Helper()
		if _, err := fmt.Fprintln(stdin, line); err != nil {
			t.Fatalf("writing: %v\nstderr:\n%s", err, stderr.String())
		}
		raw, err := out.ReadBytes('\n')
		if err != nil {
			t.Fatalf("stdout ended (%v) after %q\nstderr:\n%s", err, line, stderr.String())
		}
		var a answer
		if err := json.Unmarshal(raw, &a); err != nil {
			t.Fatalf("stdout line %q: %v", raw, err)
		}
		return a
	}
	wantError := func(what string, a answer, id string, code int64, words string) {
		t.Helper()
		if a.Error == nil || string(a.ID) != id || a.Error.Code != code || !strings.Contains(a.Error.Message, words) {
			t.Errorf("%s: answered id %s, error %+v, result %s; want error %d with id %s, saying %q", what, a.ID, a.Error, a.Result, code, id, words)
		}
	}
	initialize := func(id int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, id)
	}

	wantError("tools/list before initialize", send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), "1", -32600, "initializ")
	if a := send(initialize(2)); a.Error != nil {
		t.Fatalf("initialize: %+v", a.Error)
	}
	if _, err := fmt.Fprintln(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		t.Fatal(err)
	}
	wantError("a second initialize", send(initialize(3)), "3", -32600, "initialize")
	wantError("a resource linked out of the tree", send(`{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"kk://index/ext/index.md"}}`),
		"4", -32602, "kk://index/ext/index.md")
	if a := send(`{"jsonrpc":"2.0","id":5,"method":"ping"}`); a.Error != nil || string(a.ID) != "5" {
		t.Fatalf("ping after the errors: %+v", a)
	}
}

// TestCancelledRequestGetsNoAnswer: a client that cancels a request in
// flight (notifications/cancelled, as Claude Code does when the user
// interrupts a turn) gets no answer to it, as MCP asks of the receiver;
// kk wrote the tool's "the operation was interrupted" failure, which
// clients report as an answer to an unknown request. The other requests
// are answered, and the server ends when the client closes its input
// without waiting for the dropped answer.
func TestCancelledRequestGetsNoAnswer(t *testing.T) {
	started, returned := make(chan struct{}), make(chan struct{})
	wait := Tool{Name: "wait", Title: "Wait", Description: "waits until cancelled", Schema: "kk-entry", ReadOnly: true,
		Run: decoded("kk-entry", func(ctx context.Context, _ *store.KB, _ search.EntryParams) (*search.EntryData, error) {
			close(started)
			<-ctx.Done()
			defer close(returned)
			return nil, ctx.Err()
		})}
	srv := newServer(newKB(t), Options{Version: "test"}, append(Tools(), wait))
	sess := startPipeSession(t, srv)
	send := sess.send
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wait","arguments":{}}}`)
	<-started
	send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"the user interrupted"}}`)
	<-returned
	send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if err := sess.in.Close(); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for {
		line, err := sess.out.ReadString('\n')
		if line != "" {
			lines = append(lines, line)
		}
		if err != nil {
			break
		}
	}
	if err := <-sess.served; err != nil {
		t.Fatal(err)
	}
	if len(lines) != 1 || !strings.Contains(lines[0], `"id":3,"result"`) {
		t.Fatalf("answers after the cancellation: %q, want only the ping's", lines)
	}
}

// TestLogFileThatCannotBeOpened: `kk mcp --log-file` in a checkout where
// the log folder cannot be written (a read-only checkout, a _logs that is
// not a folder) refused to start at all ("opening the log file: …"), so
// the agent had no kk tools for a log nobody asked to read. The server
// starts, logging to stderr, and says why there.
func TestLogFileThatCannotBeOpened(t *testing.T) {
	k := newKB(t)
	if err := os.WriteFile(k.LogsDir(), []byte("not a folder\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	needBinary(t)
	cmd := exec.Command(kkBin, "--root", k.Root, "mcp", "--log-file")
	cmd.Env = append(os.Environ(), "KK_ROOT=", "KK_MCP_LOG_LEVEL=")
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\n")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kk mcp --log-file: %v\nstderr:\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), `"id":2,"result":{`) || !strings.Contains(stdout.String(), `"name":"kk_search"`) {
		t.Fatalf("tools/list not answered; stdout:\n%.300s", stdout.String())
	}
	if !strings.Contains(stderr.String(), "_logs") {
		t.Fatalf("stderr does not say why the log file is not used:\n%s", stderr.String())
	}
}

// TestRefusedCancelCancelsNothing: a notifications/cancelled sent with an
// id is not a notification; it was answered as an invalid request and
// yet still cancelled the request it named, whose answer became
// "the operation was interrupted". A refused message has no effect.
func TestRefusedCancelCancelsNothing(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	srv := newServer(newKB(t), Options{Version: "test"}, append(Tools(), waitTool(started, release)))
	sess := startPipeSession(t, srv)
	send, read := sess.send, sess.read
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wait","arguments":{}}}`)
	<-started
	send(`{"jsonrpc":"2.0","id":9,"method":"notifications/cancelled","params":{"requestId":2}}`)
	if line := read(); !strings.Contains(line, `"id":9,"error":{"code":-32600`) {
		t.Fatalf("the cancel with an id: %s", line)
	}
	send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if line := read(); !strings.Contains(line, `"id":3,"result"`) {
		t.Fatalf("ping: %s", line)
	}
	close(release)
	if line := read(); !strings.Contains(line, `"id":2,"result"`) || strings.Contains(line, `"isError":true`) {
		t.Fatalf("the request the refused cancel named: %s", line)
	}
	sess.close()
}

// TestDuplicateIDInFlightIsAnswered: a request whose id is that of a
// request not yet answered got no answer at all (the go-sdk drops it, so
// as not to misattribute its error). It is refused, -32600 with a null id
// (an answer with its id would read as the first request's), and the
// first request is answered as usual.
func TestDuplicateIDInFlightIsAnswered(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	srv := newServer(newKB(t), Options{Version: "test"}, append(Tools(), waitTool(started, release)))
	sess := startPipeSession(t, srv)
	send, read := sess.send, sess.read
	send(`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"wait","arguments":{}}}`)
	<-started
	send(`{"jsonrpc":"2.0","id":"a","method":"ping"}`)
	if line := read(); !strings.Contains(line, `"id":null,"error":{"code":-32600`) || !strings.Contains(line, `\"a\"`) {
		t.Fatalf("the second request with id \"a\": %s", line)
	}
	close(release)
	if line := read(); !strings.Contains(line, `"id":"a","result"`) || strings.Contains(line, `"isError":true`) {
		t.Fatalf("the first request with id \"a\": %s", line)
	}
	send(`{"jsonrpc":"2.0","id":"a","method":"ping"}`)
	if line := read(); !strings.Contains(line, `"id":"a","result":{}`) {
		t.Fatalf("id \"a\" again once answered: %s", line)
	}
	sess.close()
}

// TestInitializeIsNeverCancelled: MCP forbids cancelling initialize, yet a
// notifications/cancelled naming it, read before the answer went out,
// dropped the answer (about one run in four), leaving the client waiting
// for ever. The transport ignores such a notification: the SDK never sees
// it and the answer is written.
func TestInitializeIsNeverCancelled(t *testing.T) {
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}
{"jsonrpc":"2.0","id":2,"method":"ping"}
`)
	var out bytes.Buffer
	conn, err := (&lineTransport{in: in, out: &out, log: slog.New(slog.DiscardHandler), max: MaxFrameBytes}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var methods []string
	for range 2 {
		msg, err := conn.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		methods = append(methods, msg.(*jsonrpc.Request).Method)
	}
	if want := []string{"initialize", "ping"}; !slices.Equal(methods, want) {
		t.Fatalf("the SDK was handed %v, want %v", methods, want)
	}
	id, _ := jsonrpc.MakeID(float64(1))
	if err := conn.Write(ctx, &jsonrpc.Response{ID: id, Result: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"id":1,"result"`) {
		t.Fatalf("the answer to initialize was dropped: %q", out.String())
	}
}

// pipeSession runs srv over pipes and initializes it, for tests that
// speak to it line by line: send writes a line, read reads one (failing
// the test when stdout ends), and close ends the input and returns what
// the server returned.
type pipeSession struct {
	t      *testing.T
	in     *io.PipeWriter
	out    *bufio.Reader
	served chan error
}

func startPipeSession(t *testing.T, srv *mcp.Server) *pipeSession {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &pipeSession{t: t, in: inW, out: bufio.NewReader(outR), served: make(chan error, 1)}
	go func() {
		s.served <- Run(context.Background(), srv, inR, outW, nil)
		_ = outW.Close()
	}()
	s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if line := s.read(); !strings.Contains(line, `"id":1,"result"`) {
		t.Fatalf("initialize: %s", line)
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s
}

func (s *pipeSession) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatal(err)
	}
}

func (s *pipeSession) read() string {
	s.t.Helper()
	line, err := s.out.ReadString('\n')
	if err != nil {
		s.t.Fatalf("stdout ended: %v", err)
	}
	return line
}

// close ends the server's input and fails the test when the server
// returned an error.
func (s *pipeSession) close() {
	s.t.Helper()
	if err := s.in.Close(); err != nil {
		s.t.Fatal(err)
	}
	if err := <-s.served; err != nil {
		s.t.Fatal(err)
	}
}

// waitTool is a tool "wait" that closes started when called and answers
// (kk_entry's answer) once release is closed, or fails when its request
// is cancelled.
func waitTool(started, release chan struct{}) Tool {
	return Tool{Name: "wait", Title: "Wait", Description: "waits until released", Schema: "kk-entry", ReadOnly: true,
		Run: decoded("kk-entry", func(ctx context.Context, k *store.KB, p search.EntryParams) (*search.EntryData, error) {
			close(started)
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-release:
			}
			return search.ReadEntry(ctx, k, p)
		})}
}
