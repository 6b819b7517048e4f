package serve

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/httpapi"
)

// A person's pre-auto-gc hook that never ends (a battery check that
// waits on a device, a script that asks a question) does not stop kk
// serve: git gc --auto runs beside the queue, not in a job's commit, so
// every job lands; one run at a time, however many commits fall due
// meanwhile; and the server's stop ends git and the hook.
func TestAHungPreAutoGCHookDoesNotStopTheQueue(t *testing.T) {
	k := newRepo(t, 0)
	dueForGC(t, k) // so that git gc --auto runs the hook
	pids := filepath.Join(t.TempDir(), "pids")
	hooks := filepath.Join(k.Root, ".git", "hooks")
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	hook := "#!/bin/sh\necho $$ >> '" + pids + "'\nexec sleep 3600\n"
	if err := os.WriteFile(filepath.Join(hooks, "pre-auto-gc"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	s := startOpts(t, context.Background(), Options{KB: k, MaintainEvery: 1})
	var ids []string
	for i := range 4 {
		j, err := s.Client.Post(ctx, httpapi.PostRequest{Title: fmt.Sprintf("Beside a hung hook %d", i), Content: "Text.\n"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.JobID)
	}
	// Bounded so that a queue stuck behind the hook fails the test (not a
	// measure of speed: the jobs take a second or two).
	wctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, id := range ids {
		j, err := s.Client.Wait(wctx, id, 5*time.Millisecond)
		if err != nil {
			t.Fatalf("job %s did not end while git's pre-auto-gc hook hung: %v", id, err)
		}
		if j.Status != "done" {
			t.Fatalf("job %s: %+v", id, j)
		}
	}
	started := hookPIDs(t, pids)
	if len(started) != 1 {
		t.Fatalf("git gc --auto ran its hook %d times while the first run hung (pids %v); want one run at a time", len(started), started)
	}
	s.stop()
	for _, pid := range started {
		if running(pid) {
			t.Errorf("the hung pre-auto-gc hook (pid %d) still runs after kk serve stopped", pid)
		}
	}
}

func hookPIDs(t *testing.T, path string) []int {
	t.Helper()
	// The hook may not have started yet when the last job lands.
	deadline := time.Now().Add(time.Minute)
	for {
		b, err := os.ReadFile(path)
		if err == nil && len(b) > 0 {
			var pids []int
			for _, f := range strings.Fields(string(b)) {
				n, err := strconv.Atoi(f)
				if err != nil {
					t.Fatal(err)
				}
				pids = append(pids, n)
			}
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("git gc --auto never ran its pre-auto-gc hook (%v)", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// running reports whether process pid runs (a zombie does not).
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) state ...: comm may hold spaces and parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
