package store

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/kk-project/kk/internal/atomicfile"
)

// OpenLog opens the log file name under _logs/ for appending, creating
// the folder and the file (the day's log of kk mcp --log-file). A log that
// is not a regular file is refused at once with an error naming it
// (atomicfile.OpenAppend): opening a named pipe for writing would wait
// for a reader, for ever when none comes.
func (k *KB) OpenLog(name string) (*os.File, error) {
	dir := k.LogsDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", k.Rel(dir), err)
	}
	return atomicfile.OpenAppend(filepath.Join(dir, name), 0o644)
}
