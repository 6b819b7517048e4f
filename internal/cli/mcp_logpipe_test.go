//go:build unix

package cli

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMCPOutlivesItsStderrReaderFromTheStart: kk mcp --log-file whose log
// file cannot be opened warns on stderr that it logs there instead; with
// stderr a pipe whose reader has gone, that warning fails with EPIPE and
// the server still answers on stdout. Before, the warning came before kk
// mcp caught SIGPIPE and killed it (signal: broken pipe) before it read a
// request.
func TestMCPOutlivesItsStderrReaderFromTheStart(t *testing.T) {
	dir := t.TempDir()
	if code, _, errs := run(t, dir, "", "init"); code != 0 {
		t.Fatalf("init: %d %s", code, errs)
	}
	// _logs a file: the log folder cannot be made (as root, a read-only
	// folder would not stop it).
	if err := os.WriteFile(filepath.Join(dir, ".ai", "kenkeep", "_logs"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	inR, inW := pipe(t)
	outR, outW := pipe(t)
	// The stderr's reader has gone before kk mcp writes to it.
	kk := startKK(t, []string{"KK_ROOT=" + dir}, inR, outW, closedPipe(t), "mcp", "--log-file")
	t.Cleanup(func() { _ = inW.Close() })
	if _, err := inW.WriteString(mcpInitialize); err != nil {
		<-kk.exited
		t.Fatalf("kk mcp ended before it read a request: %v", kk.waitErr)
	}
	line, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil {
		<-kk.exited
		t.Fatalf("kk mcp answered nothing (%v): %v", err, kk.waitErr)
	}
	if !strings.Contains(line, `"result"`) {
		t.Fatalf("initialize: %s", line)
	}
}

// TestMCPLogFileIsANamedPipe: kk mcp --log-file whose day's log file is a
// named pipe warns at once, naming it, that it logs to stderr instead,
// and serves. Before, opening the pipe for writing waited for a reader,
// for ever when none came: the server never answered. The guard only
// turns such a hang into a failure; it measures nothing.
func TestMCPLogFileIsANamedPipe(t *testing.T) {
	dir := t.TempDir()
	if code, _, errs := run(t, dir, "", "init"); code != 0 {
		t.Fatalf("init: %d %s", code, errs)
	}
	logs := filepath.Join(dir, ".ai", "kenkeep", "_logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	// Today's and tomorrow's log, should the day change as kk starts.
	var fifos []string
	for _, d := range []time.Duration{0, 24 * time.Hour} {
		p := filepath.Join(logs, "mcp-"+time.Now().Add(d).UTC().Format("2006-01-02")+".log")
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
		fifos = append(fifos, p)
	}
	inR, inW := pipe(t)
	outR, outW := pipe(t)
	errR, errW := pipe(t)
	kk := startKK(t, []string{"KK_ROOT=" + dir}, inR, outW, errW, "mcp", "--log-file")
	if _, err := inW.WriteString(mcpInitialize); err != nil {
		t.Fatal(err)
	}
	answered := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(outR).ReadString('\n')
		answered <- line
	}()
	select {
	case line := <-answered:
		if !strings.Contains(line, `"result"`) {
			t.Fatalf("initialize: %q", line)
		}
	case <-time.After(time.Minute):
		t.Fatal("kk mcp --log-file answered nothing: it hung opening the named pipe")
	}
	_ = inW.Close()
	<-kk.exited
	stderr, err := io.ReadAll(errR)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(stderr), "logging to stderr instead") || !strings.Contains(string(stderr), "not a regular file") ||
		!(strings.Contains(string(stderr), filepath.Base(fifos[0])) || strings.Contains(string(stderr), filepath.Base(fifos[1]))) {
		t.Fatalf("stderr does not name the named pipe:\n%s", stderr)
	}
}

// mcpInitialize is an MCP client's first request, on one line.
const mcpInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}` + "\n"
