//go:build unix

package hooks

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// A cloned repository whose .ai/kenkeep/.state or _logs is a symlink
// leading out of it (to a folder of the person's home) made the hooks
// write there: state.json, the session marks, the hook-error log. kk's
// writes refuse such a link (store.KB.CheckContained); the hooks, which
// write without the writer lock, now do too: they write nothing, and say
// why on standard error.
func TestHooksWriteNothingThroughASymlinkOutOfTheRepository(t *testing.T) {
	for _, c := range []struct{ dir, event, payload string }{
		{".state", "session-start", `{"session_id":"` + sid + `"}`},
		{"_logs", "prompt-context", `{"session_id":1}`}, // malformed: logged
	} {
		t.Run(c.dir, func(t *testing.T) {
			k := newKB(t)
			inside := filepath.Join(k.Dir, c.dir)
			outside := filepath.Join(t.TempDir(), "elsewhere")
			if err := os.MkdirAll(inside, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(inside, outside); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, inside); err != nil {
				t.Fatal(err)
			}
			before := listFiles(t, outside)
			inv, _, errb := invocation(t, k.Root, c.event, c.payload)
			Run(context.Background(), inv)
			if after := listFiles(t, outside); len(after) != len(before) {
				t.Errorf("the hook wrote out of the repository: %v, was %v", after, before)
			}
			mustContain(t, errb.String(), "leads out of the repository", c.dir)
		})
	}
}

func listFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		out = append(out, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
