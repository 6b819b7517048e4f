package serve

import (
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/kk-project/kk/internal/jobqueue"
)

// A job that failed on a config.yaml that did not parse is held even
// when the person fixed the file between the job's read and the
// judgement of its failure: the judgement read the file again, found it
// good, and failed the job for good with the config's error, losing an
// accepted post (TestFaultBrokenConfigHoldsTheJobs met it on a loaded
// machine).
func TestConfigFixedBeforeTheJobsFailureIsJudged(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	good, err := os.ReadFile(k.ConfigPath())
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, k.ConfigPath(), "curationThreshold: [\n")
	_, cerr := k.LoadConfig()
	if cerr == nil {
		t.Fatal("the broken config.yaml loads")
	}
	jobErr := fmt.Errorf("placing the note: %w", cerr)
	writeFile(t, k.ConfigPath(), string(good)) // fixed meanwhile
	if got := s.Backend.unconfigured(jobErr); !errors.Is(got, jobqueue.ErrHeld) {
		t.Errorf("the job's failure on the config is its own: %v", got)
	}
	// A failure of the job's own is still its own.
	if got := s.Backend.unconfigured(errors.New("the note inbox/x.md does not exist")); errors.Is(got, jobqueue.ErrHeld) {
		t.Errorf("the job's own failure is held: %v", got)
	}
}
