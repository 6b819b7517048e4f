//go:build unix

package mcpserver

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// TestClientHangsUp runs the kk binary with one end of a socket pair as
// its stdin and stdout, as some harnesses start MCP servers, and closes
// the other end in the ways a client does. The server exits 0 every time,
// with nothing on stderr.
func TestClientHangsUp(t *testing.T) {
	needBinary(t)
	k := newKB(t)
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sock","version":"1"}}}` + "\n"
	const search = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"kk_search","arguments":{"query":"x"}}}` + "\n"
	for _, c := range []struct {
		name string
		// client talks to the server over fd, its end of the pair, and
		// leaves it closed or shut down.
		client func(t *testing.T, fd int)
	}{
		{"closes with an answer unread", func(t *testing.T, fd int) {
			// The kernel then resets the connection: the server's next
			// read fails with ECONNRESET.
			write(t, fd, initialize)
			if _, _, err := syscall.Recvfrom(fd, make([]byte, 1), syscall.MSG_PEEK); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Close(fd); err != nil {
				t.Fatal(err)
			}
		}},
		{"closes with a request unanswered", func(t *testing.T, fd int) {
			// The answers meet a closed socket: EPIPE (and SIGPIPE) on
			// write, or a reset on read if they arrived first.
			write(t, fd, initialize+search)
			if err := syscall.Close(fd); err != nil {
				t.Fatal(err)
			}
		}},
		{"shuts down its writing side", func(t *testing.T, fd int) {
			// End of input: the server answers what it read, then exits.
			write(t, fd, initialize+search)
			if err := syscall.Shutdown(fd, syscall.SHUT_WR); err != nil {
				t.Fatal(err)
			}
			f := os.NewFile(uintptr(fd), "client")
			defer func() { _ = f.Close() }()
			var ids []string
			sc := bufio.NewScanner(f)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				ids = append(ids, strings.SplitN(sc.Text(), ",", 3)[1])
			}
			if strings.Join(ids, " ") != `"id":1 "id":2` {
				t.Fatalf("answers %v, want ids 1 and 2 (%v)", ids, sc.Err())
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Close-on-exec, as the os package does it: the client's end
			// must not leak into the server, or closing it would not
			// close the connection.
			syscall.ForkLock.RLock()
			fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
			if err == nil {
				syscall.CloseOnExec(fds[0])
				syscall.CloseOnExec(fds[1])
			}
			syscall.ForkLock.RUnlock()
			if err != nil {
				t.Fatal(err)
			}
			server := os.NewFile(uintptr(fds[1]), "server")
			cmd := exec.Command(kkBin, "--root", k.Root, "mcp")
			cmd.Env = append(os.Environ(), "KK_ROOT=", "KK_MCP_LOG_LEVEL=")
			cmd.Stdin, cmd.Stdout = server, server
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if err := server.Close(); err != nil {
				t.Fatal(err)
			}
			c.client(t, fds[0])
			if err := cmd.Wait(); err != nil {
				t.Fatalf("kk mcp: %v\nstderr:\n%s", err, stderr.String())
			}
			if stderr.Len() > 0 {
				t.Fatalf("stderr:\n%s", stderr.String())
			}
		})
	}
}

func write(t *testing.T, fd int, s string) {
	t.Helper()
	for len(s) > 0 {
		n, err := syscall.Write(fd, []byte(s))
		if err != nil {
			t.Fatal(err)
		}
		s = s[n:]
	}
}
