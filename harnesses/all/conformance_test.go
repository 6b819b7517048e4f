package all

import (
	"flag"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/harness/harnesstest"
	"github.com/kk-project/kk/internal/store"
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

// TestKKIgnoreCoversInstalls: every folder an adapter installs files
// into (its skills folder, the folders of its other files) is in the
// .kkignore block kk init writes, unless it is under .ai/kenkeep, which
// document discovery never enters; so /kk-bootstrap never reads kk's
// own skills as the project's documents.
func TestKKIgnoreCoversInstalls(t *testing.T) {
	for _, a := range adapters() {
		p := a.Paths()
		dirs := []string{}
		if p.Skills != "" {
			dirs = append(dirs, p.Skills)
		}
		for _, o := range p.Other {
			if path.Ext(o) != "" {
				o = path.Dir(o)
			}
			dirs = append(dirs, o)
		}
		for _, d := range dirs {
			if d == "." || strings.HasPrefix(d, store.DirName+"/") {
				continue
			}
			if !slices.Contains(store.KKIgnoreDirs, d+"/") {
				t.Errorf("%s installs into %s/, which store.KKIgnoreDirs leaves out", a.ID(), d)
			}
		}
	}
}

// TestKnownHarnessesInConfig: the harness ids config.yaml's model settings
// may name (store.KnownHarnesses, and the enum of the config schema) are
// the registry's.
func TestKnownHarnessesInConfig(t *testing.T) {
	if ids := Registry().IDs(); !slices.Equal(ids, store.KnownHarnesses) {
		t.Errorf("store.KnownHarnesses = %v, the registry holds %v", store.KnownHarnesses, ids)
	}
}
