//go:build unix

package cli

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// The stderr's reader has gone before kk mcp writes to it.
	kk := startKK(t, []string{"KK_ROOT=" + dir}, inR, outW, closedPipe(t), "mcp", "--log-file")
	t.Cleanup(func() { _ = inW.Close() })
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}` + "\n"
	if _, err := inW.WriteString(initialize); err != nil {
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
