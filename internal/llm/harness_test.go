package llm_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kk-project/kk/harnesses/claude"
	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/harness/harnesstest"
	"github.com/kk-project/kk/internal/llm"
)

// fakeClaude stands in for the claude binary: it records its arguments
// and the recursion guard, and prints a result object whose structured
// output is $FAKE_OUTPUT (or a text result when $FAKE_TEXT is set).
const fakeClaude = `#!/bin/sh
dir=$(dirname "$0")
printf '%s\n' "$@" > "$dir/args"
printf '%s' "$KK_INTERNAL" > "$dir/guard"
if [ -n "$FAKE_TEXT" ]; then
  printf '{"type":"result","subtype":"success","is_error":false,"result":"%s"}\n' "$FAKE_TEXT"
else
  printf '{"type":"result","subtype":"success","is_error":false,"result":"","structured_output":%s}\n' "$FAKE_OUTPUT"
fi
`

func harnessProvider(t *testing.T, c llm.Config, logDir string) llm.Provider {
	t.Helper()
	reg, err := harness.NewRegistry(claude.New())
	if err != nil {
		t.Fatal(err)
	}
	p, err := llm.New(c, llm.Deps{Harnesses: reg, LogDir: logDir})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestHarnessProvider(t *testing.T) {
	bin := harnesstest.InstallFake(t, "claude", fakeClaude)
	logs := t.TempDir()
	p := harnessProvider(t, llm.Config{Provider: "harness", Harness: "claude", Model: "haiku"}, logs)
	if p.Name() != "harness claude haiku" {
		t.Errorf("Name = %q", p.Name())
	}
	ctx := context.Background()

	t.Setenv("FAKE_OUTPUT", placement)
	got, err := p.Complete(ctx, request(t))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), `"folder":"go/concurrency"`) {
		t.Errorf("reply = %s", got)
	}
	args := string(harnesstest.ReadFile(t, filepath.Join(bin, "args")))
	for _, want := range []string{"You place notes.\n\nWhere does this go?", "It must match this JSON Schema:", "--json-schema", `"folder"`, "--model\nhaiku"} {
		if !strings.Contains(args, want) {
			t.Errorf("claude's arguments lack %q:\n%s", want, args)
		}
	}
	if guard := harnesstest.ReadFile(t, filepath.Join(bin, "guard")); string(guard) != "1" {
		t.Errorf("the recursion guard was not set: %q", guard)
	}
	if entries, _ := os.ReadDir(logs); len(entries) != 1 || !strings.HasPrefix(entries[0].Name(), "serve-placement__") {
		t.Errorf("log files: %v", entries)
	}

	t.Setenv("FAKE_OUTPUT", `{"folder":"x","title":"t","description":"d","type":"howto","tags":[]}`)
	_, err = p.Complete(ctx, request(t))
	wantBadReply(t, err, "/type")

	// A harness that answers in text: the JSON is found in it.
	t.Setenv("FAKE_TEXT", "Here you go: {\\\"folder\\\":\\\"\\\",\\\"title\\\":\\\"T\\\",\\\"description\\\":\\\"\\\",\\\"type\\\":\\\"map\\\",\\\"tags\\\":[]}")
	if got, err := p.Complete(ctx, request(t)); err != nil || !strings.Contains(string(got), `"title":"T"`) {
		t.Errorf("JSON in a text answer: %s, %v", got, err)
	}
	t.Setenv("FAKE_TEXT", "I cannot decide.")
	_, err = p.Complete(ctx, request(t))
	wantBadReply(t, err, "holds no JSON object")

	if _, err := llm.New(llm.Config{Provider: "harness", Harness: "nope"}, llm.Deps{Harnesses: mustRegistry(t)}); err == nil || !strings.Contains(err.Error(), `unknown harness "nope"`) {
		t.Errorf("unknown harness: %v", err)
	}
}

func mustRegistry(t *testing.T) *harness.Registry {
	reg, err := harness.NewRegistry(claude.New())
	if err != nil {
		t.Fatal(err)
	}
	return reg
}
