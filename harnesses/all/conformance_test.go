package all

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/kk-project/kk/internal/harness/harnesstest"
)

var update = flag.Bool("update", false, "rewrite the golden files under harnesses/<id>/testdata")

// TestConformance runs the contract every adapter keeps (see
// harnesstest.Conformance) over every adapter kk ships, with its
// fixtures under harnesses/<id>/testdata.
func TestConformance(t *testing.T) {
	for _, a := range adapters() {
		t.Run(a.ID(), func(t *testing.T) {
			harnesstest.Conformance(t, a, filepath.Join("..", a.ID(), "testdata"), *update)
		})
	}
}

// TestRegistry: every adapter's spec is valid and the registry holds
// them all, in detection order without ties.
func TestRegistry(t *testing.T) {
	r := Registry()
	if len(r.IDs()) != len(adapters()) {
		t.Fatalf("registry holds %v", r.IDs())
	}
	seen := map[int]string{}
	for _, a := range r.ByPriority() {
		p := a.Spec().Priority
		if other, dup := seen[p]; dup {
			t.Errorf("%s and %s share detection priority %d", a.ID(), other, p)
		}
		seen[p] = a.ID()
	}
}
