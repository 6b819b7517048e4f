package all

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/harness/harnesstest"
)

// guardRecorder is a fake harness binary: it records the recursion guards
// it was started with (kk's and kenkeep's) into $FAKE_DIR/guards, prints
// $FAKE_DIR/out and exits with $FAKE_EXIT.
const guardRecorder = `#!/bin/sh
printf '%s %s' "${KK_INTERNAL-unset}" "${KENKEEP_BUILDER_INTERNAL-unset}" > "$FAKE_DIR/guards"
cat > /dev/null
cat "$FAKE_DIR/out"
exit ${FAKE_EXIT:-0}
`

// TestKenkeepHeadless: each harness's headless run gives the final answer
// of the harness's own machine output, carries the recursion guards (kk's
// KK_INTERNAL and kenkeep's KENKEEP_BUILDER_INTERNAL, so neither tool's
// hooks run inside it), and is an error when the output holds no answer
// or the program fails (headless.test.ts, copilot-headless.test.ts; the
// streams are kenkeep's). kk validates the answer against the schema in
// its caller (the drain), not in the adapter.
func TestKenkeepHeadless(t *testing.T) {
	answer := `{"ok":true,"n":42}`
	for _, c := range []struct {
		id, ok, none string
		want         string
	}{
		{"claude",
			`{"type":"system","subtype":"init"}` + "\n" + `{"type":"result","is_error":false,"result":"{\"ok\":true,\"n\":42}"}` + "\n",
			`{"type":"assistant","message":{"content":"hi"}}` + "\n", answer},
		{"codex",
			`{"type":"thread.started"}` + "\n" + `{"type":"item.completed","item":{"type":"agent_message","text":"{\"ok\":true,\"n\":42}"}}` + "\n",
			`{"type":"thread.started"}` + "\n", answer},
		{"cursor",
			`{"type":"result","subtype":"success","is_error":false,"result":"{\"ok\":true,\"n\":42}"}` + "\n",
			`{"type":"system","subtype":"init"}` + "\n", answer},
		// OpenCode: the text parts of the latest message, joined.
		{"opencode",
			`{"type":"message.part.updated","properties":{"messageID":"m1","part":{"type":"text","text":"stale"}}}` + "\n" +
				`{"type":"message.part.updated","properties":{"messageID":"m2","part":{"type":"text","text":"{\"ok\":"}}}` + "\n" +
				`{"type":"message.part.updated","properties":{"messageID":"m2","part":{"type":"text","text":"true,\"n\":42}"}}}` + "\n" +
				`{"type":"session.idle"}` + "\n",
			`{"type":"session.idle"}` + "\n", answer},
		// Copilot prints the answer as text; the drain finds the fenced
		// JSON in it.
		{"copilot",
			"Here is the result you requested.\n\n```json\n{\"ok\": true, \"n\": 7}\n```\n",
			"", "```json\n{\"ok\": true, \"n\": 7}\n```"},
	} {
		t.Run(c.id, func(t *testing.T) {
			a, err := Registry().Get(c.id)
			if err != nil {
				t.Fatal(err)
			}
			bin := harnesstest.Script(t, a.Binary(), guardRecorder)
			t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			t.Setenv(harness.RecursionEnv, "")
			t.Setenv(harness.KenkeepRecursionEnv, "")
			dir := t.TempDir()
			t.Setenv("FAKE_DIR", dir)
			t.Setenv("FAKE_EXIT", "")
			run := func(out string) (string, error) {
				harnesstest.WriteFile(t, filepath.Join(dir, "out"), []byte(out))
				return a.Headless(context.Background(), harness.HeadlessRun{Prompt: "prompt body", Timeout: 20 * time.Second})
			}
			got, err := run(c.ok)
			if err != nil || !strings.Contains(got, c.want) {
				t.Fatalf("answer %q, %v; want %q", got, err, c.want)
			}
			if g := string(harnesstest.ReadFile(t, filepath.Join(dir, "guards"))); g != "1 1" {
				t.Errorf("the guards in the child: %q, want KK_INTERNAL=1 and KENKEEP_BUILDER_INTERNAL=1", g)
			}
			if got, err := run(c.none); err == nil {
				t.Errorf("no answer in the output: %q, no error", got)
			}
			t.Setenv("FAKE_EXIT", "1")
			if got, err := run(c.ok); err == nil || !strings.Contains(err.Error(), "1") {
				t.Errorf("exit 1: %q, %v", got, err)
			}
		})
	}
}
