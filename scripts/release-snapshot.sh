#!/usr/bin/env bash
# The full release dry run: installs goreleaser and syft if needed
# (scripts/release-tools.sh), checks .goreleaser.yaml, builds a snapshot
# release of all six targets into dist/ without publishing anything, checks
# what it made (archives and their contents, checksums, SBOMs, the Homebrew
# cask and the Scoop manifest), then installs from it with
# scripts/install.sh over a loopback HTTP server (TestInstallSnapshot).
# See docs/releasing.md.
set -euo pipefail
cd "$(dirname "$0")/.."
tools=$(bash scripts/release-tools.sh)
export PATH="$tools:$PATH"

goreleaser check
start=$(date +%s)
nice -n 10 goreleaser release --snapshot --clean
echo "snapshot built in $(($(date +%s) - start)) s" >&2

fail() {
  echo "release-snapshot: $*" >&2
  exit 1
}
cd dist
archives=(kk_*_linux_amd64.tar.gz kk_*_linux_arm64.tar.gz kk_*_darwin_amd64.tar.gz kk_*_darwin_arm64.tar.gz kk_*_windows_amd64.zip kk_*_windows_arm64.zip)
for a in "${archives[@]}"; do
  [ -f "$a" ] || fail "no archive $a"
  [ -s "$a.sbom.json" ] || fail "no SBOM for $a"
  grep -q '"spdxVersion"' "$a.sbom.json" || fail "$a.sbom.json is not an SPDX document"
  grep -q 'github.com/spf13/cobra' "$a.sbom.json" || fail "$a.sbom.json does not list kk's Go modules"
  grep -q " $a\$" checksums.txt || fail "checksums.txt does not list $a"
  case $a in
  *.zip) list=$(unzip -Z1 "$a") ;;
  *) list=$(tar -tzf "$a") ;;
  esac
  for f in README.md LICENSE completions/kk.bash completions/_kk completions/kk.fish completions/kk.ps1 man/man1/kk.1 man/man1/kk-version.1; do
    grep -qx "$f" <<<"$list" || fail "$a lacks $f"
  done
  case $a in
  *windows*) grep -qx kk.exe <<<"$list" || fail "$a lacks kk.exe" ;;
  *) grep -qx kk <<<"$list" || fail "$a lacks kk" ;;
  esac
done
[ "$(grep -c '\.tar\.gz$\|\.zip$' checksums.txt)" -eq 6 ] || fail "checksums.txt does not list exactly six archives"
sha256sum --check --ignore-missing --quiet checksums.txt || fail "checksums.txt does not match the files"
[ -s homebrew/Casks/kk.rb ] || fail "no Homebrew cask (dist/homebrew/Casks/kk.rb)"
grep -q 'binary "kk"' homebrew/Casks/kk.rb || fail "the Homebrew cask installs no kk binary"
[ -s scoop/kk.json ] || fail "no Scoop manifest (dist/scoop/kk.json)"
grep -q '"bin": "kk.exe"\|"kk.exe"' scoop/kk.json || fail "the Scoop manifest installs no kk.exe"
cd ..

KK_RELEASE_DIST="$PWD/dist" go test -count=1 -run 'TestInstallSnapshot' -v ./cmd/kk
echo "release-snapshot: ok: 6 archives with completions, man pages and SBOMs; checksums; Homebrew cask; Scoop manifest; install.sh installed the snapshot" >&2
