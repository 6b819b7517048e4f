// Package mcpserver is kk's MCP server: the graph, traceability and
// knowledge operations of internal/graph exposed as MCP tools, and the
// entry page, nodes and folder indexes as resources. Every tool is a thin
// face over a core operation that the CLI calls too; the server adds
// argument validation against the registered schemas, error mapping and
// logging, nothing else.
package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kk-project/kk/internal/op"
	"github.com/kk-project/kk/internal/schema"
	"github.com/kk-project/kk/internal/store"
)

// Options tune the server.
type Options struct {
	// Version is kk's version, reported to clients.
	Version string
	// Logger receives one record per call; nil discards them.
	Logger *slog.Logger
}

// instructions is what a client shows the model about the server as a whole.
const instructions = `kk serves this repository's knowledge base (.ai/kenkeep/): reviewed notes about the code, an atom/molecule graph keyed by file paths, and traceability entities (requirements, scenarios, tests, decisions, symbols) with typed edges.
Before changing files, call query_graph with operation "context" and the file paths. To look something up by topic, call kk_search, then kk_read. Record what you learned with manage_graph and manage_changelog.
Every tool returns {"success":true,"data":…} or a tool error whose text is {"success":false,"error":{"code","message","details"}}.`

// noKBInstructions follow instructions when the server started where no
// knowledge base was found.
const noKBInstructions = `
No knowledge base was found when this server started: every tool answers with an error saying why until one exists (a person runs "kk init" in the repository).`

type server struct {
	log *slog.Logger

	// find looks for the knowledge base again while there is none.
	find func() (*store.KB, error)
	mu   sync.Mutex
	kb   *store.KB // nil until find succeeds
}

// New builds the MCP server for k with every tool and resource registered.
func New(k *store.KB, o Options) *mcp.Server { return newServer(k, o, tools) }

// NewFinding builds the MCP server for a process started where find does
// not find a knowledge base (yet): the session still starts, since a
// client shows a server that exits before initialize as a broken pipe
// with no reason, and every tool call and resource read answers with
// find's error, as a tool error or a JSON-RPC error, until a call finds
// the knowledge base (a person ran kk init meanwhile). The server keeps the
// first one found.
func NewFinding(find func() (*store.KB, error), o Options) *mcp.Server {
	return newServerFinding(nil, find, o, tools)
}

func newServer(k *store.KB, o Options, list []Tool) *mcp.Server {
	return newServerFinding(k, nil, o, list)
}

func newServerFinding(k *store.KB, find func() (*store.KB, error), o Options, list []Tool) *mcp.Server {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	version := o.Version
	if version == "" {
		version = "dev"
	}
	s := &server{kb: k, find: find, log: log}
	text := instructions
	if k == nil {
		text += noKBInstructions
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "kk", Title: "kk knowledge base", Version: version},
		&mcp.ServerOptions{Instructions: text, Logger: slog.New(clientMistakes{log.Handler()})})
	for _, t := range list {
		srv.AddTool(mcpTool(t), s.handler(t))
	}
	s.addResources(srv)
	return srv
}

// store returns the knowledge base, looking for it again while there is
// none.
func (s *server) store() (*store.KB, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.kb != nil {
		return s.kb, nil
	}
	if s.find == nil {
		return nil, store.ErrNotFound
	}
	k, err := s.find()
	if err != nil {
		return nil, err
	}
	s.log.Info("found the knowledge base", "root", k.Root)
	s.kb = k
	return k, nil
}

// InputSchema returns the input schema of the registered schema name as
// MCP wants it: the registry's schema without its $schema and $id keys.
func InputSchema(name string) (json.RawMessage, error) {
	raw, err := schema.JSON(name)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	delete(m, "$schema")
	delete(m, "$id")
	return json.Marshal(m)
}

func mcpTool(t Tool) *mcp.Tool {
	in, err := InputSchema(t.Schema)
	if err == nil {
		var out json.RawMessage
		if out, err = OutputSchema(t); err == nil {
			destructive := t.Destructive
			return &mcp.Tool{
				Name:         t.Name,
				Title:        t.Title,
				Description:  t.Description,
				InputSchema:  in,
				OutputSchema: out,
				Annotations: &mcp.ToolAnnotations{
					Title:           t.Title,
					ReadOnlyHint:    t.ReadOnly,
					DestructiveHint: &destructive,
					IdempotentHint:  t.Idempotent,
					OpenWorldHint:   new(bool),
				},
			}
		}
	}
	// The schemas are generated from Go types at build time; a failure
	// here is a bug caught by the package's tests.
	panic(fmt.Sprintf("mcpserver: tool %s: %v", t.Name, err))
}

// handler validates the arguments against the tool's schema, runs the core
// operation, and maps its envelope to a tool result. A panic in the
// operation becomes an INTERNAL_ERROR tool error: the server keeps serving.
func (s *server) handler(t Tool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
		start := time.Now()
		var resp op.Envelope
		var k *store.KB
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("tool panicked", "tool", t.Name, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				resp = op.Envelope{Error: &op.Error{Code: op.CodeInternal,
					Message: fmt.Sprintf("%s failed unexpectedly: %v", t.Name, p)}}
				res, err = result(resp), nil
			}
			attrs := []any{"tool", t.Name, "ms", time.Since(start).Milliseconds(), "success", resp.Success}
			if resp.Error != nil {
				attrs = append(attrs, "code", resp.Error.Code, "message", resp.Error.Message)
			}
			s.log.Info("call", attrs...)
			// Leaves the call's reads skipped because they cannot be read:
			// each is logged once per server (the call went on without it).
			if k != nil {
				for _, p := range k.TakeSkipped() {
					s.log.Warn("skipped a leaf kk cannot read", "problem", p.Error())
				}
			}
		}()
		k, err = s.store()
		if err != nil {
			resp = op.Envelope{Error: noKB(err)}
			return result(resp), nil
		}
		raw := []byte(req.Params.Arguments)
		if len(raw) == 0 || string(raw) == "null" {
			raw = []byte("{}")
		}
		resp = op.Wrap(t.Run.run(ctx, k, raw))
		return result(resp), nil
	}
}

// noKB is the tool error of a call made while there is no knowledge base:
// a CONFIG_ERROR, since no tool can run until a person sets one up, whose
// message is why it was not found and what to run.
func noKB(err error) *op.Error {
	return op.New(op.CodeConfig, map[string]any{"run": "kk init"}, "%v", err)
}

// result turns an envelope into a tool result: its JSON as the one text
// content, and the same JSON as the structured content of a successful
// call (which the tool's output schema describes), or the flag isError on
// a failed one. The JSON is encoded once; the SDK writes the structured
// content's bytes as they are.
func result(resp op.Envelope) *mcp.CallToolResult {
	text, err := json.Marshal(resp)
	if err != nil {
		resp = op.Envelope{Error: &op.Error{Code: op.CodeInternal, Message: "encoding the result: " + err.Error()}}
		text, _ = json.Marshal(resp)
	}
	text = escapeControls(text)
	res := &mcp.CallToolResult{
		Content: []mcp.Content{&mcp.TextContent{Text: string(text)}},
		IsError: !resp.Success,
	}
	if resp.Success {
		res.StructuredContent = json.RawMessage(text)
	}
	return res
}

// escapeControls writes the C1 controls (U+0080 to U+009F), the
// bidirectional embeddings, overrides and isolates (U+202A to U+202E,
// U+2066 to U+2069) and the tag characters (U+E0000 to U+E007F, as their
// UTF-16 surrogate pair) of JSON text as \u escapes, as encoding/json
// writes the C0 ones: the text decodes to the same value, a harness that
// shows it in a terminal shows no raw control from a note's words, and a
// model reads no invisible tag characters as the letters they shadow (a
// note that came by git, which kk's writes would refuse). They can only
// occur inside JSON strings, where an escape means the same.
func escapeControls(text []byte) []byte {
	var out []byte
	last := 0
	for i := 0; i < len(text); {
		c := text[i]
		if c != 0xC2 && c != 0xE2 && c != 0xF3 {
			i++
			continue
		}
		r, n := utf8.DecodeRune(text[i:])
		switch {
		case (0x80 <= r && r <= 0x9f) || (0x202a <= r && r <= 0x202e) || (0x2066 <= r && r <= 0x2069):
			out = append(out, text[last:i]...)
			out = fmt.Appendf(out, `\u%04x`, r)
			last = i + n
		case 0xe0000 <= r && r <= 0xe007f:
			hi, lo := utf16.EncodeRune(r)
			out = append(out, text[last:i]...)
			out = fmt.Appendf(out, `\u%04x\u%04x`, hi, lo)
			last = i + n
		}
		i += n
	}
	if out == nil {
		return text
	}
	return append(out, text[last:]...)
}
