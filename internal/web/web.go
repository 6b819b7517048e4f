// Package web is kk's read-only web page for browsing a knowledge base: the
// folder tree with its summaries, search as you type, a leaf rendered as
// HTML with its edges and changelog, the molecules with their atoms, and
// the traceability graph drawn as a picture. It is a face: every page is
// built from the core's read operations (store.ReadTree and the folder
// summaries, search.ReadNode and search.SearchNodes, graph.Get and graph.Search,
// trace.KBQuery), the same ones kk read, kk search, kk graph and kk query
// call, and it writes nothing to the knowledge tree.
//
// The pages are server-rendered with html/template; the stylesheet, the
// small search script and the icon are embedded, so the page needs no
// network. Only GET and HEAD are answered (405 otherwise), with a Content
// Security Policy that allows nothing but this handler's own assets and
// Cross-Origin-Resource-Policy: same-origin. A request a browser marks as
// sent by a page of another site (Sec-Fetch-Site) is refused (403) unless
// it is a link followed to a page.
//
// Routes, relative to where the handler is mounted:
//
//	/                     the folder tree with summaries, and the search box
//	/folder/{path...}     one folder: summary, subfolders and every leaf
//	/node/{id}            a leaf (or an extracted entity) with edges and changelog
//	/leaf/{path...}       redirects to the node page of the leaf at path (under nodes/)
//	/find?q=              search results as a page (the box without script)
//	/api/find?q=&limit=   search results as JSON, for the search box
//	/graph                molecules with their atoms, and the orphan atoms
//	/trace                the traceability graph (?focus=id&depth=N, ?all=1)
//	/assets/{name}        the embedded stylesheet, script and icon
//
// None of them collides with the knowledged API kk serve answers
// (/content, /search, /answer, /ask, /jobs, /posts, /tags), so kk serve can
// mount the handler at "/" beside it.
package web

import (
	"embed"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/kk-project/kk/internal/op"
	"github.com/kk-project/kk/internal/store"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

// Options tune the handler.
type Options struct {
	// Prefix is the path the handler is mounted under, without a trailing
	// slash ("" for the root). Every link the pages carry starts with it;
	// mount the handler with http.StripPrefix(prefix, h).
	Prefix string
	// Title names the knowledge base in the page header; default the
	// repository folder's name.
	Title string
	// LoopbackOnly answers only requests whose Host is a loopback name or
	// address (localhost, 127.0.0.1, [::1]), so that a web site the
	// browser visits cannot read the knowledge base through DNS
	// rebinding. kk browse sets it.
	LoopbackOnly bool
	// Repair, when set, is handed a search's failure and reports
	// whether it repaired its cause (kk serve's: a damaged branch index
	// removed, to be built again from the tree); the search then runs
	// once more.
	Repair func(error) bool
}

// handler serves the pages of one knowledge base.
type handler struct {
	k     *store.KB
	opts  Options
	pages map[string]*template.Template
	mux   *http.ServeMux
}

// New returns the read-only web page of k as an http.Handler.
func New(k *store.KB, opts Options) http.Handler {
	opts.Prefix = strings.TrimSuffix(opts.Prefix, "/")
	if opts.Title == "" {
		opts.Title = filepath.Base(k.Root)
	}
	h := &handler{k: k, opts: opts, pages: parsePages(), mux: http.NewServeMux()}
	// GET patterns match HEAD too; any other method on a known path gets
	// 405 with an Allow header, an unknown path 404.
	assets, _ := fs.Sub(assetFS, "assets")
	serve := map[string]http.Handler{
		"/{$}":              http.HandlerFunc(h.tree),
		"/folder/{path...}": http.HandlerFunc(h.folder),
		"/node/{id}":        http.HandlerFunc(h.node),
		"/leaf/{path...}":   http.HandlerFunc(h.leaf),
		"/find":             http.HandlerFunc(h.find),
		"/api/find":         http.HandlerFunc(h.findJSON),
		"/graph":            http.HandlerFunc(h.graph),
		"/trace":            http.HandlerFunc(h.trace),
		"/assets/":          http.StripPrefix("/assets/", http.FileServerFS(assets)),
	}
	for _, p := range Paths {
		h.mux.Handle("GET "+p, serve[p])
	}
	return h
}

// Paths are the handler's routes as http.ServeMux patterns without a
// method, for a server that mounts the page at "/" beside other routes
// (kk serve) and sends only these paths to it.
var Paths = []string{"/{$}", "/folder/{path...}", "/node/{id}", "/leaf/{path...}", "/find", "/api/find", "/graph", "/trace", "/assets/"}

// SearchPaths are the routes among Paths that run a search, for a server
// that bounds searches apart (kk serve).
var SearchPaths = []string{"/find", "/api/find"}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.opts.LoopbackOnly && !loopbackHost(r.Host) {
		http.Error(w, "kk browse answers only requests addressed to localhost, 127.0.0.1 or [::1]", http.StatusMisdirectedRequest)
		return
	}
	hd := w.Header()
	// No page of another site may load an answer as a subresource (an
	// <img>, a <script>, a fetch) nor frame one.
	hd.Set("Cross-Origin-Resource-Policy", "same-origin")
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" && !topLevelNavigation(r) {
		// The page of another site cannot read the answer, but it can
		// time it (a search that finds something takes longer) and have
		// kk search in a loop: refused before any work. A link followed
		// to the page is served.
		http.Error(w, "kk answers a page of another site (Sec-Fetch-Site: "+site+") only when it follows a link to a page; subresources, frames and fetches are refused", http.StatusForbidden)
		return
	}
	hd.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cache-Control", "no-cache")
	h.mux.ServeHTTP(w, r)
}

// topLevelNavigation reports whether r is a navigation to a document (a
// link followed, an address typed), not one into a frame. A navigation
// that names no destination is taken as a document.
func topLevelNavigation(r *http.Request) bool {
	if r.Header.Get("Sec-Fetch-Mode") != "navigate" {
		return false
	}
	dest := r.Header.Get("Sec-Fetch-Dest")
	return dest == "" || dest == "document"
}

// loopbackHost reports whether a request's Host names this machine's
// loopback interface, with a port of digits or none.
func loopbackHost(host string) bool {
	if h, port, err := net.SplitHostPort(host); err == nil {
		if port == "" || strings.Trim(port, "0123456789") != "" {
			return false
		}
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Links. Every path segment is escaped, '&' included (goldmark resolves
// entities in link targets).

func escapeSegment(s string) string {
	return strings.ReplaceAll(url.PathEscape(s), "&", "%26")
}

func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = escapeSegment(s)
	}
	return strings.Join(segs, "/")
}

func nodeURL(prefix, id string) string { return prefix + "/node/" + escapeSegment(id) }

func leafURL(prefix, p string) string { return prefix + "/leaf/" + escapePath(p) }

func folderURL(prefix, dir string) string {
	if dir == "" || dir == "." {
		return prefix + "/"
	}
	return prefix + "/folder/" + escapePath(dir)
}

func traceURL(prefix, focus string) string {
	if focus == "" {
		return prefix + "/trace"
	}
	return prefix + "/trace?focus=" + url.QueryEscape(focus)
}

func badRequest(msg string) error { return op.New(op.CodeValidation, nil, "%s", msg) }

// statusOf maps an operation's error to an HTTP status.
func statusOf(err error) int {
	switch op.ErrorOf(err).Code {
	case op.CodeNotFound:
		return http.StatusNotFound
	case op.CodeValidation:
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}
