package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/op"
	"github.com/kk-project/kk/internal/store"
)

// kkBin is the kk binary the end-to-end tests run, built into binDir on
// first need (so that fuzzing and unit-test runs skip the build); "" when
// the build failed, and those tests then fail with buildErr.
var (
	binDir    string
	buildOnce sync.Once
	kkBin     string
	buildErr  error
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "kk-mcp-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	benchCleanup()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

func needBinary(t testing.TB) {
	t.Helper()
	buildOnce.Do(func() {
		bin := filepath.Join(binDir, "kk")
		out, err := exec.Command("go", "build", "-o", bin, "github.com/kk-project/kk/cmd/kk").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("building kk: %v\n%s", err, out)
			return
		}
		kkBin = bin
	})
	if kkBin == "" {
		t.Fatal(buildErr)
	}
}

// connectBinary starts `kk mcp` for k as a subprocess and connects a go-sdk
// client to it through CommandTransport.
func connectBinary(t testing.TB, k *store.KB) *mcp.ClientSession {
	t.Helper()
	needBinary(t)
	cmd := exec.Command(kkBin, "--root", k.Root, "mcp", "--log-file")
	cmd.Env = append(os.Environ(), "KK_ROOT=")
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting to kk mcp: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func TestCommandTransport(t *testing.T) {
	k := newKB(t)
	cs := connectBinary(t, k)
	if got, want := cs.InitializeResult().ProtocolVersion, mcp.SupportedProtocolVersions()[0]; got != want {
		t.Fatalf("negotiated %s, want %s", got, want)
	}
	if info := cs.InitializeResult().ServerInfo; info.Name != "kk" {
		t.Fatalf("server info: %+v", info)
	}
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(list.Tools) != len(Tools()) {
		t.Fatalf("tools/list: %d tools, %v", len(list.Tools), err)
	}
	a := data(t, call(t, cs, "manage_graph", map[string]any{"operation": "create", "entityType": "atom", "name": "Auth", "paths": []string{"src/auth/**"}, "knowledge": "Tokens rotate."}))
	c := data(t, call(t, cs, "query_graph", map[string]any{"operation": "context", "paths": []string{"src/auth/x.go"}}))
	if b, _ := json.Marshal(c); !strings.Contains(string(b), a["id"].(string)) {
		t.Fatalf("context: %s", b)
	}
	wantCode(t, call(t, cs, "manage_graph", map[string]any{"operation": "update", "entityType": "atom", "id": a["id"], "version": 7, "name": "x"}), op.CodeConflict)
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: EntryURI})
	if err != nil || !strings.Contains(res.Contents[0].Text, "node_count") {
		t.Fatalf("kk://entry: %v %v", res, err)
	}
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	// --log-file sent the log to _logs/mcp-<date>.log.
	logs, _ := filepath.Glob(filepath.Join(k.LogsDir(), "mcp-*.log"))
	if len(logs) != 1 {
		t.Fatalf("log files: %v", logs)
	}
	if b, _ := os.ReadFile(logs[0]); !strings.Contains(string(b), "tool=manage_graph") {
		t.Fatalf("log: %s", b)
	}
}

// TestStdoutHygiene runs the binary over raw pipes with a session calling
// every tool, failing calls and an unknown tool included,
// and checks that every stdout line is one JSON-RPC message.
func TestStdoutHygiene(t *testing.T) {
	needBinary(t)
	k := newKB(t)
	lines := []string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"manage_graph","arguments":{"operation":"create","entityType":"atom","name":"A","paths":["a/**"],"knowledge":"k"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"manage_graph","arguments":{"operation":"create","entityType":"atom","name":"B","paths":["../b"]}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"query_graph","arguments":{"operation":"context","paths":"a/x.go"}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"query_graph","arguments":{"operation":"get","entityType":"atom","id":"nope"}}}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"manage_changelog","arguments":{"operation":"search","parentType":"atom","parentId":"map-a"}}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"kb_upsert","arguments":{"entities":[{"id":"R1","type":"req","title":"r"}],"created_by":"t","source":"t"}}}`,
		`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"kb_upsert","arguments":{"entities":[{"id":"R1","type":"nope"}],"created_by":"t","source":"t"}}}`,
		`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"kb_query","arguments":{"type":"req"}}}`,
		`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"kb_delete","arguments":{"entities":["req-r1"],"created_by":"t","source":"t"}}}`,
		`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"kb_check","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"kk_search","arguments":{"query":"atom knowledge"}}}`,
		`{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"kk_read","arguments":{"id":"map-a"}}}`,
		`{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"kk_read","arguments":{"path":"../x"}}}`,
		`{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"kk_entry","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":17,"method":"resources/read","params":{"uri":"kk://node/none"}}`,
		`{"jsonrpc":"2.0","id":18,"method":"resources/read","params":{"uri":"kk://entry"}}`,
	}
	cmd := exec.Command(kkBin, "--root", k.Root, "mcp")
	cmd.Env = append(os.Environ(), "KK_ROOT=")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	answered := map[float64]bool{}
	var isError, rpcError []float64
	for i, l := range lines {
		if _, err := fmt.Fprintln(stdin, l); err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			continue // a notification, no answer
		}
		// Read this request's answer before sending the next, so the
		// calls run one after another.
		if !sc.Scan() {
			t.Fatalf("stdout ended after %d answers: %v\nstderr:\n%s", len(answered), sc.Err(), stderr.String())
		}
		var msg struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      *float64        `json:"id"`
			Result  json.RawMessage `json:"result"`
			Error   json.RawMessage `json:"error"`
		}
		line := sc.Bytes()
		if err := json.Unmarshal(line, &msg); err != nil || msg.JSONRPC != "2.0" || msg.ID == nil || (msg.Result == nil) == (msg.Error == nil) {
			t.Fatalf("stdout line is not a JSON-RPC answer: %q (%v)", line, err)
		}
		answered[*msg.ID] = true
		if msg.Error != nil {
			rpcError = append(rpcError, *msg.ID)
		}
		var r struct {
			IsError bool `json:"isError"`
		}
		if json.Unmarshal(msg.Result, &r) == nil && r.IsError {
			isError = append(isError, *msg.ID)
		}
	}
	if err := stdin.Close(); err != nil {
		t.Fatal(err)
	}
	if sc.Scan() {
		t.Fatalf("unexpected extra stdout: %q", sc.Text())
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("kk mcp: %v\n%s", err, stderr.String())
	}
	if len(answered) != len(lines)-1 {
		t.Fatalf("answered %d of %d requests", len(answered), len(lines)-1)
	}
	if fmt.Sprint(isError) != "[3 5 8 10 14]" || fmt.Sprint(rpcError) != "[16 17]" {
		t.Fatalf("tool errors for ids %v, want [3 5 8 10 14]; JSON-RPC errors for %v, want [16 17]\nstderr:\n%s", isError, rpcError, stderr.String())
	}
	// Harnesses show stderr as errors: a session with nothing wrong on the
	// server's side leaves it empty.
	if stderr.Len() > 0 {
		t.Fatalf("stderr is not empty:\n%s", stderr.String())
	}
}

// TestPipedRequestsAllAnswered: a client that writes its requests and
// closes stdin at once still gets every answer before the server exits.
func TestPipedRequestsAllAnswered(t *testing.T) {
	needBinary(t)
	k := newKB(t)
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"kb_upsert","arguments":{"entities":[{"id":"R1","type":"req","title":"r"}],"created_by":"t","source":"t"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"kb_check","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`,
	}, "\n") + "\n"
	cmd := exec.Command(kkBin, "--root", k.Root, "mcp")
	cmd.Env = append(os.Environ(), "KK_ROOT=")
	cmd.Stdin = strings.NewReader(in)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kk mcp: %v\n%s", err, stderr.String())
	}
	ids := map[float64]bool{}
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		var msg struct {
			ID *float64 `json:"id"`
		}
		if err := json.Unmarshal([]byte(line), &msg); err != nil || msg.ID == nil {
			t.Fatalf("not an answer: %q", line)
		}
		ids[*msg.ID] = true
	}
	if len(ids) != 4 {
		t.Fatalf("answers for %v, want ids 1 to 4\nstderr:\n%s", ids, stderr.String())
	}
}

// TestManyServersUpsert: 4 kk mcp processes × 25 kb_upsert calls each, all
// at once, leave 100 entities and 100 audit records.
func TestManyServersUpsert(t *testing.T) {
	k := newKB(t)
	const servers, calls = 4, 25
	sessions := make([]*mcp.ClientSession, servers)
	for i := range sessions {
		sessions[i] = connectBinary(t, k)
	}
	var wg sync.WaitGroup
	errs := make(chan string, servers*calls)
	for s, cs := range sessions {
		wg.Go(func() {
			for c := range calls {
				env := callRaw(cs, "kb_upsert", map[string]any{
					"entities":   []any{map[string]any{"id": fmt.Sprintf("S%d-C%d", s, c), "type": "req", "title": fmt.Sprintf("server %d call %d", s, c)}},
					"created_by": fmt.Sprintf("server-%d", s), "source": "many-servers test",
				})
				if env["success"] != true {
					errs <- fmt.Sprintf("server %d call %d: %v", s, c, env)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	q := data(t, call(t, sessions[0], "kb_query", map[string]any{"type": "req", "limit": 500}))
	if q["total"] != float64(servers*calls) {
		t.Fatalf("entities: %v, want %d", q["total"], servers*calls)
	}
	branch, err := index.CurrentBranch(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := index.ReadAudit(k, branch)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1+servers*calls { // kk init's, then one per call
		t.Fatalf("audit records: %d, want %d", len(recs), 1+servers*calls)
	}
}

// TestManyServersVersionRace: 4 servers update one atom with the same
// version at once; each round exactly one wins and the others get CONFLICT.
func TestManyServersVersionRace(t *testing.T) {
	k := newKB(t)
	const servers, rounds = 4, 3
	sessions := make([]*mcp.ClientSession, servers)
	for i := range sessions {
		sessions[i] = connectBinary(t, k)
	}
	a := data(t, call(t, sessions[0], "manage_graph", map[string]any{"operation": "create", "entityType": "atom", "name": "Contended", "paths": []string{"x/**"}, "knowledge": "start"}))
	id := a["id"].(string)
	for v := 1; v <= rounds; v++ {
		results := make([]map[string]any, servers)
		var wg sync.WaitGroup
		for s, cs := range sessions {
			wg.Go(func() {
				results[s] = callRaw(cs, "manage_graph", map[string]any{"operation": "update", "entityType": "atom", "id": id, "version": v,
					"knowledge": fmt.Sprintf("server %d round %d", s, v), "knowledgeMode": "append", "lastTaskId": fmt.Sprint("T-", s)})
			})
		}
		wg.Wait()
		wins := 0
		for _, r := range results {
			switch {
			case r["success"] == true:
				wins++
			case code(r) != op.CodeConflict:
				t.Fatalf("round %d: %v", v, r)
			}
		}
		if wins != 1 {
			t.Fatalf("round %d: %d successes, want 1: %v", v, wins, results)
		}
	}
	got := data(t, call(t, sessions[1], "query_graph", map[string]any{"operation": "get", "entityType": "atom", "id": id}))
	if got["version"] != float64(rounds+1) || strings.Count(got["knowledge"].(string), "round") != rounds {
		t.Fatalf("after the race: %v", got)
	}
}

// callRaw is call without testing.T, for goroutines.
func callRaw(cs *mcp.ClientSession, name string, args any) map[string]any {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return map[string]any{"success": false, "error": map[string]any{"code": "CALL", "message": err.Error()}}
	}
	var env map[string]any
	var text string
	if len(res.Content) == 1 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			text = tc.Text
		}
	}
	if err := json.Unmarshal([]byte(text), &env); err != nil {
		return map[string]any{"success": false, "error": map[string]any{"code": "DECODE", "message": err.Error()}}
	}
	return env
}

// TestReadAfterCLIWrite runs `kk mcp` and, beside it, `kk node write` and
// `kk upsert` as separate processes: an MCP read made right after each
// write sees it (the write's transaction syncs the index, and the server
// notices the index's new generation on its next read), with the version
// the write left.
func TestReadAfterCLIWrite(t *testing.T) {
	k := newKB(t)
	cs := connectBinary(t, k)
	// The server reads once first, so that its view of the tree is warm.
	wantCode(t, call(t, cs, "kk_read", map[string]any{"id": "practice-fresh"}), op.CodeNotFound)
	kk := func(stdin string, args ...string) {
		t.Helper()
		cmd := exec.Command(kkBin, append([]string{"--root", k.Root}, args...)...)
		cmd.Env = append(os.Environ(), "KK_ROOT=")
		cmd.Stdin = strings.NewReader(stdin)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("kk %v: %v\n%s", args, err, out)
		}
	}
	for i := range 3 {
		body := fmt.Sprintf("Round %d of fresh knowledge.\n", i)
		kk(body, "node", "write", "practice", "fresh", "--summary", fmt.Sprintf("round %d", i), "--update")
		got := data(t, call(t, cs, "kk_read", map[string]any{"id": "practice-fresh"}))
		if got["description"] != fmt.Sprintf("round %d", i) || got["version"] != float64(i+1) {
			t.Fatalf("round %d: kk_read right after the write = %v", i, got)
		}
		hits := data(t, call(t, cs, "kk_search", map[string]any{"query": "fresh knowledge"}))
		if b, _ := json.Marshal(hits); !strings.Contains(string(b), "practice-fresh") {
			t.Fatalf("round %d: kk_search right after the write: %s", i, b)
		}
	}
	kk("", "upsert", "--type", "req", "--id", "REQ-1", "--title", "Users log in")
	q := data(t, call(t, cs, "kb_query", map[string]any{"id": "req-1"}))
	if q["total"] != float64(1) {
		t.Fatalf("kb_query right after kk upsert: %v", q)
	}
}
