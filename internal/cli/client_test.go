package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/httpapi/httpapitest"
	"github.com/kk-project/kk/internal/llm"
)

// runClient calls kk client in-process against server with env.
func runClient(t *testing.T, server string, env map[string]string, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	streams := IO{In: strings.NewReader(stdin), Out: &out, Err: &errb}
	getenv := func(k string) string {
		if k == "KK_SERVER" {
			return server
		}
		return env[k]
	}
	code = Run(context.Background(), append([]string{"client"}, args...), streams, getenv)
	return code, out.String(), errb.String()
}

func TestClientWriteReadCycle(t *testing.T) {
	clientPollInterval = time.Millisecond
	s := httpapitest.Start(t, httpapitest.NewRepo(t), nil, "")
	ok := func(stdin string, args ...string) string {
		t.Helper()
		code, out, errs := runClient(t, s.URL, nil, stdin, args...)
		if code != 0 {
			t.Fatalf("kk client %s: exit %d\n%s", strings.Join(args, " "), code, errs)
		}
		return out
	}

	// post without --wait prints the job id; job then reports it.
	id := strings.TrimSpace(ok("Channels pass values between goroutines.\n", "post", "--title", "Go Channels", "--tags", "golang, concurrency"))
	if _, err := s.Queue.Get(id); !err {
		t.Fatalf("post printed %q, not a job id", id)
	}
	var final string
	for range 2000 {
		if final = ok("", "job", id); strings.Contains(final, "\tdone\t") {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if final != id+"\tdone\tinbox/go-channels.md\n" {
		t.Fatalf("job: %q", final)
	}

	// post --wait, from a file, prints the job's end.
	file := filepath.Join(t.TempDir(), "note.md")
	if err := os.WriteFile(file, []byte("Mutexes guard shared state.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := ok("", "post", "--file", file, "--title", "Mutexes", "--tags", "golang", "--wait")
	if !strings.HasSuffix(out, "\tdone\tinbox/mutexes.md\n") {
		t.Errorf("post --wait: %q", out)
	}

	if got := ok("", "get", "inbox/go-channels.md"); !strings.Contains(got, `title: "Go Channels"`) || !strings.HasSuffix(got, "\n\nChannels pass values between goroutines.\n") {
		t.Errorf("get: %q", got)
	}
	if got := ok("", "get", ".ai/kenkeep/nodes/inbox/mutexes.md"); !strings.Contains(got, "Mutexes guard") {
		t.Errorf("get by repository path: %q", got)
	}

	// Content edit, metadata-only edit, then delete, each waited for.
	if got := ok("", "edit", "inbox/go-channels.md", "--content", "Channels are typed conduits.", "--wait"); !strings.HasSuffix(got, "\tdone\tinbox/go-channels.md\n") {
		t.Errorf("edit: %q", got)
	}
	ok("", "edit", "inbox/go-channels.md", "--description", "Typed conduits", "--tags", "golang,channels", "--wait")
	got := ok("", "get", "inbox/go-channels.md")
	for _, want := range []string{`description: "Typed conduits"`, `tags: ["golang","channels"]`, "Channels are typed conduits."} {
		if !strings.Contains(got, want) {
			t.Errorf("after the edits the note lacks %q:\n%s", want, got)
		}
	}

	if got := ok("", "search", "typed", "conduits"); !strings.HasPrefix(got, "=== inbox/go-channels.md ===\n---\n") {
		t.Errorf("search: %q", got)
	}
	if got := ok("", "search", "--tag", "golang"); got != "inbox/go-channels.md\tGo Channels\tchannels,golang\ninbox/mutexes.md\tMutexes\tgolang\n" && got != "inbox/mutexes.md\tMutexes\tgolang\ninbox/go-channels.md\tGo Channels\tchannels,golang\n" {
		t.Errorf("search --tag: %q", got)
	}
	if got := ok("", "search", "--tag", "golang,channels", "--all"); got != "inbox/go-channels.md\tGo Channels\tchannels,golang\n" {
		t.Errorf("search --tag --all: %q", got)
	}
	if got := ok("", "search", "--tag", "channels", "--raw"); !strings.HasPrefix(got, "=== inbox/go-channels.md ===\n") {
		t.Errorf("search --tag --raw: %q", got)
	}
	if got := ok("", "tags"); got != "channels\t1\ngolang\t2\n" {
		t.Errorf("tags: %q", got)
	}
	lines := strings.Split(strings.TrimSpace(ok("", "recent", "--limit", "5")), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "\tinbox/mutexes.md\tgolang") || !strings.Contains(lines[1], id+"\tinbox/go-channels.md\tgolang,channels") {
		t.Errorf("recent: %q", lines)
	}
	if _, err := time.Parse(time.RFC3339, strings.Split(lines[0], "\t")[0]); err != nil {
		t.Errorf("recent's time: %v", err)
	}

	if got := ok("", "delete", "inbox/go-channels.md", "--wait"); !strings.HasSuffix(got, "\tdone\tinbox/go-channels.md\n") {
		t.Errorf("delete: %q", got)
	}
}

func TestClientFailuresExitNonZero(t *testing.T) {
	clientPollInterval = time.Millisecond
	s := httpapitest.Start(t, httpapitest.NewRepo(t), nil, "")
	for _, tc := range []struct {
		args   []string
		stdin  string
		code   int
		stdout string
		stderr string
	}{
		// A job that fails: the job is printed, the reason goes to stderr.
		{args: []string{"delete", "nope/x.md", "--wait"}, code: 1, stdout: "\tfailed\tnope/x.md\n", stderr: "failed: file not found: nope/x.md\n"},
		{args: []string{"delete", "../x.md"}, code: 1, stderr: "kk: DELETE /content: HTTP 400: path must stay within the repository: ../x.md\n"},
		{args: []string{"get", "missing.md"}, code: 1, stderr: "kk: GET /content?path=missing.md: HTTP 404: file not found: missing.md\n"},
		{args: []string{"job", "nope"}, code: 1, stderr: "kk: GET /jobs/nope: HTTP 404: job not found: nope\n"},
		{args: []string{"search", "--answer", "why"}, code: 1, stderr: "HTTP 503: LLM provider is not configured\n"},
		{args: []string{"ask", "why?"}, code: 1, stderr: "HTTP 503: LLM provider is not configured\n"},
		{args: []string{"post"}, stdin: " \n", code: 2, stderr: "kk: post needs the note's text"},
		{args: []string{"edit", "a.md"}, code: 2, stderr: "kk: edit needs new text"},
		{args: []string{"search"}, code: 2, stderr: "kk: search needs words to look for, or --tag"},
		{args: []string{"search", "x", "--tag", "a"}, code: 2, stderr: "kk: search takes words or --tag, not both"},
		{args: []string{"job"}, code: 2, stderr: "kk: job needs the job's id: the argument or --id"},
		{args: []string{"tags", "--server", "ftp://x"}, code: 2, stderr: `kk: --server "ftp://x" must be an http:// or https:// URL`},
		{args: []string{"tags", "--server", "http://127.0.0.1:1"}, code: 1, stderr: "connection refused"},
	} {
		code, out, errs := runClient(t, s.URL, nil, tc.stdin, tc.args...)
		if code != tc.code || !strings.Contains(out, tc.stdout) || !strings.Contains(errs, tc.stderr) || (tc.stdout == "" && out != "") {
			t.Errorf("kk client %s: exit %d, stdout %q, stderr %q; want %d, %q, %q", strings.Join(tc.args, " "), code, out, errs, tc.code, tc.stdout, tc.stderr)
		}
	}

	// With --json the error is JSON too, of code HTTP_ERROR.
	code, _, errs := runClient(t, s.URL, nil, "", "--json", "get", "missing.md")
	var e struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if json.Unmarshal([]byte(errs), &e) != nil || code != 1 || e.Error.Code != "HTTP_ERROR" || !strings.Contains(e.Error.Message, "HTTP 404") {
		t.Errorf("--json error: %d %s", code, errs)
	}
}

func TestClientJSONFields(t *testing.T) {
	clientPollInterval = time.Millisecond
	model := httpapitest.FakeOllama(t, map[string]string{
		"sources": `{"answer":"Use channels.","sources":[]}`,
		"title":   `{"title":"Channels","answer":"They pass values.","tags":["golang"]}`,
	}, 0)
	p, err := llm.New(llm.Config{Provider: "ollama", Model: "fake", URL: model}, llm.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	s := httpapitest.Start(t, httpapitest.NewRepo(t), &httpapitest.GitBackend{Provider: p}, "")
	keys := func(args ...string) []string {
		t.Helper()
		code, out, errs := runClient(t, s.URL, nil, "", append([]string{"--json"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: %d %s", args, code, errs)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		var k []string
		for key := range m {
			k = append(k, key)
		}
		slices.Sort(k)
		return k
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"post", "--content", "Channels pass values.", "--title", "Channels", "--tags", "golang", "--wait"}, "job_id path schema_version status"},
		{[]string{"job", ""}, "job_id path schema_version status"},
		{[]string{"get", "inbox/channels.md"}, "content path schema_version"},
		{[]string{"search", "channels"}, "docs schema_version"},
		{[]string{"search", "--tag", "golang"}, "notes schema_version"},
		{[]string{"search", "--answer", "channels"}, "answer query schema_version sources"},
		{[]string{"tags"}, "schema_version tags"},
		{[]string{"recent"}, "posts schema_version"},
		{[]string{"ask", "what", "are", "channels?"}, "answer question schema_version tags title"},
	} {
		if tc.args[0] == "job" {
			_, out, _ := runClient(t, s.URL, nil, "", "recent")
			tc.args[1] = strings.Split(out, "\t")[1] // the id of the note just posted
		}
		if got := strings.Join(keys(tc.args...), " "); got != tc.want {
			t.Errorf("kk client --json %s: keys %q, want %q", strings.Join(tc.args, " "), got, tc.want)
		}
	}
}

func TestClientToken(t *testing.T) {
	s := httpapitest.Start(t, httpapitest.NewRepo(t), nil, "t0k3n")
	if code, _, errs := runClient(t, s.URL, nil, "", "tags"); code != 1 || !strings.Contains(errs, "HTTP 401: missing or wrong bearer token") {
		t.Errorf("without the token: %d %s", code, errs)
	}
	if code, _, errs := runClient(t, s.URL, map[string]string{"KK_SERVE_TOKEN": "t0k3n"}, "", "tags"); code != 0 {
		t.Errorf("token from the environment: %d %s", code, errs)
	}
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("t0k3n\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runClient(t, s.URL, map[string]string{"KK_SERVE_TOKEN": "wrong"}, "", "tags", "--token-file", file); code != 0 {
		t.Errorf("token from a file: %d %s", code, errs)
	}
	if code, _, errs := runClient(t, s.URL, nil, "", "tags", "--token-file", filepath.Join(t.TempDir(), "none")); code != 1 || !strings.Contains(errs, "--token-file: open") {
		t.Errorf("missing token file: %d %s", code, errs)
	}
	// A token file others can read, or of two lines, is refused.
	open := filepath.Join(t.TempDir(), "open")
	if err := os.WriteFile(open, []byte("t0k3n\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runClient(t, s.URL, nil, "", "tags", "--token-file", open); code != 1 || !strings.Contains(errs, "the token file "+open+" is open to other users (mode 0644); it must be private: run chmod 600 "+open) {
		t.Errorf("world-readable token file: %d %s", code, errs)
	}
	two := filepath.Join(t.TempDir(), "two")
	if err := os.WriteFile(two, []byte("t0k3n\nmore\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runClient(t, s.URL, nil, "", "tags", "--token-file", two); code != 1 || !strings.Contains(errs, "the token file "+two+" holds 2 lines") {
		t.Errorf("two-line token file: %d %s", code, errs)
	}
}
