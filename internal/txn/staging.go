package txn

import (
	"os"
	"strconv"
	"strings"

	"github.com/kk-project/kk/internal/store"
)

// StagingPrefix starts the name of a folder under .ai/kenkeep/.state/
// where a writer prepares files before its transaction (a pack import
// unpacks the pack there). The name carries the writer's process id, so
// that a folder whose process is gone is known to be left over.
const StagingPrefix = "staging-"

// MkdirStaging creates a staging folder for this process under .state/.
func MkdirStaging(k *store.KB, purpose string) (string, error) {
	if err := os.MkdirAll(k.StateDir(), 0o755); err != nil {
		return "", err
	}
	return os.MkdirTemp(k.StateDir(), StagingPrefix+strconv.Itoa(os.Getpid())+"-"+purpose+"-")
}

// stagingLive reports whether the process that made staging folder name
// is still running.
func stagingLive(name string) bool {
	rest := strings.TrimPrefix(name, StagingPrefix)
	pid, err := strconv.Atoi(rest[:max(strings.IndexByte(rest, '-'), 0)])
	if err != nil || pid <= 0 {
		return false
	}
	return processAlive(pid)
}
