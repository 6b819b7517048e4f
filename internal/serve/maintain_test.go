package serve

import (
	"context"
	"crypto/sha1"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/store"
)

// kk serve's commits never start git's automatic maintenance themselves;
// the worker runs git gc --auto every Options.MaintainEvery commits, so that the
// objects it writes are packed once there are enough of them (gc.auto).
func TestWorkerPacksLooseObjects(t *testing.T) {
	k := newRepo(t, 0)
	dueForGC(t, k)
	s := startOpts(t, context.Background(), Options{KB: k, MaintainEvery: 4})
	s.postMany(t, 13, "Packed note")
	s.Backend.maint.Wait() // git gc --auto runs beside the queue
	counts := map[string]int{}
	for _, line := range strings.Split(git(t, k, "count-objects", "-v"), "\n") {
		key, val, _ := strings.Cut(line, ": ")
		counts[key], _ = strconv.Atoi(val)
	}
	// 13 jobs write some ten objects each: without the worker's gc, all
	// of them would be loose.
	if counts["count"] >= 40 || counts["in-pack"] < 100 {
		t.Fatalf("after 13 jobs: %d loose objects, %d packed (git count-objects -v: %v)", counts["count"], counts["in-pack"], counts)
	}
	git(t, k, "fsck", "--no-dangling")
	clean(t, k)
}

// dueForGC makes the repository of k one that git gc --auto packs (in the
// foreground, so that a test sees the result) at once: nothing loose but
// a few objects past gc.auto's estimate.
func dueForGC(t *testing.T, k *store.KB) {
	t.Helper()
	for _, kv := range [][2]string{{"gc.auto", "200"}, {"gc.autoDetach", "false"}} {
		git(t, k, "config", kv[0], kv[1])
	}
	git(t, k, "gc", "-q") // nothing loose before the jobs
	// git gc --auto counts the loose objects of one folder of 256
	// (objects/17) to estimate them all: two there make it pack, at any
	// gc.auto below 257.
	for i, n := 0, 0; n < 2; i++ {
		blob := fmt.Sprintf("filler %d\n", i)
		if sum := sha1.Sum([]byte(fmt.Sprintf("blob %d\x00%s", len(blob), blob))); sum[0] == 0x17 {
			writeBlob(t, k.Root, blob)
			n++
		}
	}
}

func writeBlob(t *testing.T, dir, content string) {
	t.Helper()
	cmd := exec.Command("git", "hash-object", "-w", "--stdin")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(content)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git hash-object: %v\n%s", err, out)
	}
}
