package mcpserver

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// lockedBuffer is a bytes.Buffer safe for the server's goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestClientMistakesAreNotErrors: the go-sdk logged what the client got
// wrong about the session (a request before initialize, initialized before
// initialize, a second initialize, a second initialized) at level ERROR,
// which a harness shows on stderr as a failure of kk. They are logged as
// the refusals of kk's own transport are, a warning naming the method,
// and the session goes on.
func TestClientMistakesAreNotErrors(t *testing.T) {
	var logBuf lockedBuffer
	log := slog.New(slog.NewTextHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv := newServer(newKB(t), Options{Version: "test", Logger: log}, Tools())
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- Run(context.Background(), srv, inR, outW, log)
		_ = outW.Close()
	}()
	go func() { _, _ = io.Copy(io.Discard, outR) }()
	const init = `{"jsonrpc":"2.0","id":%s,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		strings.Replace(init, "%s", "2", 1),
		strings.Replace(init, "%s", "3", 1),
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":4,"method":"ping"}`,
	}
	for _, l := range lines {
		if _, err := io.WriteString(inW, l+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	if err := inW.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	got := logBuf.String()
	if strings.Contains(got, "level=ERROR") {
		t.Fatalf("a client's mistake logged as an error:\n%s", got)
	}
	for _, want := range []string{
		`level=WARN msg="refused a message" reason="method invalid during initialization" method=tools/list`,
		`level=WARN msg="ignored a message" reason="initialized before initialize"`,
		`level=WARN msg="refused a message" reason="duplicate initialize request"`,
		`level=WARN msg="ignored a message" reason="duplicate initialized notification"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("log lacks %s:\n%s", want, got)
		}
	}
}

// TestSDKErrorsStayErrors: a record of the go-sdk that is not a client's
// mistake (a failure of the SDK or of kk) keeps its level.
func TestSDKErrorsStayErrors(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(clientMistakes{slog.NewTextHandler(&buf, nil)})
	log.Error("jsonrpc2 internal error", "error", "boom")
	log.With("session", "x").Error("server session ended with error", "error", "read: EIO")
	got := buf.String()
	if strings.Count(got, "level=ERROR") != 2 || !strings.Contains(got, "session=x") {
		t.Fatalf("the SDK's own errors were not kept as errors:\n%s", got)
	}
}
