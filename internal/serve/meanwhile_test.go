package serve

import (
	"errors"
	"fmt"
	"testing"

	"github.com/kk-project/kk/internal/jobqueue"
	"github.com/kk-project/kk/internal/txn"
)

// A job whose transaction met a file another program saved at the same
// moment (txn.ErrChangedMeanwhile: nothing was written) is put back and
// runs again, seeing the save, rather than failing with its post.
func TestAFileSavedMeanwhileRunsTheJobAgain(t *testing.T) {
	b := New(Options{KB: newRepo(t, 0)})
	err := fmt.Errorf("applying job 7: nodes/a.md %w (another program wrote it after kk read it)", txn.ErrChangedMeanwhile)
	if got := b.unwritable(err); !errors.Is(got, jobqueue.ErrHeld) {
		t.Errorf("unwritable(%v) = %v, want the job held and run again", err, got)
	}
}
