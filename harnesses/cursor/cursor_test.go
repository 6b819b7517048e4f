package cursor

import (
	"bytes"
	"encoding/json"
	"flag"
	"path/filepath"
	"testing"

	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/harness/harnesstest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// testSkills stand in for the shipped skills in install tests.
var testSkills = harnesstest.TwoSkills

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	harnesstest.Golden(t, filepath.Join("testdata", "golden", name), got, *update)
}

// The doctor check levels.
const (
	levelOK   = harness.LevelOK
	levelWarn = harness.LevelWarn
	levelErr  = harness.LevelError
)

// The shared helpers, under the names the tests use.
var (
	env     = harnesstest.Env
	read    = harnesstest.ReadFile
	write   = harnesstest.WriteFile
	exists  = harnesstest.Exists
	marshal = harness.MustRawJSON

	shippedSkills = harnesstest.ShippedSkills
)

func install(t *testing.T, root, command string) []harness.Change {
	t.Helper()
	return harnesstest.Install(t, New(), root, command, testSkills)
}

func uninstall(t *testing.T, root string) []harness.Change {
	t.Helper()
	return harnesstest.Uninstall(t, New(), root, testSkills)
}

func compactBytes(t *testing.T, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, data); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
