package httpapi_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/httpapi"
)

// A write that declares a body over the cap (Content-Length) is answered
// 413 from its headers, and its connection closed, without waiting for
// the body. Found by the serve10 red team: a POST declaring 10 GiB and
// sending a few bytes waited for the rest until the body's deadline (20
// s), then got 408 "did not come", and a client sending the whole of a
// too-large body had it read, 32 KiB at a time, up to the cap, taking
// the room of honest writers' bodies meanwhile.
func TestDeclaredBodyOverTheCapIs413(t *testing.T) {
	s := start(t, newRepo(t), nil, "")
	host := strings.TrimPrefix(s.url, "http://")
	for _, size := range []int64{httpapi.DefaultMaxBody + 1, 10 << 30} {
		conn, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = conn.Close() }()
		fmt.Fprintf(conn, "POST /content HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"content\":\"", host, size)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), fmt.Sprintf("request body exceeds %d bytes", httpapi.DefaultMaxBody)) {
			t.Errorf("Content-Length %d: %d %s", size, resp.StatusCode, body)
		}
		if !resp.Close {
			t.Errorf("Content-Length %d: the connection is kept open, for a body that will not be read", size)
		}
	}
	if r := s.do("GET", "/healthz", ""); r.status != http.StatusOK || !strings.Contains(r.body, `"queue_depth":0`) {
		t.Errorf("healthz after: %d %s", r.status, r.body)
	}
}
