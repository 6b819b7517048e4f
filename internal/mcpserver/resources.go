package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/safetext"
	"github.com/kk-project/kk/internal/store"
)

// Resource URIs.
const (
	EntryURI         = "kk://entry"
	NodeURIPrefix    = "kk://node/"
	IndexURIPrefix   = "kk://index/"
	nodeTemplate     = NodeURIPrefix + "{+id}"
	indexTemplate    = IndexURIPrefix + "{+path}"
	markdownMIMEType = "text/markdown"
)

func (s *server) addResources(srv *mcp.Server) {
	srv.AddResource(&mcp.Resource{
		Name: "entry", Title: "Knowledge base entry page", URI: EntryURI, MIMEType: markdownMIMEType,
		Description: "ENTRY.md: what the knowledge base holds and where to start.",
	}, s.readEntry)
	srv.AddResourceTemplate(&mcp.ResourceTemplate{
		Name: "node", Title: "Knowledge node", URITemplate: nodeTemplate, MIMEType: markdownMIMEType,
		Description: "One leaf of the knowledge tree by its id (kk_id), as stored: front matter and markdown body.",
	}, s.readNode)
	srv.AddResourceTemplate(&mcp.ResourceTemplate{
		Name: "index", Title: "Folder index", URITemplate: indexTemplate, MIMEType: markdownMIMEType,
		Description: "A folder's generated index.md by its path under nodes/ (index.md for the root, auth/index.md for a folder): the folder's leaves and subfolders with one-line summaries.",
	}, s.readIndex)
}

// storeFor returns the knowledge base for a read of uri, or, while there
// is none, a "resource not found" error saying why and what to run.
func (s *server) storeFor(uri string) (*store.KB, error) {
	k, err := s.store()
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("%s: %v", uri, err)}
	}
	return k, nil
}

func (s *server) readEntry(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	k, err := s.storeFor(req.Params.URI)
	if err != nil {
		return nil, err
	}
	return s.readFile(k, req.Params.URI, k.EntryPath())
}

func (s *server) readNode(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	id := strings.TrimPrefix(uri, NodeURIPrefix)
	if id == "" || id == uri {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	k, err := s.storeFor(uri)
	if err != nil {
		return nil, err
	}
	t, err := index.ReadTree(ctx, k)
	if err != nil {
		s.log.Error("reading a resource", "uri", uri, "error", err.Error())
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("%s: the knowledge tree cannot be read: %v", uri, err)}
	}
	n, ok := t.ByID(id)
	if !ok {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	return s.readFile(k, uri, k.NodePath(n.Path))
}

func (s *server) readIndex(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	p := strings.TrimPrefix(uri, IndexURIPrefix)
	if p == uri || p == "" || path.Base(p) != "index.md" || path.Clean(p) != p || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "../") || strings.Contains(p, "/../") {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." || strings.HasPrefix(part, ".") {
			return nil, mcp.ResourceNotFoundError(uri)
		}
	}
	k, err := s.storeFor(uri)
	if err != nil {
		return nil, err
	}
	return s.readFile(k, uri, k.NodePath(p))
}

// maxResourceBytes is the largest file a resource read returns (16 MiB:
// the generated index.md of a folder of some 80,000 leaves).
const maxResourceBytes = 16 << 20

// readFile returns one markdown file as a resource, or "not found". Only
// a regular file inside the knowledge base folder (after following links)
// of at most maxResourceBytes is read: a folder linked out of the tree is
// not read through, a FIFO would block the read for ever and /dev/zero
// would never end. A refusal names the URI, never the file's absolute
// path.
func (s *server) readFile(k *store.KB, uri, file string) (*mcp.ReadResourceResult, error) {
	// A refusal is about the URI the client asked for: invalid params,
	// as the go-sdk answers a resource it does not find.
	refuse := func(why string) error {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("%s: %s", uri, why)}
	}
	resolved, err := filepath.EvalSymlinks(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	if err != nil {
		s.log.Error("reading a resource", "uri", uri, "error", err.Error())
		return nil, refuse("cannot be read")
	}
	dir, err := filepath.EvalSymlinks(k.Dir)
	if err != nil {
		s.log.Error("reading a resource", "uri", uri, "error", err.Error())
		return nil, refuse("cannot be read")
	}
	if rel, err := filepath.Rel(dir, resolved); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, refuse("is a link out of the knowledge tree; kk does not read it")
	}
	fi, err := os.Stat(resolved)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, refuse("is not a regular file; kk does not read it")
	}
	// O_NONBLOCK: should the path have become a FIFO since the Stat, the
	// open does not wait for a writer.
	f, err := os.OpenFile(resolved, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		s.log.Error("reading a resource", "uri", uri, "error", err.Error())
		return nil, refuse("cannot be read")
	}
	defer func() { _ = f.Close() }()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, refuse("is not a regular file; kk does not read it")
	}
	src, err := io.ReadAll(io.LimitReader(f, maxResourceBytes+1))
	if err != nil {
		s.log.Error("reading a resource", "uri", uri, "error", err.Error())
		return nil, refuse("cannot be read")
	}
	if len(src) > maxResourceBytes {
		return nil, refuse(fmt.Sprintf("is over %d bytes, the limit of a resource", maxResourceBytes))
	}
	// The text reaches the harness's terminal UI and the model as a tool
	// result's does, and carries no raw control either (a hand-written
	// note's ESC sequence, C1 control, bidirectional override): markdown
	// has no escape for one, so each is written as U+FFFD, as hook
	// context is. A file without one is returned as it is.
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: markdownMIMEType, Text: safetext.ReplaceControls(string(src))}}}, nil
}
