package mcpserver

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// gatedWriter blocks its first write until open is closed, telling
// entered when it starts.
type gatedWriter struct {
	entered, open chan struct{}
	first         bool
	out           strings.Builder
}

func (w *gatedWriter) Write(p []byte) (int, error) {
	if !w.first {
		w.first = true
		close(w.entered)
		<-w.open
	}
	return w.out.Write(p)
}

// TestIDReusedWhileItsAnswerIsWritten: a client may reuse a request's id
// once it has read the answer, and the answer's line can reach it before
// the server's writer returns. The second request, read meanwhile, was
// forgotten when the first answer's write returned (one entry per id), so
// a client that then closed its input ended the session without the
// second answer. Each request read counts until its own answer is
// written.
func TestIDReusedWhileItsAnswerIsWritten(t *testing.T) {
	inR, inW := io.Pipe()
	w := &gatedWriter{entered: make(chan struct{}), open: make(chan struct{})}
	tr := &lineTransport{in: inR, out: w, log: slog.New(slog.DiscardHandler), max: MaxFrameBytes}
	conn, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := conn.(*lineConn)
	ctx := context.Background()
	read := func(line string) jsonrpc.Message {
		t.Helper()
		go func() { _, _ = io.WriteString(inW, line+"\n") }()
		msg, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return msg
	}
	first := read(`{"jsonrpc":"2.0","id":5,"method":"ping"}`).(*jsonrpc.Request)
	wrote := make(chan error, 1)
	go func() { wrote <- c.Write(ctx, &jsonrpc.Response{ID: first.ID, Result: []byte(`{}`)}) }()
	<-w.entered // the answer's line is on its way to the client
	second := read(`{"jsonrpc":"2.0","id":5,"method":"tools/list"}`).(*jsonrpc.Request)
	close(w.open)
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	// The client closes its input: the end is reported only once the
	// second request has its answer.
	if err := inW.Close(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() { _, err := c.Read(ctx); ended <- err }()
	c.mu.Lock()
	open := c.open[second.ID]
	c.mu.Unlock()
	if open == 0 {
		t.Fatal("the second request with id 5 is not open any more: its answer would be dropped at the end of input")
	}
	if err := c.Write(ctx, &jsonrpc.Response{ID: second.ID, Result: []byte(`{"tools":[]}`)}); err != nil {
		t.Fatal(err)
	}
	if err := <-ended; !errors.Is(err, io.EOF) {
		t.Fatalf("end of input: %v", err)
	}
	if got := strings.Count(w.out.String(), `"id":5`); got != 2 {
		t.Fatalf("%d answers with id 5, want 2:\n%s", got, w.out.String())
	}
}
