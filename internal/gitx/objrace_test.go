package gitx

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

// TestWriteBesideAPruneOfEmptyFolders: git gc (its prune-packed step)
// removes each object folder it empties, and may do so between kk
// making the folder and creating its temporary file there, as a job's
// commit writes objects while kk serve's git gc --auto runs beside the
// queue. kk makes the folder again and goes on, as git's own object
// writes do, instead of failing the job ("open …/tmp_obj_…: no such file
// or directory").
func TestWriteBesideAPruneOfEmptyFolders(t *testing.T) {
	s := objectStore{dir: t.TempDir(), algo: algoSHA1}
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // git prune-packed, removing every empty object folder
		defer wg.Done()
		for !stop.Load() {
			for i := range 256 {
				_ = os.Remove(filepath.Join(s.dir, fmt.Sprintf("%02x", i)))
			}
		}
	}()
	defer func() { stop.Store(true); wg.Wait() }()
	for i := range 2000 {
		if _, err := s.write("blob", []byte(fmt.Sprintf("note %d\n", i))); err != nil {
			t.Fatalf("write %d beside a prune of empty folders: %v", i, err)
		}
	}
}
