package serve

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestKnowledgedClientOnTheTree drives kk serve's real backend with
// knowledged's own kc client, which must work unchanged. kk neither holds
// nor builds knowledged's code: set KC to the path of a kc binary to run
// it.
func TestKnowledgedClientOnTheTree(t *testing.T) {
	kc := os.Getenv("KC")
	if kc == "" {
		t.Skip("KC (the path of knowledged's kc binary) is not set")
	}
	k := newRepo(t, 0)
	s := start(t, k, nil)
	run := func(stdin string, args ...string) (int, string, string) {
		t.Helper()
		cmd := exec.Command(kc, append([]string{"--server", s.URL + "/"}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, out.String(), errb.String()
	}
	ok := func(stdin string, args ...string) string {
		t.Helper()
		code, out, errs := run(stdin, args...)
		if code != 0 {
			t.Fatalf("kc %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
		}
		return out
	}
	field := func(out, name string) string {
		for _, line := range strings.Split(out, "\n") {
			if v, found := strings.CutPrefix(line, name); found {
				return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
			}
		}
		return ""
	}

	out := ok("", "post", "--content", "Channels pass values between goroutines.", "--title", "Go Channels", "--tags", "golang,concurrency", "--wait")
	id := strings.SplitN(out, "\n", 2)[0]
	const channels = "inbox/map-go-channels.md"
	if field(out, "job_id") != id || field(out, "status") != "done" || field(out, "path") != channels {
		t.Fatalf("kc post --wait:\n%s", out)
	}
	out = ok("Mutexes guard shared state.\n", "post", "--title", "Mutexes", "--tags", "golang", "--wait")
	if field(out, "status") != "done" || field(out, "path") != "inbox/map-mutexes.md" {
		t.Fatalf("kc post from stdin:\n%s", out)
	}
	if out := ok("", "job", "--id", id); field(out, "status") != "done" || field(out, "path") != channels {
		t.Errorf("kc job:\n%s", out)
	}
	if out := ok("", "get", "--path", channels); !strings.HasPrefix(out, "=== "+channels+" ===\n---\ntype: map\ntitle: Go Channels\n") {
		t.Errorf("kc get --path:\n%s", out)
	}
	if out := ok("", "get", "--path", "INDEX.md"); !strings.HasPrefix(out, "=== INDEX.md ===\n# Index\n") || !strings.Contains(out, "](inbox/") {
		t.Errorf("kc get --path INDEX.md:\n%s", out)
	}
	if out := ok("", "get", "--query", "channels", "--mode", "raw"); !strings.Contains(out, "=== "+channels+" ===") || strings.Contains(out, "mutexes") {
		t.Errorf("kc get --query --mode raw:\n%s", out)
	}
	if out := ok("", "get", "--tag", "golang"); !strings.Contains(out, "inbox/map-mutexes.md") || !strings.Contains(out, "title : Go Channels") {
		t.Errorf("kc get --tag:\n%s", out)
	}
	if out := ok("", "get", "--tags", "golang,concurrency", "--match", "all"); !strings.Contains(out, channels) || strings.Contains(out, "mutexes") {
		t.Errorf("kc get --tags --match all:\n%s", out)
	}
	if out := ok("", "tags"); !strings.Contains(out, "golang") || !strings.Contains(out, "2") {
		t.Errorf("kc tags:\n%s", out)
	}
	if out := ok("", "recent"); !strings.Contains(out, "path       : inbox/map-mutexes.md") || !strings.Contains(out, "job_id     : "+id) {
		t.Errorf("kc recent:\n%s", out)
	}
	if out := ok("", "edit", "--path", channels, "--content", "Channels are typed conduits.", "--wait"); field(out, "status") != "done" {
		t.Errorf("kc edit:\n%s", out)
	}
	if out := ok("", "edit", "--path", channels, "--title", "Go Channels v2", "--description", "Typed", "--wait"); field(out, "status") != "done" {
		t.Errorf("kc edit (metadata):\n%s", out)
	}
	if out := ok("", "get", "--path", ".ai/kenkeep/nodes/"+channels); !strings.Contains(out, "title: Go Channels v2\n") || !strings.Contains(out, "Channels are typed conduits.") {
		t.Errorf("after kc edit:\n%s", out)
	}
	if out := ok("", "delete", "--path", channels, "--wait"); field(out, "status") != "done" {
		t.Errorf("kc delete:\n%s", out)
	}
	// kc reports a failed job and exits 0; a server error exits 1.
	if out := ok("", "delete", "--path", "nope/x.md", "--wait"); field(out, "status") != "failed" || field(out, "error") != "file not found: nope/x.md" {
		t.Errorf("kc delete of a missing note:\n%s", out)
	}
	if code, _, errs := run("", "delete", "--path", "../x.md"); code != 1 || !strings.Contains(errs, "path must stay within the repository: ../x.md") {
		t.Errorf("kc delete ../x.md: %d %s", code, errs)
	}
	if code, _, errs := run("", "get", "--query", "channels"); code != 1 || !strings.Contains(errs, "LLM provider is not configured") {
		t.Errorf("kc get --query (no model): %d %s", code, errs)
	}
	clean(t, k)
}

// TestMCPKnowledgedOnTheTree drives kk serve's real backend with
// knowledged's own MCP server, mcp-knowledged, as an agent would: it
// starts the binary MCP_KNOWLEDGED names with KNOWLEDGED_URL set to the
// server, and calls each of its tools over stdio. kk neither holds nor
// builds knowledged's code.
func TestMCPKnowledgedOnTheTree(t *testing.T) {
	bin := os.Getenv("MCP_KNOWLEDGED")
	if bin == "" {
		t.Skip("MCP_KNOWLEDGED (the path of knowledged's mcp-knowledged binary) is not set")
	}
	k := newRepo(t, 0)
	s := start(t, k, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "KNOWLEDGED_URL="+s.URL)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "kk-test", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close() }()
	call := func(tool string, args map[string]any) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		var sb strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				sb.WriteString(tc.Text)
			}
		}
		return sb.String(), res.IsError
	}
	ok := func(tool string, args map[string]any) string {
		t.Helper()
		out, isErr := call(tool, args)
		if isErr {
			t.Fatalf("%s %v: tool error\n%s", tool, args, out)
		}
		return out
	}

	const channels = "inbox/map-go-channels.md"
	out := ok("post_content", map[string]any{"content": "Channels pass values between goroutines.", "title": "Go Channels", "tags": "golang,concurrency", "wait": true})
	if !strings.Contains(out, "status: done\npath: "+channels) {
		t.Fatalf("post_content wait:\n%s", out)
	}
	out = ok("post_content", map[string]any{"content": "Mutexes guard shared state.", "title": "Mutexes", "tags": "golang"})
	id, found := strings.CutPrefix(strings.SplitN(out, "\n", 2)[0], "job_id: ")
	if !found || !strings.Contains(out, "status: ") {
		t.Fatalf("post_content:\n%s", out)
	}
	deadline := time.Now().Add(time.Minute)
	for out = ok("check_job", map[string]any{"job_id": id}); !strings.Contains(out, "done"); out = ok("check_job", map[string]any{"job_id": id}) {
		if time.Now().After(deadline) {
			t.Fatalf("check_job never done:\n%s", out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(out, "inbox/map-mutexes.md") {
		t.Errorf("check_job:\n%s", out)
	}
	if out := ok("get_content", map[string]any{"path": channels}); !strings.HasPrefix(out, "=== "+channels+" ===\n---\ntype: map\ntitle: Go Channels\n") {
		t.Errorf("get_content path:\n%s", out)
	}
	if out := ok("get_content", map[string]any{"path": "INDEX.md"}); !strings.HasPrefix(out, "=== INDEX.md ===\n# Index\n") || !strings.Contains(out, "]("+channels+")") {
		t.Errorf("get_content INDEX.md:\n%s", out)
	}
	if out := ok("get_content", map[string]any{"query": "goroutines", "mode": "raw"}); !strings.Contains(out, channels) || strings.Contains(out, "mutexes") {
		t.Errorf("get_content query raw:\n%s", out)
	}
	if out := ok("get_content", map[string]any{"tags": "golang,concurrency", "match": "all", "mode": "raw"}); !strings.Contains(out, channels) || strings.Contains(out, "mutexes") {
		t.Errorf("get_content tags all:\n%s", out)
	}
	if out := ok("get_content", map[string]any{"tags": "golang"}); !strings.Contains(out, "inbox/map-mutexes.md") || !strings.Contains(out, channels) {
		t.Errorf("get_content tags (metadata):\n%s", out)
	}
	if out := ok("edit_content", map[string]any{"path": channels, "content": "Channels are typed conduits.", "title": "Go Channels v2", "wait": true}); !strings.Contains(out, "done") {
		t.Errorf("edit_content:\n%s", out)
	}
	if out := ok("get_content", map[string]any{"path": channels}); !strings.Contains(out, "title: Go Channels v2\n") || !strings.Contains(out, "Channels are typed conduits.") {
		t.Errorf("after edit_content:\n%s", out)
	}
	if out := ok("delete_content", map[string]any{"path": channels, "wait": true}); !strings.Contains(out, "done") {
		t.Errorf("delete_content:\n%s", out)
	}
	if out, isErr := call("get_content", map[string]any{"path": channels}); !isErr || !strings.Contains(out, "file not found") {
		t.Errorf("get_content of the deleted note: error %v\n%s", isErr, out)
	}
	if out, isErr := call("get_content", map[string]any{"query": "channels"}); !isErr || !strings.Contains(out, "LLM provider is not configured") {
		t.Errorf("get_content synthesize without a model: error %v\n%s", isErr, out)
	}
	clean(t, k)
}
