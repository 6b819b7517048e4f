package cli

import (
	"context"
	"fmt"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// versionInfo is what `kk version` prints.
type versionInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	Date      string `json:"date"`
	GoVersion string `json:"go_version"`
	Module    string `json:"module"`
	Platform  string `json:"platform"`
}

type versionOpts struct{}

func newVersionCmd(app *App) *cobra.Command {
	var o versionOpts
	return &cobra.Command{
		Use:   "version",
		Short: "Print kk's version, commit, build date and Go version",
		Long: `Print the version of this kk binary, the commit and date it was built
from, the Go version that compiled it, its module path and its platform.

A release build carries these in its link flags (see .goreleaser.yaml). A
binary built by "go install github.com/kk-project/kk/cmd/kk@<version>" or
"go build" reads them from the build information Go embeds: the module
version, and the commit and date from the version control stamp or from a
pseudo-version. What is unknown is printed as an empty string.`,
		Example: `  kk version
  kk version --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runVersion(cmd.Context(), app, o)
		},
	}
}

func runVersion(_ context.Context, app *App, _ versionOpts) error {
	info := currentVersion()
	if app.JSON {
		return app.printJSON(info)
	}
	rows := [][2]string{
		{"version", info.Version}, {"commit", info.Commit}, {"date", info.Date},
		{"go", info.GoVersion}, {"module", info.Module}, {"platform", info.Platform},
	}
	for _, r := range rows {
		if app.IO.OutTTY {
			fmt.Fprintf(app.IO.Out, "%-9s %s\n", r[0]+":", r[1])
		} else {
			fmt.Fprintf(app.IO.Out, "%s\t%s\n", r[0], r[1])
		}
	}
	return nil
}

// currentVersion describes this binary.
func currentVersion() versionInfo {
	bi, _ := debug.ReadBuildInfo()
	return resolveVersion(bi, version, commit, date)
}

// pseudoVersion matches the tail of a Go pseudo-version
// (v0.0.0-20260102150405-abcdef123456, v1.2.4-0.20260102150405-abcdef123456).
var pseudoVersion = regexp.MustCompile(`[-.](\d{14})-([0-9a-f]{12})(?:\+incompatible)?$`)

// resolveVersion combines the link-time values of a release build with the
// build information of any other build. Link-time values win.
func resolveVersion(bi *debug.BuildInfo, ldVersion, ldCommit, ldDate string) versionInfo {
	info := versionInfo{
		Version:   ldVersion,
		Commit:    ldCommit,
		Date:      ldDate,
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
	}
	if bi == nil {
		return info
	}
	if bi.GoVersion != "" {
		info.GoVersion = bi.GoVersion
	}
	info.Module = bi.Main.Path
	modVersion := bi.Main.Version
	if modVersion == "(devel)" {
		modVersion = ""
	}
	if (info.Version == "" || info.Version == "dev") && modVersion != "" {
		info.Version = strings.TrimPrefix(modVersion, "v")
	}
	var vcsRevision, vcsTime string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			vcsRevision = s.Value
		case "vcs.time":
			vcsTime = s.Value
		}
	}
	if m := pseudoVersion.FindStringSubmatch(modVersion); m != nil {
		if vcsRevision == "" {
			vcsRevision = m[2]
		}
		if t, err := time.Parse("20060102150405", m[1]); err == nil && vcsTime == "" {
			vcsTime = t.UTC().Format(time.RFC3339)
		}
	}
	if info.Commit == "" {
		info.Commit = vcsRevision
	}
	if info.Date == "" {
		info.Date = vcsTime
	}
	return info
}

// versionString is the text of `kk --version`.
func versionString() string {
	info := currentVersion()
	v := info.Version
	if info.Commit != "" {
		v += " (" + info.Commit
		if info.Date != "" {
			v += ", " + info.Date
		}
		v += ")"
	}
	return v
}
