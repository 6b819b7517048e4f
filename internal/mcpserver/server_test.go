package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kk-project/kk/internal/op"
	"github.com/kk-project/kk/internal/search"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

var update = flag.Bool("update", false, "rewrite testdata/tools.json")

func newKB(t testing.TB) *store.KB {
	t.Helper()
	k := store.New(filepath.Join(t.TempDir(), "proj"))
	if err := os.MkdirAll(k.Root, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := txn.Init(context.Background(), k, store.InitOptions{Version: "test", Now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Command: "test"}); err != nil {
		t.Fatal(err)
	}
	return k
}

// connectList starts a server with the given tools on in-memory transports
// and returns a connected client session.
func connectList(t testing.TB, k *store.KB, list []Tool) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	srv := newServer(k, Options{Version: "test"}, list)
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close(); _ = ss.Wait() })
	return cs
}

func connect(t testing.TB, k *store.KB) *mcp.ClientSession { return connectList(t, k, tools) }

// call runs a tool and returns its envelope, checking that isError agrees
// with success and that the text content is the only content.
func call(t testing.TB, cs *mcp.ClientSession, name string, args any) map[string]any {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s: %d content blocks", name, len(res.Content))
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("%s: content is %T", name, res.Content[0])
	}
	var env map[string]any
	if err := json.Unmarshal([]byte(text.Text), &env); err != nil {
		t.Fatalf("%s: text is not JSON: %v\n%s", name, err, text.Text)
	}
	if env["success"] == res.IsError {
		t.Fatalf("%s: success=%v but isError=%v", name, env["success"], res.IsError)
	}
	checkStructured(t, name, res, env)
	return env
}

// checkStructured checks the structured content of a tool result: none on
// a failed call; on a successful one, the text's JSON again, matching the
// tool's output schema.
func checkStructured(t testing.TB, name string, res *mcp.CallToolResult, env map[string]any) {
	t.Helper()
	if res.IsError {
		if res.StructuredContent != nil {
			t.Fatalf("%s: a failed call carries structured content", name)
		}
		return
	}
	if res.StructuredContent == nil {
		t.Fatalf("%s: a tool with an output schema answered without structured content", name)
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var structured any
	if err := json.Unmarshal(raw, &structured); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(structured, any(env)) {
		t.Fatalf("%s: the structured content is not the text's JSON:\n%s", name, raw)
	}
	resolved := outputSchemaOf(t, name)
	if err := resolved.Validate(structured); err != nil {
		t.Fatalf("%s: the answer does not match the tool's output schema: %v\n%.2000s", name, err, raw)
	}
}

var (
	resolvedMu      sync.Mutex
	resolvedOutputs = map[string]*jsonschema.Resolved{}
)

// outputSchemaOf is the resolved output schema of the tool called name.
func outputSchemaOf(t testing.TB, name string) *jsonschema.Resolved {
	t.Helper()
	resolvedMu.Lock()
	defer resolvedMu.Unlock()
	if r := resolvedOutputs[name]; r != nil {
		return r
	}
	for _, tl := range Tools() {
		if tl.Name != name {
			continue
		}
		raw, err := OutputSchema(tl)
		if err != nil {
			t.Fatal(err)
		}
		var s jsonschema.Schema
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		r, err := s.Resolve(nil)
		if err != nil {
			t.Fatalf("%s: the output schema does not resolve: %v", name, err)
		}
		resolvedOutputs[name] = r
		return r
	}
	t.Fatalf("no tool %s", name)
	return nil
}

func data(t testing.TB, env map[string]any) map[string]any {
	t.Helper()
	if env["success"] != true {
		t.Fatalf("call failed: %v", env["error"])
	}
	d, _ := env["data"].(map[string]any)
	return d
}

func code(env map[string]any) string {
	e, _ := env["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

func wantCode(t testing.TB, env map[string]any, want string) {
	t.Helper()
	if got := code(env); got != want {
		t.Fatalf("code %q, want %q: %v", got, want, env)
	}
}

func TestToolsSnapshot(t *testing.T) {
	cs := connect(t, newKB(t))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(res.Tools, func(a, b *mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
	// Every tool tools/list gives declares the shape of its answer.
	if len(res.Tools) != len(Tools()) {
		t.Fatalf("tools/list gave %d tools, want %d", len(res.Tools), len(Tools()))
	}
	for _, tl := range res.Tools {
		if tl.OutputSchema == nil {
			t.Errorf("tools/list: %s has no output schema", tl.Name)
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(res.Tools); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "tools.json")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/mcpserver -run TestToolsSnapshot -update)", err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Fatalf("the tool list changed; review it and run go test ./internal/mcpserver -run TestToolsSnapshot -update\n%s", b.String())
	}
}

// TestToolInventory checks every tool's metadata at once.
func TestToolInventory(t *testing.T) {
	name := regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	readOnly := map[string]bool{"query_graph": true, "kb_query": true, "kb_check": true, "kk_search": true, "kk_read": true, "kk_entry": true}
	seen := map[string]bool{}
	for _, tl := range Tools() {
		if !name.MatchString(tl.Name) || seen[tl.Name] {
			t.Errorf("tool name %q: not [a-z0-9_] or repeated", tl.Name)
		}
		seen[tl.Name] = true
		if len(tl.Description) < 100 || tl.Title == "" {
			t.Errorf("%s: needs a title and a description written for a model", tl.Name)
		}
		if tl.ReadOnly != readOnly[tl.Name] {
			t.Errorf("%s: ReadOnly=%v", tl.Name, tl.ReadOnly)
		}
		if tl.ReadOnly && tl.Destructive {
			t.Errorf("%s: read-only and destructive", tl.Name)
		}
		raw, err := InputSchema(tl.Schema)
		if err != nil {
			t.Fatalf("%s: %v", tl.Name, err)
		}
		var s map[string]any
		if err := json.Unmarshal(raw, &s); err != nil || s["type"] != "object" {
			t.Errorf("%s: input schema is not an object schema: %s", tl.Name, raw)
		}
		out, err := OutputSchema(tl)
		if err != nil {
			t.Fatalf("%s: %v", tl.Name, err)
		}
		var o map[string]any
		if err := json.Unmarshal(out, &o); err != nil || o["type"] != "object" {
			t.Errorf("%s: output schema is not an object schema: %s", tl.Name, out)
		}
		// It resolves, and holds an answer to its shape.
		if err := outputSchemaOf(t, tl.Name).Validate(map[string]any{"success": true, "data": map[string]any{"surprise": 1}}); err == nil {
			t.Errorf("%s: the output schema takes data of any shape", tl.Name)
		}
	}
	for _, want := range []string{"query_graph", "manage_graph", "manage_changelog", "kb_query", "kb_upsert", "kb_delete", "kb_check", "kk_search", "kk_read", "kk_entry"} {
		if !seen[want] {
			t.Errorf("tool %s is missing", want)
		}
	}
}

func TestGraphTools(t *testing.T) {
	cs := connect(t, newKB(t))

	// manage_graph: create, errors, update with versions.
	mol := data(t, call(t, cs, "manage_graph", map[string]any{"operation": "create", "entityType": "molecule", "name": "Payments", "knowledge": "Stripe."}))
	molID := mol["id"].(string)
	var atomIDs []string
	for _, n := range []string{"Webhooks", "Gateway", "Refunds"} {
		a := data(t, call(t, cs, "manage_graph", map[string]any{"operation": "create", "entityType": "atom", "name": n,
			"paths": []string{"src/pay/" + strings.ToLower(n) + "/**"}, "knowledge": n + " knowledge", "moleculeId": molID}))
		atomIDs = append(atomIDs, a["id"].(string))
	}
	wantCode(t, call(t, cs, "manage_graph", map[string]any{"operation": "create", "entityType": "atom", "name": "Bad", "paths": []string{"../x/**"}}), op.CodeValidation)
	wantCode(t, call(t, cs, "manage_graph", map[string]any{"operation": "create", "entityType": "atom", "name": "Lost", "paths": []string{"a/**"}, "moleculeId": "molecule-none"}), op.CodeNotFound)
	wantCode(t, call(t, cs, "manage_graph", map[string]any{"operation": "update", "entityType": "atom", "id": atomIDs[0], "version": 1, "paths": []string{}}), op.CodeInvariant)
	up := data(t, call(t, cs, "manage_graph", map[string]any{"operation": "update", "entityType": "atom", "id": atomIDs[0], "version": 1, "knowledge": "more", "knowledgeMode": "append", "lastTaskId": "T-2"}))
	if up["version"] != float64(2) {
		t.Fatalf("version after update: %v", up["version"])
	}
	stale := call(t, cs, "manage_graph", map[string]any{"operation": "update", "entityType": "atom", "id": atomIDs[0], "version": 1, "name": "Hooks"})
	wantCode(t, stale, op.CodeConflict)
	if d := stale["error"].(map[string]any)["details"].(map[string]any); d["currentVersion"] != float64(2) {
		t.Fatalf("CONFLICT details: %v", d)
	}

	// query_graph: get, search with pagination, context, errors.
	got := data(t, call(t, cs, "query_graph", map[string]any{"operation": "get", "entityType": "molecule", "id": molID}))
	if atoms, _ := got["atoms"].([]any); len(atoms) != 3 {
		t.Fatalf("molecule atoms: %v", got["atoms"])
	}
	page := data(t, call(t, cs, "query_graph", map[string]any{"operation": "search", "entityType": "atom", "limit": 2, "offset": 2}))
	if page["total"] != float64(3) || len(page["atoms"].([]any)) != 1 {
		t.Fatalf("page 2: %v", page)
	}
	ctxRes := data(t, call(t, cs, "query_graph", map[string]any{"operation": "context", "paths": "src/pay/refunds/a.go, docs/x.md"}))
	if fmt.Sprint(ctxRes["unmatchedPaths"]) != "[docs/x.md]" || len(ctxRes["molecules"].([]any)) != 1 {
		t.Fatalf("context: %v", ctxRes)
	}
	wantCode(t, call(t, cs, "query_graph", map[string]any{"operation": "get", "entityType": "atom", "id": "map-none"}), op.CodeNotFound)
	wantCode(t, call(t, cs, "query_graph", map[string]any{"operation": "context"}), op.CodeValidation)

	// manage_changelog: append, paginated search, errors.
	for i := range 3 {
		data(t, call(t, cs, "manage_changelog", map[string]any{"operation": "append", "parentType": "atom", "parentId": atomIDs[1], "taskId": fmt.Sprint("T-", i), "summary": fmt.Sprint("change ", i)}))
	}
	log := data(t, call(t, cs, "manage_changelog", map[string]any{"operation": "search", "parentType": "atom", "parentId": atomIDs[1], "limit": 2, "offset": 1}))
	if b, _ := json.Marshal(log); !strings.Contains(string(b), `"change 1"`) || strings.Contains(string(b), `"change 2"`) {
		t.Fatalf("changelog page: %s", b)
	}
	wantCode(t, call(t, cs, "manage_changelog", map[string]any{"operation": "append", "parentType": "atom", "parentId": "map-none", "taskId": "T-9", "summary": "x"}), op.CodeNotFound)

	// delete needs the current version.
	wantCode(t, call(t, cs, "manage_graph", map[string]any{"operation": "delete", "entityType": "atom", "id": atomIDs[2], "version": 9}), op.CodeConflict)
	data(t, call(t, cs, "manage_graph", map[string]any{"operation": "delete", "entityType": "atom", "id": atomIDs[2], "version": 1}))
}

func TestSchemaValidation(t *testing.T) {
	k := newKB(t)
	cs := connect(t, k)
	before := treeFiles(t, k)
	for _, c := range []struct {
		tool    string
		args    any
		pointer string
	}{
		{"query_graph", map[string]any{"operation": "search", "entityType": "atom", "limit": 5000}, "/limit"},
		{"query_graph", map[string]any{"operation": "explode"}, "/operation"},
		{"query_graph", map[string]any{"operation": "get", "surprise": true}, "/surprise"},
		{"manage_graph", map[string]any{"operation": "create", "entityType": "atom", "name": 7}, "/name"},
		{"manage_graph", map[string]any{"entityType": "atom"}, "/operation"},
		{"manage_graph", map[string]any{"operation": "merge", "entityType": "atom"}, "/operation"},
		{"query_graph", map[string]any{"operation": "list"}, "/operation"},
		{"manage_changelog", map[string]any{"operation": "edit", "parentType": "atom", "parentId": "map-checkout"}, "/operation"},
		{"kk_read", map[string]any{"changelogLimit": -1}, "/changelogLimit"},
		{"kk_search", map[string]any{"query": ""}, "/query"},
		{"kk_entry", map[string]any{"x": 1}, "/x"},
		{"kb_upsert", map[string]any{"entities": []any{}}, "/created_by"},
	} {
		env := call(t, cs, c.tool, c.args)
		wantCode(t, env, op.CodeValidation)
		fails, _ := env["error"].(map[string]any)["details"].(map[string]any)["failures"].([]any)
		if len(fails) == 0 || fails[0].(map[string]any)["pointer"] != c.pointer {
			t.Errorf("%s %v: failures %v, want the first at %q", c.tool, c.args, fails, c.pointer)
		}
	}
	if after := treeFiles(t, k); !slices.Equal(before, after) {
		t.Fatalf("rejected calls changed the tree:\n%v\n%v", before, after)
	}
}

// treeFiles lists the files under .ai/kenkeep except .state.
func treeFiles(t testing.TB, k *store.KB) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(k.Dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".state" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out = append(out, fmt.Sprintf("%s %d", k.Rel(p), len(b)))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestKnowledgeTools(t *testing.T) {
	k := newKB(t)
	cs := connect(t, k)
	a := data(t, call(t, cs, "manage_graph", map[string]any{"operation": "create", "entityType": "atom", "name": "Token rotation", "paths": []string{"src/auth/**"}, "knowledge": "Refresh tokens rotate every hour."}))
	id := a["id"].(string)
	data(t, call(t, cs, "manage_changelog", map[string]any{"operation": "append", "parentType": "atom", "parentId": id, "taskId": "T-1", "summary": "first"}))
	data(t, call(t, cs, "manage_changelog", map[string]any{"operation": "append", "parentType": "atom", "parentId": id, "taskId": "T-2", "summary": "second"}))

	byID := data(t, call(t, cs, "kk_read", map[string]any{"id": id, "changelogLimit": 1}))
	if byID["title"] != "Token rotation" || byID["changelogTotal"] != float64(2) || len(byID["changelog"].([]any)) != 1 || fmt.Sprint(byID["paths"]) != "[src/auth/**]" {
		t.Fatalf("kk_read by id: %v", byID)
	}
	byPath := data(t, call(t, cs, "kk_read", map[string]any{"path": byID["path"]}))
	if byPath["id"] != id {
		t.Fatalf("kk_read by path: %v", byPath)
	}
	wantCode(t, call(t, cs, "kk_read", map[string]any{"id": "map-none"}), op.CodeNotFound)
	wantCode(t, call(t, cs, "kk_read", map[string]any{"path": "graph/none.md"}), op.CodeNotFound)
	wantCode(t, call(t, cs, "kk_read", map[string]any{"path": "../../etc/passwd.md"}), op.CodeValidation)
	wantCode(t, call(t, cs, "kk_read", map[string]any{"id": id, "path": "x.md"}), op.CodeValidation)
	wantCode(t, call(t, cs, "kk_read", map[string]any{}), op.CodeValidation)

	hits := data(t, call(t, cs, "kk_search", map[string]any{"query": "rotate tokens", "limit": 3}))
	list, _ := hits["hits"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["id"] != id || !strings.Contains(list[0].(map[string]any)["snippet"].(string), "[") {
		t.Fatalf("kk_search: %v", hits)
	}
	wantCode(t, call(t, cs, "kk_search", map[string]any{"query": "!!"}), op.CodeValidation)

	entry := data(t, call(t, cs, "kk_entry", nil))
	if !strings.Contains(entry["content"].(string), "node_count") {
		t.Fatalf("kk_entry: %v", entry)
	}
	if err := os.Remove(k.EntryPath()); err != nil {
		t.Fatal(err)
	}
	wantCode(t, call(t, cs, "kk_entry", map[string]any{}), op.CodeNotFound)
}

func TestTraceabilityTools(t *testing.T) {
	k := newKB(t)
	cs := connect(t, k)
	up := call(t, cs, "kb_upsert", map[string]any{
		"entities": []any{
			map[string]any{"id": "REQ-1", "type": "req", "title": "Log in", "priority": "must"},
			map[string]any{"id": "login-test", "type": "test", "title": "login works"},
			map[string]any{"id": "old-flag", "type": "flag", "title": "Old flag"},
		},
		"edges":      []any{map[string]any{"type": "verified_by", "from": "req-1", "to": "LOGIN-TEST"}},
		"created_by": "agent", "source": "test",
	})
	d := data(t, up)
	// Ids stay as given; edge ends match without regard to case.
	if fmt.Sprint(d["ids"]) != "[REQ-1 login-test old-flag]" {
		t.Fatalf("kb_upsert ids: %v", d)
	}
	wantCode(t, call(t, cs, "kb_upsert", map[string]any{
		"edges": []any{map[string]any{"type": "verified_by", "from": "req-1", "to": "test-none"}}, "created_by": "agent", "source": "test",
	}), op.CodeNotFound)

	q := data(t, call(t, cs, "kb_query", map[string]any{"type": "req", "relationship": map[string]any{"type": "verified_by", "missing": true}}))
	if q["total"] != float64(0) {
		t.Fatalf("kb_query missing verified_by: %v", q)
	}
	q = data(t, call(t, cs, "kb_query", map[string]any{"limit": 1, "offset": 1}))
	if q["total"] != float64(3) || len(q["entities"].([]any)) != 1 {
		t.Fatalf("kb_query page: %v", q)
	}

	chk := data(t, call(t, cs, "kb_check", map[string]any{}))
	if b, _ := json.Marshal(chk); !strings.Contains(string(b), `"REQ-1"`) {
		t.Fatalf("kb_check should report REQ-1 without a scenario: %s", b)
	}

	// kb_delete is restricted: a version is required and req is refused.
	noVersion := call(t, cs, "kb_delete", map[string]any{"entities": []any{"old-flag"}, "created_by": "agent", "source": "test"})
	wantCode(t, noVersion, op.CodeValidation)
	if msg := noVersion["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "version") {
		t.Fatalf("kb_delete without a version: %s", msg)
	}
	req := call(t, cs, "kb_delete", map[string]any{"entities": []any{map[string]any{"id": "req-1", "version": 1}}, "created_by": "agent", "source": "test"})
	wantCode(t, req, op.CodeValidation)
	if msg := req["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "agents may not delete req") {
		t.Fatalf("kb_delete of a req: %s", msg)
	}
	wantCode(t, call(t, cs, "kb_delete", map[string]any{"entities": []any{map[string]any{"id": "old-flag", "version": 5}}, "created_by": "agent", "source": "test"}), op.CodeConflict)
	del := data(t, call(t, cs, "kb_delete", map[string]any{"entities": []any{map[string]any{"id": "old-flag", "version": 1}}, "created_by": "agent", "source": "test"}))
	if fmt.Sprint(del["deleted"]) != "[old-flag]" {
		t.Fatalf("kb_delete: %v", del)
	}
}

func TestPanicBecomesToolError(t *testing.T) {
	boom := Tool{Name: "boom", Title: "Boom", Description: "panics", Schema: "kk-entry", ReadOnly: true,
		Run: decoded("kk-entry", func(context.Context, *store.KB, search.EntryParams) (*search.EntryData, error) { panic("kaboom") })}
	cs := connectList(t, newKB(t), append(Tools(), boom))
	env := call(t, cs, "boom", map[string]any{})
	wantCode(t, env, op.CodeInternal)
	if !strings.Contains(env["error"].(map[string]any)["message"].(string), "kaboom") {
		t.Fatalf("panic message lost: %v", env)
	}
	// The server still answers.
	data(t, call(t, cs, "kk_entry", map[string]any{}))
}

func TestResources(t *testing.T) {
	k := newKB(t)
	cs := connect(t, k)
	ctx := context.Background()
	a := data(t, call(t, cs, "manage_graph", map[string]any{"operation": "create", "entityType": "atom", "name": "Auth", "paths": []string{"src/auth/**"}, "knowledge": "Tokens."}))

	list, err := cs.ListResources(ctx, nil)
	if err != nil || len(list.Resources) != 1 || list.Resources[0].URI != EntryURI {
		t.Fatalf("resources/list: %v %v", list, err)
	}
	tmpl, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range tmpl.ResourceTemplates {
		uris = append(uris, r.URITemplate)
	}
	if fmt.Sprint(uris) != "[kk://index/{+path} kk://node/{+id}]" && fmt.Sprint(uris) != "[kk://node/{+id} kk://index/{+path}]" {
		t.Fatalf("templates: %v", uris)
	}
	for uri, want := range map[string]string{
		EntryURI:                        "node_count",
		"kk://node/" + a["id"].(string): "kk_paths",
		"kk://index/graph/index.md":     "Auth",
		"kk://index/index.md":           "graph",
	} {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatalf("%s: %v", uri, err)
		}
		if len(res.Contents) != 1 || res.Contents[0].MIMEType != "text/markdown" || !strings.Contains(res.Contents[0].Text, want) {
			t.Fatalf("%s: %+v", uri, res.Contents)
		}
	}
	for _, uri := range []string{"kk://node/none", "kk://index/nope/index.md", "kk://index/../config.yaml", "kk://index/graph/map-auth.md"} {
		if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err == nil {
			t.Errorf("%s: read, want not found", uri)
		}
	}
}

// TestProtocolVersions sends a raw initialize for every version the SDK
// supports and checks the answer.
func TestProtocolVersions(t *testing.T) {
	k := newKB(t)
	versions := mcp.SupportedProtocolVersions()
	if len(versions) < 5 {
		t.Fatalf("SDK versions: %v", versions)
	}
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			out := session(t, k, []string{
				fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, v),
			})
			var resp struct {
				Result struct {
					ProtocolVersion string `json:"protocolVersion"`
				} `json:"result"`
			}
			if len(out) != 1 || json.Unmarshal([]byte(out[0]), &resp) != nil {
				t.Fatalf("answer: %q", out)
			}
			// A plain initialize asking for a version that negotiates
			// differently is answered with the newest the legacy
			// handshake allows; every other version is echoed.
			if got := resp.Result.ProtocolVersion; got != v && !(v == versions[0] && slices.Contains(versions, got)) {
				t.Fatalf("asked %s, got %s", v, got)
			}
		})
	}
	// The Go client negotiates the newest version.
	cs := connect(t, k)
	if got := cs.InitializeResult().ProtocolVersion; got != versions[0] {
		t.Fatalf("go client negotiated %s, want %s", got, versions[0])
	}
}

// session runs Run over pipes, writes the lines (waiting for one answer per
// line holding an id), and returns every stdout line.
func session(t testing.TB, k *store.KB, lines []string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	inR, inW, _ := os.Pipe()
	outR, outW, _ := os.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, New(k, Options{Version: "test"}), inR, outW, nil)
		_ = outW.Close()
	}()
	expect := 0
	for _, l := range lines {
		if strings.Contains(l, `"id":`) {
			expect++
		}
		if _, err := fmt.Fprintln(inW, l); err != nil {
			t.Fatal(err)
		}
	}
	var out []string
	dec := json.NewDecoder(outR)
	buf := new(bytes.Buffer)
	for len(out) < expect {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			t.Fatalf("reading answers: %v (got %q)", err, out)
		}
		buf.Reset()
		out = append(out, string(raw))
	}
	if err := inW.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if err := inR.Close(); err != nil {
		t.Fatal(err)
	}
	if err := outR.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

func git(t testing.TB, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=kk test", "-c", "user.email=kk@example.invalid", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// TestBranchAware keeps one server running across git checkouts: every
// request serves the branch checked out at that moment.
func TestBranchAware(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	k := newKB(t)
	git(t, k.Root, "init", "-q", "-b", "main")
	cs := connect(t, k)
	data(t, call(t, cs, "manage_graph", map[string]any{"operation": "create", "entityType": "atom", "name": "Mainline", "paths": []string{"src/**"}, "knowledge": "zebra on main"}))
	git(t, k.Root, "add", "-A")
	git(t, k.Root, "commit", "-q", "-m", "main")
	search := func(word string) (string, int) {
		d := data(t, call(t, cs, "kk_search", map[string]any{"query": word}))
		return d["branch"].(string), len(d["hits"].([]any))
	}
	if b, n := search("zebra"); b != "main" || n != 1 {
		t.Fatalf("main: %s %d", b, n)
	}
	git(t, k.Root, "checkout", "-q", "-b", "feature")
	data(t, call(t, cs, "manage_graph", map[string]any{"operation": "create", "entityType": "atom", "name": "Feature", "paths": []string{"lib/**"}, "knowledge": "yak on feature"}))
	git(t, k.Root, "add", "-A")
	git(t, k.Root, "commit", "-q", "-m", "feature")
	if b, n := search("yak"); b != "feature" || n != 1 {
		t.Fatalf("feature: %s %d", b, n)
	}
	git(t, k.Root, "checkout", "-q", "main")
	if b, n := search("yak"); b != "main" || n != 0 {
		t.Fatalf("back on main: %s %d", b, n)
	}
	wantCode(t, call(t, cs, "query_graph", map[string]any{"operation": "get", "entityType": "atom", "id": "map-feature"}), op.CodeNotFound)
}
