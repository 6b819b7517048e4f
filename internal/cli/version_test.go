package cli

import (
	"runtime/debug"
	"testing"
)

func TestResolveVersion(t *testing.T) {
	const mod = "github.com/kk-project/kk"
	for _, tc := range []struct {
		name                  string
		bi                    *debug.BuildInfo
		ldVersion, ldCommit   string
		ldDate                string
		version, commit, date string
		module                string
	}{
		{
			name:      "release build: link flags win",
			bi:        &debug.BuildInfo{Main: debug.Module{Path: mod, Version: "(devel)"}},
			ldVersion: "1.2.3", ldCommit: "abc1234", ldDate: "2026-11-01T10:00:00Z",
			version: "1.2.3", commit: "abc1234", date: "2026-11-01T10:00:00Z", module: mod,
		},
		{
			name:      "go install of a tag",
			bi:        &debug.BuildInfo{Main: debug.Module{Path: mod, Version: "v1.4.0"}},
			ldVersion: "dev",
			version:   "1.4.0", module: mod,
		},
		{
			name:      "go install of a pseudo-version",
			bi:        &debug.BuildInfo{Main: debug.Module{Path: mod, Version: "v0.0.0-20261120093000-0123456789ab"}},
			ldVersion: "dev",
			version:   "0.0.0-20261120093000-0123456789ab", commit: "0123456789ab", date: "2026-11-20T09:30:00Z", module: mod,
		},
		{
			name:      "go install of a pseudo-version after a tag",
			bi:        &debug.BuildInfo{Main: debug.Module{Path: mod, Version: "v1.2.4-0.20261120093000-0123456789ab"}},
			ldVersion: "dev",
			version:   "1.2.4-0.20261120093000-0123456789ab", commit: "0123456789ab", date: "2026-11-20T09:30:00Z", module: mod,
		},
		{
			name: "go build in a git checkout",
			bi: &debug.BuildInfo{Main: debug.Module{Path: mod, Version: "(devel)"}, Settings: []debug.BuildSetting{
				{Key: "vcs.revision", Value: "fedcba9876543210"}, {Key: "vcs.time", Value: "2026-11-02T03:04:05Z"},
			}},
			ldVersion: "dev",
			version:   "dev", commit: "fedcba9876543210", date: "2026-11-02T03:04:05Z", module: mod,
		},
		{
			name:      "no build information",
			ldVersion: "dev",
			version:   "dev",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := resolveVersion(tc.bi, tc.ldVersion, tc.ldCommit, tc.ldDate)
			if got.Version != tc.version || got.Commit != tc.commit || got.Date != tc.date || got.Module != tc.module {
				t.Errorf("got version %q commit %q date %q module %q; want %q %q %q %q",
					got.Version, got.Commit, got.Date, got.Module, tc.version, tc.commit, tc.date, tc.module)
			}
			if got.GoVersion == "" || got.Platform == "" {
				t.Errorf("go version %q, platform %q", got.GoVersion, got.Platform)
			}
		})
	}
}
