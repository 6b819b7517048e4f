package hooks

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/hooks/hookstest"
	"github.com/kk-project/kk/internal/lock"
	"github.com/kk-project/kk/internal/session"
	"github.com/kk-project/kk/internal/store"
)

const validAnswer = `{"practice": [{"type": "practice", "tags": ["retry"], "title": "Keep retries in retry.yaml", "description": "Retry settings live in one file.", "body": "See config/retry.yaml.", "kk_confidence": "high"}], "map": []}`

// fakeAgent puts a fake-agent script on PATH that records its environment
// and prompts under dir and answers with the content of dir/answer.txt.
func fakeAgent(t *testing.T, answer string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("needs a POSIX sh to run the fake agent script, which Windows lacks")
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "answer.txt"), answer)
	script := "#!/bin/sh\nenv > '" + dir + "/env.txt'\ncat >> '" + dir + "/prompts.txt'\necho >> '" + dir + "/prompts.txt'\ncat '" + dir + "/answer.txt'\n"
	bin := filepath.Join(dir, "bin")
	writeFile(t, filepath.Join(bin, "fake-agent"), script)
	if err := os.Chmod(filepath.Join(bin, "fake-agent"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	// Drain marks its own process; t.Setenv puts the variable back after
	// the test.
	t.Setenv(harness.RecursionEnv, "")
	return dir
}

// pendingLog writes a pending log holding text as its transcript.
func pendingLog(t *testing.T, k *store.KB, n int, text string) string {
	t.Helper()
	writeLog(t, k, n, session.StatusPending, "")
	path := filepath.Join(k.SessionsDir(), "20260519-0800-0d9f6c2e-8f1a-4b7e-9c3d-2a1b4c5d6e"+twoDigits(n)+".md")
	writeFile(t, path, strings.Replace(readFile(t, path), "[USER]: hi", text, 1))
	return path
}

func twoDigits(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

func drain(t *testing.T, k *store.KB, a harness.Adapter) (*DrainResult, error) {
	t.Helper()
	r, _ := request(k, harness.HookInput{})
	r.Adapter = a
	return Drain(context.Background(), r)
}

func TestDrainRecordsAnswers(t *testing.T) {
	dir := fakeAgent(t, "Here is what I found:\n```json\n"+validAnswer+"\n```\n")
	k := newKB(t)
	a := pendingLog(t, k, 1, "[USER]: alpha session")
	b := pendingLog(t, k, 2, "[USER]: beta session")
	writeLog(t, k, 3, session.StatusFailed, "") // failed logs are not retried
	writeLog(t, k, 4, session.StatusDone, "")
	before3 := readFile(t, filepath.Join(k.SessionsDir(), "20260519-0800-0d9f6c2e-8f1a-4b7e-9c3d-2a1b4c5d6e03.md"))

	res, err := drain(t, k, &hookstest.Adapter{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Skipped != "" || len(res.Done) != 2 || len(res.Failed) != 0 {
		t.Fatalf("result %+v", res)
	}
	for _, p := range []string{a, b} {
		l, err := session.Read(p)
		if err != nil || l.ProposalStatus != session.StatusDone || len(l.Proposals.Practice) != 1 || l.Proposals.Practice[0].Title != "Keep retries in retry.yaml" {
			t.Fatalf("%s: %+v %v", p, l, err)
		}
	}
	if readFile(t, filepath.Join(k.SessionsDir(), "20260519-0800-0d9f6c2e-8f1a-4b7e-9c3d-2a1b4c5d6e03.md")) != before3 {
		t.Error("a failed log was drained again")
	}
	// The harness got the shipped prompt with each transcript in place of
	// the placeholder line.
	prompts := readFile(t, filepath.Join(dir, "prompts.txt"))
	mustContain(t, prompts, "# Extract durable project knowledge", "## Transcript\n\n[USER]: alpha session", "[USER]: beta session")
	mustNotContain(t, prompts, promptPlaceholder)
	// Every process kk started carries the recursion guard.
	env := strings.Split(readFile(t, filepath.Join(dir, "env.txt")), "\n")
	if !slices.Contains(env, harness.RecursionEnv+"=1") {
		t.Fatalf("the headless harness ran without %s=1", harness.RecursionEnv)
	}
	// A second drain has nothing left to do.
	if res, err := drain(t, k, &hookstest.Adapter{}); err != nil || len(res.Done)+len(res.Failed) != 0 {
		t.Fatalf("second drain: %+v %v", res, err)
	}
}

func TestDrainFailures(t *testing.T) {
	for _, tc := range []struct{ name, answer, msg string }{
		{"prose", "I could not find anything worth keeping.", "the answer holds no JSON object"},
		{"wrong shape", `{"practice": [{"type": "practice", "title": "x"}], "map": []}`, "/practice/0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fakeAgent(t, tc.answer)
			k := newKB(t)
			p := pendingLog(t, k, 1, "[USER]: gamma")
			res, err := drain(t, k, &hookstest.Adapter{})
			if err != nil || len(res.Failed) != 1 {
				t.Fatalf("result %+v %v", res, err)
			}
			l, err := session.Read(p)
			if err != nil || l.ProposalStatus != session.StatusFailed || !strings.Contains(l.ProposalError, tc.msg) {
				t.Fatalf("log %+v %v", l, err)
			}
		})
	}
	t.Run("harness missing: the logs wait for a later drain", func(t *testing.T) {
		fakeAgent(t, validAnswer)
		k := newKB(t)
		p := pendingLog(t, k, 1, "[USER]: delta")
		p2 := pendingLog(t, k, 2, "[USER]: epsilon")
		res, err := drain(t, k, &hookstest.Adapter{Bin: "no-such-agent"})
		if !errors.Is(err, harness.ErrNotReady) || !strings.Contains(err.Error(), "no-such-agent not found") || len(res.Failed)+len(res.Done) != 0 {
			t.Fatalf("drain: %+v %v", res, err)
		}
		for _, p := range []string{p, p2} {
			if l, _ := session.Read(p); l.ProposalStatus != session.StatusPending {
				t.Fatalf("log %+v", l)
			}
		}
	})
	t.Run("long errors are cut", func(t *testing.T) {
		if got := truncate(strings.Repeat("é", 400), maxErrorLen); len(got) > maxErrorLen+3 || !strings.HasSuffix(got, "é...") {
			t.Fatalf("%q", got)
		}
	})
}

func TestDrainSkips(t *testing.T) {
	dir := fakeAgent(t, validAnswer)
	k := newKB(t)
	p := pendingLog(t, k, 1, "[USER]: epsilon")
	res, err := drain(t, k, &hookstest.Adapter{AdapterID: "claude"})
	if err != nil || res.Skipped != "harness" {
		t.Fatalf("claude: %+v %v", res, err)
	}
	held, err := lock.Acquire(context.Background(), drainLockPath(k), time.Second, "another drain")
	if err != nil {
		t.Fatal(err)
	}
	res, err = drain(t, k, &hookstest.Adapter{})
	if err := held.Release(); err != nil {
		t.Fatal(err)
	}
	if err != nil || res.Skipped != "locked" {
		t.Fatalf("locked: %+v %v", res, err)
	}
	if l, _ := session.Read(p); l.ProposalStatus != session.StatusPending {
		t.Fatalf("a skipped drain touched the log: %+v", l)
	}
	if _, err := os.Stat(filepath.Join(dir, "env.txt")); !os.IsNotExist(err) {
		t.Fatal("a skipped drain ran the harness")
	}
	// The lock is free once its holder let go (or died).
	if res, err := drain(t, k, &hookstest.Adapter{}); err != nil || len(res.Done) != 1 {
		t.Fatalf("after release: %+v %v", res, err)
	}
}

func TestDrainPromptOverride(t *testing.T) {
	dir := fakeAgent(t, validAnswer)
	k := newKB(t)
	pendingLog(t, k, 1, "[USER]: zeta")
	override := filepath.Join(k.PromptsDir(), promptName)
	writeFile(t, override, "Local extraction rules.\n\n"+promptPlaceholder+"\n")
	if _, err := drain(t, k, &hookstest.Adapter{}); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dir, "prompts.txt")); got != "Local extraction rules.\n\n[USER]: zeta\n\n" {
		t.Fatalf("prompt %q", got)
	}
	writeFile(t, override, "No placeholder here.\n")
	pendingLog(t, k, 2, "[USER]: eta")
	if _, err := drain(t, k, &hookstest.Adapter{}); err == nil || !strings.Contains(err.Error(), ".ai/kenkeep/.config/prompts/proposal-extract.md") {
		t.Fatalf("a prompt without the placeholder was used: %v", err)
	}
}

func TestStartDrain(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("needs a POSIX sh to run the fake kk script, which Windows lacks")
	}
	k := newKB(t)
	out := t.TempDir()
	fakeKK := filepath.Join(out, "kk")
	writeFile(t, fakeKK, "#!/bin/sh\nenv > '"+out+"/env.txt'\ncat /proc/$$/stat > '"+out+"/stat.txt' 2>/dev/null\necho \"$$ $*\" > '"+out+"/args.tmp'\nmv '"+out+"/args.tmp' '"+out+"/args.txt'\n")
	if err := os.Chmod(fakeKK, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(harness.RecursionEnv, "1") // must not reach the child kk
	r, _ := request(k, harness.HookInput{})
	called := false
	r.Executable = func() (string, error) { called = true; return fakeKK, nil }

	if err := StartDrain(context.Background(), r); err != nil || called {
		t.Fatalf("started with nothing pending: %v %v", called, err)
	}
	pendingLog(t, k, 1, "[USER]: theta")
	r.Adapter = &hookstest.Adapter{AdapterID: "claude"}
	if err := StartDrain(context.Background(), r); err != nil || called {
		t.Fatalf("started on claude: %v %v", called, err)
	}
	r.Adapter = &hookstest.Adapter{}
	if err := StartDrain(context.Background(), r); err != nil || !called {
		t.Fatalf("not started: %v %v", called, err)
	}
	var args string
	for i := 0; i < 100; i++ {
		if data, err := os.ReadFile(filepath.Join(out, "args.txt")); err == nil {
			args = string(data)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	pid, rest, _ := strings.Cut(strings.TrimSpace(args), " ")
	if rest != "hook proposal-drain --harness fake --foreground --root "+k.Root {
		t.Fatalf("child arguments %q", args)
	}
	if env := readFile(t, filepath.Join(out, "env.txt")); !strings.Contains(env, harness.RecursionEnv+"=1") {
		t.Fatalf("the child kk lacks %s=1, which every process kk starts carries", harness.RecursionEnv)
	}
	if stat, err := os.ReadFile(filepath.Join(out, "stat.txt")); err == nil {
		// /proc/<pid>/stat: pid (comm) state ppid pgrp session ...
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) < 4 || f[3] != pid {
			t.Fatalf("the child is not a session leader: pid %s, stat %q", pid, stat)
		}
	}
}

// TestDrainWaitsOutALongWriter: the background drain ran the harness (a
// paid model run) and then gave its answer up, leaving the log pending to
// be extracted and paid for again, when another kk process held the
// writer lock for longer than a command waits for it (KK_LOCK_WAIT, 10 s
// by default: an index rebuild of a large tree). The drain runs in the
// background and waits for the lock within its own deadline.
func TestDrainWaitsOutALongWriter(t *testing.T) {
	dir := fakeAgent(t, validAnswer)
	k := newKB(t)
	p := pendingLog(t, k, 1, "[USER]: alpha session")
	k.LockWait = time.Millisecond // a writer that holds the lock longer than a command waits
	held, err := store.New(k.Root).WriterLock().Acquire(context.Background(), time.Second, "kk index rebuild (a long writer)")
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		res *DrainResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := drain(t, k, &hookstest.Adapter{})
		done <- result{res, err}
	}()
	// The harness ran; the writer keeps the lock a while longer.
	for {
		if _, err := os.Stat(filepath.Join(dir, "prompts.txt")); err == nil {
			break
		}
		select {
		case r := <-done:
			_ = held.Release()
			t.Fatalf("the drain ended before running the harness: %+v %v", r.res, r.err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	var r result
	select {
	case r = <-done:
	case <-time.After(500 * time.Millisecond):
		if err := held.Release(); err != nil {
			t.Fatal(err)
		}
		r = <-done
	}
	_ = held.Release()
	if r.err != nil || len(r.res.Done) != 1 {
		t.Fatalf("drain: %+v %v", r.res, r.err)
	}
	if l, err := session.Read(p); err != nil || l.ProposalStatus != session.StatusDone {
		t.Fatalf("the answer was not recorded: %+v %v", l, err)
	}
}
