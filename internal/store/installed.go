package store

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/node"
)

// Installed is .state/installed-version.
type Installed struct {
	SchemaVersion int      `json:"schema_version"`
	Package       string   `json:"package"`
	Version       string   `json:"version"`
	InstalledAt   string   `json:"installed_at"`
	Harnesses     []string `json:"harnesses"`
	// KKCommand is the `kk init --kk-command` the harness hooks were
	// written with; empty means "kk" found on PATH.
	KKCommand string `json:"kk_command,omitempty"`
}

// ReadInstalled reads .state/installed-version. A record a merge left with
// git's conflict markers (a clone where kk's merge driver kk-installed is
// not set up: teammates who installed kk into different coding agents on
// two branches) reads as the merge of its two sides (MergeInstalled), so
// that no command fails on it and kk init --upgrade, which writes it
// again, keeps both sides' harnesses.
func (k *KB) ReadInstalled() (*Installed, error) {
	data, err := k.ReadFile(k.InstalledPath())
	if err != nil {
		return nil, err
	}
	if from, to := node.ConflictMarkers(data); from > 0 {
		ours, base, theirs := conflictSides(data)
		var sides [3]*Installed
		for i, side := range [][]byte{base, ours, theirs} {
			if side == nil {
				continue
			}
			sides[i] = &Installed{}
			if err := json.Unmarshal(side, sides[i]); err != nil {
				return nil, fmt.Errorf("%s holds git conflict markers (lines %d to %d) and a side kk cannot read (%v): keep each side's harnesses in one list, remove the markers, then `git add` it", k.Rel(k.InstalledPath()), from, to, err)
			}
		}
		in, err := MergeInstalled(sides[0], *sides[1], *sides[2], false)
		if err != nil {
			return nil, err
		}
		return &in, nil
	}
	var in Installed
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, fmt.Errorf("%s: %v", k.Rel(k.InstalledPath()), err)
	}
	return &in, nil
}

// GitignoreLines are the lines kk needs in .ai/kenkeep/.gitignore, in order.
var GitignoreLines = []string{"/_sessions/", "/_logs/", "/hooks/", ".state/*", "!.state/installed-version"}

// MergeInstalled merges three versions of the record: base (nil when git
// did not keep it: a conflict written without merge.conflictStyle diff3),
// ours and theirs. The harnesses are merged as a set: one a side added is
// in, one a side removed (from base) is out. installed_at and version take
// the later of the two when both sides changed them (a side that upgraded
// kk); the other fields merge as git merges a line, and two sides that
// changed one of them differently (kk_command) are an error when strict,
// else ours.
func MergeInstalled(base *Installed, o, t Installed, strict bool) (Installed, error) {
	b := Installed{}
	known := base != nil
	if known {
		b = *base
	}
	out := o
	pick := func(name string, bv, ov, tv string, later bool) (string, error) {
		switch {
		case ov == tv, known && tv == bv:
			return ov, nil
		case known && ov == bv:
			return tv, nil
		case later:
			if laterThan(tv, ov) {
				return tv, nil
			}
			return ov, nil
		case !known && ov == "":
			return tv, nil
		case !known || !strict:
			return ov, nil
		}
		return "", fmt.Errorf("installed-version: both sides changed %q differently", name)
	}
	var err error
	if out.Package, err = pick("package", b.Package, o.Package, t.Package, false); err != nil {
		return out, err
	}
	if out.KKCommand, err = pick("kk_command", b.KKCommand, o.KKCommand, t.KKCommand, false); err != nil {
		return out, err
	}
	if out.InstalledAt, err = pick("installed_at", b.InstalledAt, o.InstalledAt, t.InstalledAt, true); err != nil {
		return out, err
	}
	if out.Version, err = pick("version", b.Version, o.Version, t.Version, true); err != nil {
		return out, err
	}
	out.SchemaVersion = max(o.SchemaVersion, t.SchemaVersion)
	harnesses := []string{}
	for _, h := range append(append([]string{}, o.Harnesses...), t.Harnesses...) {
		removed := slices.Contains(b.Harnesses, h) && (!slices.Contains(o.Harnesses, h) || !slices.Contains(t.Harnesses, h))
		if !removed && !slices.Contains(harnesses, h) {
			harnesses = append(harnesses, h)
		}
	}
	slices.Sort(harnesses)
	out.Harnesses = harnesses
	return out, nil
}

// laterThan reports whether a is a later date (2026-12-01) or release
// (v1.10.0) than b: their runs of digits compared as numbers, left to
// right, and the rest as text. An empty value (a development build) is
// earlier than any other.
func laterThan(a, b string) bool {
	split := func(s string) []string {
		var parts []string
		for i := 0; i < len(s); {
			j := i
			digit := s[i] >= '0' && s[i] <= '9'
			for j < len(s) && (s[j] >= '0' && s[j] <= '9') == digit {
				j++
			}
			parts = append(parts, s[i:j])
			i = j
		}
		return parts
	}
	pa, pb := split(a), split(b)
	for i := 0; i < len(pa) && i < len(pb); i++ {
		x, y := pa[i], pb[i]
		if x == y {
			continue
		}
		if x[0] >= '0' && x[0] <= '9' && y[0] >= '0' && y[0] <= '9' {
			x, y = strings.TrimLeft(x, "0"), strings.TrimLeft(y, "0")
			if len(x) != len(y) {
				return len(x) > len(y)
			}
		}
		return x > y
	}
	return len(pa) > len(pb)
}
