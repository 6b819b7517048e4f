#!/usr/bin/env bash
# Installs the release tools into a cache folder (default ~/.cache/kk-tools,
# or $KK_TOOLS) from the Go module proxy, unless they are already there, and
# prints the folder. Prebuilt release binaries cannot be downloaded on our
# machines, so the tools are compiled: about 4 minutes for goreleaser and 4
# for syft on a cold 2-core machine, nothing when they are cached.
#   goreleaser v2.16.0  the newest that installs here (docs/releasing.md)
#   syft v1.57.1        writes the SBOM of each archive
set -euo pipefail
tools=${KK_TOOLS:-$HOME/.cache/kk-tools}
mkdir -p "$tools"
install() { # <binary> <module@version> <version-probe-args...>
  local bin=$1 mod=$2
  shift 2
  if [ -x "$tools/$bin" ] && [ -f "$tools/$bin.version" ] && [ "$(cat "$tools/$bin.version")" = "$mod" ]; then
    return
  fi
  echo "installing $mod into $tools (slow the first time)" >&2
  GOBIN="$tools" GOFLAGS=-buildvcs=false nice -n 10 go install "$mod"
  echo "$mod" >"$tools/$bin.version"
}
install goreleaser github.com/goreleaser/goreleaser/v2@v2.16.0
install syft github.com/anchore/syft/cmd/syft@v1.57.1
echo "$tools"
