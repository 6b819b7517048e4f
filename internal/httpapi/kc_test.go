package httpapi_test

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/httpapi/httpapitest"
)

// TestKnowledgedClient drives the server with knowledged's own kc client,
// which must work against kk serve unchanged. kk neither holds nor builds
// knowledged's code: set KC to the path of a kc binary to run it.
func TestKnowledgedClient(t *testing.T) {
	kc := os.Getenv("KC")
	if kc == "" {
		t.Skip("KC (the path of knowledged's kc binary) is not set")
	}
	s := httpapitest.Start(t, httpapitest.NewRepo(t), nil, "")
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
	if field(out, "job_id") != id || field(out, "status") != "done" || field(out, "path") != "inbox/go-channels.md" {
		t.Fatalf("kc post --wait:\n%s", out)
	}
	out = ok("Mutexes guard shared state.\n", "post", "--title", "Mutexes", "--tags", "golang", "--wait")
	if field(out, "status") != "done" {
		t.Fatalf("kc post from stdin:\n%s", out)
	}
	if out := ok("", "job", "--id", id); field(out, "status") != "done" || field(out, "path") != "inbox/go-channels.md" {
		t.Errorf("kc job:\n%s", out)
	}
	if out := ok("", "get", "--path", "inbox/go-channels.md"); !strings.HasPrefix(out, "=== inbox/go-channels.md ===\n---\ntitle: \"Go Channels\"") {
		t.Errorf("kc get --path:\n%s", out)
	}
	if out := ok("", "get", "--path", "INDEX.md"); !strings.HasPrefix(out, "=== INDEX.md ===\n# Index\n") || !strings.Contains(out, "](inbox/") {
		t.Errorf("kc get --path INDEX.md:\n%s", out)
	}
	if out := ok("", "get", "--query", "channels", "--mode", "raw"); !strings.Contains(out, "=== inbox/go-channels.md ===") {
		t.Errorf("kc get --query --mode raw:\n%s", out)
	}
	if out := ok("", "get", "--tag", "golang"); !strings.Contains(out, "inbox/mutexes.md") || !strings.Contains(out, "title : Go Channels") {
		t.Errorf("kc get --tag:\n%s", out)
	}
	if out := ok("", "get", "--tags", "golang,concurrency", "--match", "all"); !strings.Contains(out, "inbox/go-channels.md") || strings.Contains(out, "mutexes") {
		t.Errorf("kc get --tags --match all:\n%s", out)
	}
	if out := ok("", "tags"); !strings.Contains(out, "golang") || !strings.Contains(out, "2") {
		t.Errorf("kc tags:\n%s", out)
	}
	if out := ok("", "recent"); !strings.Contains(out, "path       : inbox/mutexes.md") || !strings.Contains(out, "job_id     : "+id) {
		t.Errorf("kc recent:\n%s", out)
	}
	if out := ok("", "edit", "--path", "inbox/go-channels.md", "--content", "Channels are typed conduits.", "--wait"); field(out, "status") != "done" {
		t.Errorf("kc edit:\n%s", out)
	}
	if out := ok("", "edit", "--path", "inbox/go-channels.md", "--title", "Go Channels v2", "--description", "Typed", "--wait"); field(out, "status") != "done" {
		t.Errorf("kc edit (metadata):\n%s", out)
	}
	if out := ok("", "get", "--path", "inbox/go-channels.md"); !strings.Contains(out, `title: "Go Channels v2"`) || !strings.Contains(out, "Channels are typed conduits.") {
		t.Errorf("after kc edit:\n%s", out)
	}
	if out := ok("", "delete", "--path", "inbox/go-channels.md", "--wait"); field(out, "status") != "done" {
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
}
