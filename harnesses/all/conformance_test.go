package all

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/kk-project/kk/internal/harness/harnesstest"
)

var update = flag.Bool("update", false, "rewrite the golden files under harnesses/<id>/testdata")

// TestTranscripts parses every recorded transcript of every adapter
// (harnesses/<id>/testdata/transcripts) against its golden turns.
func TestTranscripts(t *testing.T) {
	for _, a := range adapters() {
		t.Run(a.ID(), func(t *testing.T) {
			dir := filepath.Join("..", a.ID(), "testdata", "transcripts")
			harnesstest.Transcripts(t, a, dir, *update)
		})
	}
}
