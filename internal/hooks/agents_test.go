package hooks

// Real-process tests of what a coding agent meets: `kk hook …` run as the
// harness runs it (a kk child process, the payload on its stdin, in a real
// git repository), in the situations an agent's session brings about.

import (
	"bytes"
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

	"github.com/kk-project/kk/internal/session"
	"github.com/kk-project/kk/internal/store"
)

var (
	agentBinOnce sync.Once
	agentBin     string
	agentBinErr  error
)

// agentKK builds kk once for the tests of this file.
func agentKK(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	agentBinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kk-agents-test-")
		if err != nil {
			agentBinErr = err
			return
		}
		bin := filepath.Join(dir, "kk")
		if out, err := exec.Command("go", "build", "-o", bin, "github.com/kk-project/kk/cmd/kk").CombinedOutput(); err != nil {
			agentBinErr = err
			agentBin = string(out)
			return
		}
		agentBin = bin
	})
	if agentBinErr != nil {
		t.Fatalf("building kk: %v\n%s", agentBinErr, agentBin)
	}
	return agentBin
}

// agentEnv is the environment of the test's processes: no KK_* of the
// test's own, a git identity.
func agentEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "KK_") || strings.HasPrefix(kv, "GIT_") || strings.HasPrefix(kv, "KENKEEP_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
}

// agentRun runs a command in dir and fails the test when it fails.
func agentRun(t *testing.T, dir, stdin string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = agentEnv()
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

// agentRepo is a git repository with kk initialized for Claude Code and
// committed.
func agentRepo(t *testing.T) string {
	t.Helper()
	kk := agentKK(t)
	root := t.TempDir()
	agentRun(t, root, "", "git", "init", "-q", "-b", "main")
	agentRun(t, root, "", kk, "init", "--harnesses", "claude", "--no-git-hooks")
	writeFile(t, filepath.Join(root, "src", "app.go"), "package app\n")
	agentRun(t, root, "", "git", "add", "-A")
	agentRun(t, root, "", "git", "commit", "-qm", "init")
	return root
}

// agentHook runs `kk hook <event> --harness <harness>` in dir with payload
// on stdin, as a harness does, with extra environment variables, and
// returns its stdout and stderr. The hook must exit 0.
func agentHook(t *testing.T, dir, event, harnessID, payload string, env ...string) (stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(agentKK(t), "hook", event, "--harness", harnessID)
	cmd.Dir = dir
	cmd.Env = append(agentEnv(), env...)
	cmd.Stdin = strings.NewReader(payload)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("kk hook %s: %v\nstdout %s\nstderr %s", event, err, out.String(), errb.String())
	}
	return out.String(), errb.String()
}

// TestGraphHintLeavesTheGitIndexAlone: the end-of-turn graph hint looks at
// the work tree with git status, which by default refreshes the index and
// so takes .git/index.lock: a `git commit` or `git add` the agent (or a
// second agent session, or the user) runs at that moment then fails with
// "Unable to create '.git/index.lock': File exists". The hook only reads:
// the index file is left as it was.
func TestGraphHintLeavesTheGitIndexAlone(t *testing.T) {
	root := agentRepo(t)
	payload := `{"session_id":"` + sid + `","cwd":"` + root + `","hook_event_name":"Stop"}`
	agentHook(t, root, "session-start", "claude", payload)
	// A tracked file the session touched without changing it: git status
	// would write the refreshed stat data into the index.
	app := filepath.Join(root, "src", "app.go")
	fi, err := os.Stat(app)
	if err != nil {
		t.Fatal(err)
	}
	later := fi.ModTime().Add(5e9)
	if err := os.Chtimes(app, later, later); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(root, ".git", "index")
	before, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	out, errOut := agentHook(t, root, "graph-hint", "claude", payload)
	if out != "" || errOut != "" {
		t.Fatalf("graph-hint printed %q, %q", out, errOut)
	}
	after, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Fatal("graph-hint rewrote .git/index: it took the index lock an agent's git command needs")
	}
}

// claudeTranscript writes a Claude Code transcript of one exchange and
// returns its path.
func claudeTranscript(t *testing.T, question, answer string) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, line := range []any{
		map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": question}},
		map[string]any{"type": "assistant", "message": map[string]any{"role": "assistant",
			"content": []any{map[string]any{"type": "text", "text": answer}}}},
	} {
		if err := enc.Encode(line); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(t.TempDir(), sid+".jsonl")
	writeFile(t, p, b.String())
	return p
}

// TestCaptureWaitsOutALongWriter: while another kk process holds the
// knowledge base's writer lock for longer than a hook can wait (an index
// rebuild or an import of a large tree), the end-of-turn capture used to
// give up at its deadline, logging only "gave up after 5s": the turn was
// lost, and at the session's end the whole session. The hook hands the
// capture to a detached process, which waits for the lock, says so in
// the hook error log (naming the holder), and returns; once the writer
// is done, the log is written.
func TestCaptureWaitsOutALongWriter(t *testing.T) {
	root := agentRepo(t)
	k := store.New(root)
	tr := claudeTranscript(t, "How are the database migrations run in this project?", "With `make migrate`, before the tests.")
	held, err := k.WriterLock().Acquire(context.Background(), time.Second, "kk index rebuild (a long writer)")
	if err != nil {
		t.Fatal(err)
	}
	released := false
	release := func() {
		if !released {
			released = true
			if err := held.Release(); err != nil {
				t.Fatal(err)
			}
		}
	}
	defer release()
	cmd := exec.Command(agentKK(t), "hook", "capture", "--harness", "claude")
	cmd.Dir = root
	// KK_CAPTURE=wait: the hook waits for its detached capture, so that
	// the test knows when it is done.
	cmd.Env = append(agentEnv(), "KK_CAPTURE=wait")
	cmd.Stdin = strings.NewReader(`{"session_id":"` + sid + `","cwd":"` + root + `","transcript_path":"` + tr + `","hook_event_name":"Stop"}`)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// The hand-off shows as the session's pending detached capture.
	latest := latestPath(k, sid)
	for {
		if _, err := os.Stat(latest); err == nil {
			break
		}
		select {
		case err := <-exited:
			release()
			t.Fatalf("the hook ended (%v) without handing the capture on while the writer lock was held; output %q; hook log:\n%s",
				err, out.String(), readLogs(t, k))
		case <-time.After(10 * time.Millisecond):
		}
	}
	release()
	if err := <-exited; err != nil {
		t.Fatalf("kk hook capture: %v\n%s", err, out.String())
	}
	if out.Len() != 0 {
		t.Fatalf("the hook printed %q", out.String())
	}
	logs := sessionFiles(t, k)
	if len(logs) != 1 {
		t.Fatalf("session logs %v; hook log:\n%s", logs, readLogs(t, k))
	}
	mustContain(t, readFile(t, filepath.Join(k.SessionsDir(), logs[0])), "How are the database migrations run in this project?", "make migrate")
	mustContain(t, readLogs(t, k), "detached process", "kk index rebuild (a long writer)")
}

// readLogs returns every hook error log of k, whatever its day.
func readLogs(t *testing.T, k *store.KB) string {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(k.LogsDir(), "hook-errors-*.log"))
	var b strings.Builder
	for _, p := range paths {
		b.WriteString(readFile(t, p))
	}
	return b.String()
}

// TestPromptContextAfterASyncElsewhere: in a fresh clone the index does
// not exist yet, and session-start starts `kk sync` in the background; a
// headless run (claude -p, codex exec) sends its prompt at once. When that
// sync committed between the hook's first search (of the empty index) and
// its own sync, its own sync found nothing left to do, and the hook
// answered with its first search: no context for the session's one
// prompt, and nothing logged. The hook searches again whenever it had
// found nothing and its sync ran.
func TestPromptContextAfterASyncElsewhere(t *testing.T) {
	root := agentRepo(t)
	kk := agentKK(t)
	agentRun(t, root, "Run them with make migrate, never by hand.\n", kk, "node", "write", "practice", "database-migrations",
		"--description", "How the database migrations are run", "--tag", "db")
	agentRun(t, root, "", "git", "add", "-A")
	agentRun(t, root, "", "git", "commit", "-qm", "a note")
	clone := filepath.Join(t.TempDir(), "clone")
	agentRun(t, root, "", "git", "clone", "-q", root, clone)
	k := store.New(clone)
	p := promptRun{budget: time.Minute, offer: func(string) {
		// The background sync session-start started commits now, after
		// the first search.
		agentRun(t, clone, "", kk, "sync")
	}}
	text, err := p.text(context.Background(), k, "how are the database migrations run")
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, text, "practice-database-migrations")
}

// TestGraphHintIgnoresAnotherRepositorysGit: a harness started from a git
// hook or a script passes git's environment on to kk's hooks: GIT_DIR
// naming another repository, GIT_INDEX_FILE naming a temporary index.
// graph-hint's git then compared this work tree with another repository's
// index (or an empty one), took every file for a change of the session,
// and stopped the agent with a hint about atoms and files it never
// touched. The hint is about the knowledge base's own work tree, or it
// says nothing.
func TestGraphHintIgnoresAnotherRepositorysGit(t *testing.T) {
	kk := agentKK(t)
	other := agentRepo(t)
	writeFile(t, filepath.Join(other, "lib", "other.go"), "package lib\n")
	agentRun(t, other, "", "git", "add", "-A")
	agentRun(t, other, "", "git", "commit", "-qm", "other")
	root := agentRepo(t)
	agentRun(t, root, "Tokens rotate hourly.\n", kk, "graph", "create", "atom", "--name", "Auth", "--path", "src/**", "--body-file", "-")
	agentRun(t, root, "", "git", "add", "-A")
	agentRun(t, root, "", "git", "commit", "-qm", "an atom")
	for _, tc := range []struct {
		name string
		env  []string
	}{
		{"GIT_DIR of another repository", []string{"GIT_DIR=" + filepath.Join(other, ".git")}},
		{"GIT_DIR and GIT_WORK_TREE of another repository", []string{"GIT_DIR=" + filepath.Join(other, ".git"), "GIT_WORK_TREE=" + other}},
		{"GIT_INDEX_FILE of a temporary index", []string{"GIT_INDEX_FILE=" + filepath.Join(t.TempDir(), "next-index.lock")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := strings.Replace(sid, "0d9f", fmt.Sprintf("%04x", len(tc.env)*7+len(tc.name)), 1)
			payload := `{"session_id":"` + id + `","cwd":"` + root + `","hook_event_name":"Stop"}`
			agentHook(t, root, "session-start", "claude", payload, tc.env...)
			out, _ := agentHook(t, root, "graph-hint", "claude", payload, tc.env...)
			if out != "" {
				t.Fatalf("a session that changed nothing got a hint:\n%s", out)
			}
		})
	}
	// Without them, a change under the atom's paths is hinted at.
	payload := `{"session_id":"` + sid + `","cwd":"` + root + `","hook_event_name":"Stop"}`
	agentHook(t, root, "session-start", "claude", payload)
	app := filepath.Join(root, "src", "app.go")
	writeFile(t, app, "package app\n\nfunc Rotate() {}\n")
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(app, later, later); err != nil {
		t.Fatal(err)
	}
	out, _ := agentHook(t, root, "graph-hint", "claude", payload)
	mustContain(t, out, `"decision":"block"`, "src/app.go")
}

// TestHookPayloadWithAByteOrderMark: Windows PowerShell 5.1 writes what it
// pipes to a program in UTF-8 with a byte order mark when $OutputEncoding
// says UTF-8, and the harnesses whose hook files carry a "powershell"
// command (Copilot CLI) or run hooks through it hand kk such a payload.
// JSON allows a reader to ignore the mark (RFC 8259 §8.1); kk refused the
// payload as "invalid character 'ï'", and the prompt got no context.
func TestHookPayloadWithAByteOrderMark(t *testing.T) {
	root := agentRepo(t)
	agentRun(t, root, "Run them with make migrate, never by hand.\n", agentKK(t), "node", "write", "practice", "database-migrations",
		"--description", "How the database migrations are run", "--tag", "db")
	k := store.New(root)
	for _, h := range []string{"claude", "copilot", "gemini", "cursor", "codex"} {
		payload := "\ufeff" + `{"session_id":"` + sid + `","sessionId":"` + sid + `","conversation_id":"` + sid + `","cwd":"` + root +
			`","workspace_roots":["` + root + `"],"prompt":"how are the database migrations run"}`
		agentHook(t, root, "session-start", h, payload)
		out, _ := agentHook(t, root, "prompt-context", h, payload)
		if h != "cursor" && !strings.Contains(out, "practice-database-migrations") { // Cursor takes no prompt context
			t.Errorf("%s: prompt-context printed %q", h, out)
		}
	}
	if logs := readLogs(t, k); logs != "" {
		t.Errorf("hook log:\n%s", logs)
	}
}

// TestGraphHintWithATornSessionMark: session-start writes its mark
// without syncing it to disk, so after a power cut the file may be empty
// (writeVolatileJSON). The session then went on with its mark unreadable:
// session-start kept it as it was, and every end of turn logged "unexpected
// end of JSON input" and gave no hint. A mark that does not parse is no
// mark: session-start writes it again, and graph-hint, which cannot tell
// whether it gave its hint, mends it without giving one.
func TestGraphHintWithATornSessionMark(t *testing.T) {
	root := agentRepo(t)
	k := store.New(root)
	agentRun(t, root, "Tokens rotate hourly.\n", agentKK(t), "graph", "create", "atom", "--name", "Auth", "--path", "src/**", "--body-file", "-")
	agentRun(t, root, "", "git", "add", "-A")
	agentRun(t, root, "", "git", "commit", "-qm", "an atom")
	mark := sessionMarkPath(k, sid)
	writeFile(t, mark, "")
	payload := `{"session_id":"` + sid + `","cwd":"` + root + `","hook_event_name":"Stop"}`
	agentHook(t, root, "session-start", "claude", payload) // a resumed session starts again
	var m sessionMark
	if err := json.Unmarshal([]byte(readFile(t, mark)), &m); err != nil || m.StartedAt == "" {
		t.Fatalf("session-start left the mark %q (%v)", readFile(t, mark), err)
	}
	app := filepath.Join(root, "src", "app.go")
	writeFile(t, app, "package app\n\nfunc Rotate() {}\n")
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(app, later, later); err != nil {
		t.Fatal(err)
	}
	out, _ := agentHook(t, root, "graph-hint", "claude", payload)
	mustContain(t, out, `"decision":"block"`, "src/app.go")
	// A mark torn after the hint was given may have recorded it: the hint
	// is not given again, the mark is mended, and nothing is logged.
	writeFile(t, mark, "{")
	if out, _ := agentHook(t, root, "graph-hint", "claude", payload); out != "" {
		t.Errorf("a second hint: %s", out)
	}
	if err := json.Unmarshal([]byte(readFile(t, mark)), &m); err != nil || m.HintedAt == "" {
		t.Errorf("graph-hint left the mark %q (%v)", readFile(t, mark), err)
	}
	if logs := readLogs(t, k); logs != "" {
		t.Errorf("hook log:\n%s", logs)
	}
}

// TestGraphHintThroughALinkedFolder: a session whose folder is reached
// through a symbolic link (macOS's /tmp and /var, a home folder on another
// volume, a link to a checkout) names the link in its payload's cwd, while
// git names the folder itself: every changed file then lay outside the
// knowledge base's root, and the session never got its hint.
func TestGraphHintThroughALinkedFolder(t *testing.T) {
	root := agentRepo(t)
	agentRun(t, root, "Tokens rotate hourly.\n", agentKK(t), "graph", "create", "atom", "--name", "Auth", "--path", "src/**", "--body-file", "-")
	agentRun(t, root, "", "git", "add", "-A")
	agentRun(t, root, "", "git", "commit", "-qm", "an atom")
	link := filepath.Join(t.TempDir(), "checkout")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	payload := `{"session_id":"` + sid + `","cwd":"` + link + `","hook_event_name":"Stop"}`
	agentHook(t, link, "session-start", "claude", payload)
	app := filepath.Join(link, "src", "app.go")
	writeFile(t, app, "package app\n\nfunc Rotate() {}\n")
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(app, later, later); err != nil {
		t.Fatal(err)
	}
	out, _ := agentHook(t, link, "graph-hint", "claude", payload)
	mustContain(t, out, `"decision":"block"`, "src/app.go")
}

// TestCaptureOfAUserTextWithAProposalHeading: a session log is the
// transcript under "## Transcript", then kk's "## Proposal" section. A
// user who pastes a design document with a "## Proposal" heading (a
// common one) put that line inside the transcript, and kk cut the log at
// the first such line: the extraction read the transcript only up to the
// user's heading (the rest of the document and every answer lost), and a
// curated log captured again got the old transcript's tail appended after
// the new one.
func TestCaptureOfAUserTextWithAProposalHeading(t *testing.T) {
	root := agentRepo(t)
	k := store.New(root)
	doc := "Review my design doc:\n\n## Context\n\nWe cache tokens.\n\n## Proposal\n\nMove the cache to Redis with a five minute TTL.\n\n## Risks\n\nStale tokens after rotation."
	tr := claudeTranscript(t, doc, "The Redis move is sound; rotate keys on write.")
	payload := `{"session_id":"` + sid + `","cwd":"` + root + `","transcript_path":"` + tr + `","hook_event_name":"Stop"}`
	agentHook(t, root, "capture", "claude", payload)
	logs := sessionFiles(t, k)
	if len(logs) != 1 {
		t.Fatalf("logs %v; hook log:\n%s", logs, readLogs(t, k))
	}
	path := filepath.Join(k.SessionsDir(), logs[0])
	l, err := session.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, l.Transcript(), "Move the cache to Redis", "Stale tokens after rotation.", "[AGENT]: The Redis move is sound")
	// Curated, then captured again with one more exchange.
	if err := session.Stamp(path, "run-1", time.Now()); err != nil {
		t.Fatal(err)
	}
	more := claudeTranscript(t, doc, "The Redis move is sound; rotate keys on write.")
	f, err := os.OpenFile(more, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"type":"user","message":{"role":"user","content":"And the TTL?"}}` + "\n" +
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Five minutes."}]}}` + "\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	agentHook(t, root, "capture", "claude", strings.Replace(payload, tr, more, 1))
	got := readFile(t, path)
	if n := strings.Count(got, "Move the cache to Redis"); n != 1 {
		t.Errorf("the user's text is %d times in the log:\n%s", n, got)
	}
	mustContain(t, got, "curator_run_id: run-1", "[AGENT]: Five minutes.")
	if !strings.HasSuffix(got, "## Proposal\n\n(populated by proposal worker)\n") {
		t.Errorf("the log does not end with kk's proposal section:\n%s", got)
	}
	if l, err := session.Read(path); err != nil || !strings.HasSuffix(l.Transcript(), "[AGENT]: Five minutes.") {
		t.Errorf("transcript read back: %v\n%q", err, l.Transcript())
	}
	if logs := readLogs(t, k); logs != "" {
		t.Errorf("hook log:\n%s", logs)
	}
}

// TestSessionStartMidMerge: a merge of two branches that both added notes
// stops on ENTRY.md in a clone where kk's merge drivers are not set up
// (kk sets them up at its first command; a session can come first). Its
// front matter then holds conflict markers, and session-start gave the
// session nothing at all, logging "invalid YAML in front matter: line 3":
// the session that has to finish the merge started without kk. It gets a
// stand-in that says where the notes are, and the user a note naming the
// conflict and the command that regenerates the file.
func TestSessionStartMidMerge(t *testing.T) {
	root := agentRepo(t)
	kk := agentKK(t)
	agentRun(t, root, "", "git", "checkout", "-q", "-b", "feature")
	agentRun(t, root, "Flags are toggled in flags.yaml.\n", kk, "node", "write", "practice", "feature-flags", "--description", "How feature flags are toggled")
	agentRun(t, root, "", "git", "add", "-A")
	agentRun(t, root, "", "git", "commit", "-qm", "flags")
	agentRun(t, root, "", "git", "checkout", "-q", "main")
	agentRun(t, root, "Log with key/value pairs.\n", kk, "node", "write", "practice", "logging-rules", "--description", "How we log")
	agentRun(t, root, "", "git", "add", "-A")
	agentRun(t, root, "", "git", "commit", "-qm", "logging")
	cmd := exec.Command("git", "merge", "feature")
	cmd.Dir, cmd.Env = root, agentEnv()
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("the merge did not stop on a conflict:\n%s", out)
	}
	k := store.New(root)
	if !strings.Contains(readFile(t, k.EntryPath()), "<<<<<<<") {
		t.Fatalf("ENTRY.md holds no conflict:\n%s", readFile(t, k.EntryPath()))
	}
	out, _ := agentHook(t, root, "session-start", "claude", `{"session_id":"`+sid+`","cwd":"`+root+`","hook_event_name":"SessionStart"}`)
	var env struct {
		HookSpecificOutput struct{ AdditionalContext string } `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(out), &env); err != nil {
		t.Fatalf("session-start printed %q: %v; hook log:\n%s", out, err, readLogs(t, k))
	}
	mustContain(t, env.HookSpecificOutput.AdditionalContext, ".ai/kenkeep/nodes", "ENTRY.md holds git conflict markers", "kk index rebuild")
	mustNotContain(t, env.HookSpecificOutput.AdditionalContext, "<<<<<<<", ">>>>>>>")
}

// TestHookWhoseSessionLeftTheProject: the harness runs kk's hooks in the
// project whose configuration names them, but the payload's cwd is the
// session's, and an agent can leave the project (Claude Code's cwd follows
// a `cd` and fires CwdChanged; a scratch folder in /tmp). kk then looked
// for the knowledge base from the session's folder alone, found none, and
// from there on gave no context and captured nothing, while logging the
// problem in the very knowledge base it could not find. A cwd without a
// knowledge base falls back to the hook's own working directory.
func TestHookWhoseSessionLeftTheProject(t *testing.T) {
	root := agentRepo(t)
	k := store.New(root)
	agentRun(t, root, "Run them with make migrate, never by hand.\n", agentKK(t), "node", "write", "practice", "database-migrations",
		"--description", "How the database migrations are run", "--tag", "db")
	scratch := t.TempDir()
	tr := claudeTranscript(t, "How are the database migrations run in this project?", "With `make migrate`.")
	payload := `{"session_id":"` + sid + `","cwd":"` + scratch + `","transcript_path":"` + tr +
		`","hook_event_name":"Stop","prompt":"how are the database migrations run"}`
	out, _ := agentHook(t, root, "session-start", "claude", payload)
	mustContain(t, out, "additionalContext", "practice-database-migrations")
	out, _ = agentHook(t, root, "prompt-context", "claude", payload)
	mustContain(t, out, "practice-database-migrations")
	agentHook(t, root, "capture", "claude", payload)
	if logs := sessionFiles(t, k); len(logs) != 1 {
		t.Errorf("session logs %v", logs)
	}
	if logs := readLogs(t, k); logs != "" {
		t.Errorf("hook log:\n%s", logs)
	}
	// With neither the session's folder nor the hook's in a knowledge
	// base, the problem is said on stderr, as before.
	_, errOut := agentHook(t, scratch, "session-start", "claude", payload)
	mustContain(t, errOut, "no knowledge base found in "+scratch)
}

// TestSessionStartWithAnUnreadableState: .state/state.json records when
// session-start last nudged; kenkeep writes it too. One that does not
// parse (cut short, edited by hand) stopped both nudges for good and put
// the same line in the hook log at every session start. It is moved aside
// (kept for a person to look at), said once, and the nudges start again.
func TestSessionStartWithAnUnreadableState(t *testing.T) {
	root := agentRepo(t)
	k := store.New(root)
	writeFile(t, statePath(k), `{"last_nudged_at": "2026-`)
	payload := `{"session_id":"` + sid + `","cwd":"` + root + `","hook_event_name":"SessionStart"}`
	for range 3 {
		agentHook(t, root, "session-start", "claude", payload)
	}
	logs := strings.TrimSpace(readLogs(t, k))
	if strings.Count(logs, "\n") != 0 || !strings.Contains(logs, "state.json.unreadable") {
		t.Errorf("hook log, want one line naming where the file went:\n%s", logs)
	}
	mustContain(t, readFile(t, statePath(k)+".unreadable"), `{"last_nudged_at": "2026-`)
}
