package httpapi

import (
	"crypto/subtle"
	"fmt"
	"mime"
	"net"
	"net/http"
	"slices"
	"strings"
)

// What keeps a web page out. A page the user's browser shows can send
// requests to kk serve on loopback: a form or fetch(…, {mode: "no-cors"})
// posts with a text/plain or form body and its own Origin, and a page whose
// name is made to resolve to 127.0.0.1 (DNS rebinding) reads answers under
// its own Host. So, unless the request carries the configured bearer
// token (which no page can make a browser send):
//
//   - every route refuses a Host that is not an address of the server
//     (421), and a request a browser marks as sent by a page of another
//     site (Sec-Fetch-Site) that is not a navigation to a document (a
//     link followed; not a frame) (403);
//   - a write route (POST, PUT and DELETE /content, POST /ask) refuses an
//     Origin, or a Sec-Fetch-Site, from another site (403), and a body
//     that is not declared JSON (415): a browser sends application/json
//     to another origin only after a CORS preflight, which kk serve
//     never grants.

// hostSet is the Host values a request may carry: the loopback names at
// the server's port, and the address it was asked to listen on.
type hostSet struct {
	hosts   []string // lower-case host:port
	origins []string // http://host:port
}

// newHostSet lists the Hosts of a server listening on bound (the
// listener's address) as asked by addr (--addr, "" when unknown).
func newHostSet(bound, addr string) *hostSet {
	_, port, err := net.SplitHostPort(bound)
	if err != nil {
		return &hostSet{}
	}
	names := []string{"127.0.0.1", "localhost", "::1"}
	if h, _, err := net.SplitHostPort(bound); err == nil {
		names = append(names, h)
	}
	if h, _, err := net.SplitHostPort(addr); err == nil && h != "" {
		names = append(names, h)
	}
	// A server on 0.0.0.0 or :: serves every address of the machine.
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil && ip.IsUnspecified() {
			names = append(names, interfaceIPs()...)
			break
		}
	}
	s := &hostSet{}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil && ip.IsUnspecified() {
			continue // 0.0.0.0 and :: name no host a client addresses
		}
		hp := strings.ToLower(net.JoinHostPort(n, port))
		if slices.Contains(s.hosts, hp) {
			continue
		}
		s.hosts = append(s.hosts, hp)
		s.origins = append(s.origins, "http://"+hp)
		if port == "80" {
			bare := strings.ToLower(n)
			if strings.Contains(bare, ":") {
				bare = "[" + bare + "]"
			}
			s.hosts = append(s.hosts, bare)
			s.origins = append(s.origins, "http://"+bare)
		}
	}
	return s
}

// interfaceIPs lists the machine's addresses.
func interfaceIPs() []string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []string
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok {
			out = append(out, ipn.IP.String())
		}
	}
	return out
}

// allows reports whether a request's Host names this server.
func (s *hostSet) allows(host string) bool {
	return slices.Contains(s.hosts, strings.ToLower(host))
}

// sameOrigin reports whether an Origin header is this server's own.
func (s *hostSet) sameOrigin(origin string) bool {
	return slices.Contains(s.origins, strings.ToLower(origin))
}

// loopbackAnyPort is the Host rule of a handler used without Serve (a
// test's httptest server): loopback names at any port.
func loopbackAnyPort(host string) bool {
	h, _, err := net.SplitHostPort(host)
	if err != nil {
		h = host
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// followedLink reports whether r is a navigation to a document (a link
// followed, an address typed): not one into a frame (iframe, frame,
// embed, object, fencedframe), which a page of another site can make in
// a loop, as it can <img>s, each served (an /answer's model call). A
// navigation that names no destination is taken as a document.
func followedLink(r *http.Request) bool {
	if r.Header.Get("Sec-Fetch-Mode") != "navigate" {
		return false
	}
	dest := r.Header.Get("Sec-Fetch-Dest")
	return dest == "" || dest == "document"
}

// guardError is a refusal of the guard: its status and message.
type guardError struct {
	status int
	msg    string
}

// guard checks a request that carries no valid bearer token, to a write
// route when write is set; nil lets it through.
func (s *Server) guard(r *http.Request, write bool) *guardError {
	hosts := s.hosts.Load()
	okHost := false
	if hosts == nil {
		okHost = loopbackAnyPort(r.Host)
	} else {
		okHost = hosts.allows(r.Host)
	}
	if !okHost {
		return &guardError{http.StatusMisdirectedRequest, fmt.Sprintf("Host %q is not an address of this server; kk serve answers only requests addressed to it (a guard against DNS rebinding), unless they carry its bearer token", r.Host)}
	}
	// A page of another site cannot read an answer (no CORS is granted,
	// and every answer says Cross-Origin-Resource-Policy: same-origin),
	// but its requests were served all the same: an <img> pointed at
	// /answer, in a loop, spent the user's model calls. A request the
	// browser marks as another site's that is not a navigation (a link
	// followed) is refused before any work.
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" && (write || !followedLink(r)) {
		if write {
			return &guardError{http.StatusForbidden, fmt.Sprintf("a write from another site (Sec-Fetch-Site: %s) is refused", site)}
		}
		return &guardError{http.StatusForbidden, fmt.Sprintf("a request from a page of another site (Sec-Fetch-Site: %s, Sec-Fetch-Mode: %s) is refused: kk serve answers its own pages, links followed to it, and clients that are not browsers", site, r.Header.Get("Sec-Fetch-Mode"))}
	}
	if !write {
		return nil
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		same := false
		if hosts == nil {
			same = strings.HasPrefix(origin, "http://") && loopbackAnyPort(strings.TrimPrefix(origin, "http://"))
		} else {
			same = hosts.sameOrigin(origin)
		}
		if !same {
			return &guardError{http.StatusForbidden, fmt.Sprintf("a write from another origin (%s) is refused: kk serve takes writes from its own origin, or from clients that send no Origin", origin)}
		}
	}
	ct := r.Header.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
		if ct == "" {
			ct = "none"
		}
		return &guardError{http.StatusUnsupportedMediaType, fmt.Sprintf("a write needs Content-Type: application/json (got %s)", ct)}
	}
	return nil
}

// validBearer reports whether an Authorization header carries token as a
// bearer token. The scheme's name is case-insensitive (RFC 7235).
func validBearer(header, token string) bool {
	scheme, cred, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(cred)), []byte(token)) == 1
}
