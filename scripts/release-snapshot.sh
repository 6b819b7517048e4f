#!/usr/bin/env bash
# The full release dry run: installs goreleaser and syft if needed
# (scripts/release-tools.sh), checks .goreleaser.yaml, builds a snapshot
# release of all six targets into dist/ without publishing anything, checks
# what it made (archives and their contents: the third-party notices and
# every man page among them; checksums and their signature; SBOMs; the
# Homebrew cask, with every man page, and the Scoop manifest), then
# installs from it with scripts/install.sh over a loopback HTTP server,
# signature checked (TestInstallSnapshot). The snapshot is signed with
# KK_SIGNING_KEY, or with a key made for this run. See docs/releasing.md.
set -euo pipefail
cd "$(dirname "$0")/.."
tools=$(bash scripts/release-tools.sh)
export PATH="$tools:$PATH"

# The signing key: the release key when KK_SIGNING_KEY names it, else a
# throwaway one (a snapshot is published nowhere).
keydir=$(mktemp -d "${TMPDIR:-/tmp}/kk-snapshot-key.XXXXXX")
trap 'rm -rf "$keydir"' EXIT
if [ -z "${KK_SIGNING_KEY:-}" ]; then
  ssh-keygen -q -t ed25519 -N '' -C kk-release -f "$keydir/key"
  export KK_SIGNING_KEY="$keydir/key"
fi
pubfile=$KK_SIGNING_KEY.pub
if [ ! -f "$pubfile" ]; then
  pubfile=$keydir/release.pub
  ssh-keygen -y -f "$KK_SIGNING_KEY" >"$pubfile"
fi
KK_RELEASE_KEY=$(awk '{print $1 " " $2; exit}' "$pubfile")
export KK_RELEASE_KEY

goreleaser check
start=$(date +%s)
nice -n 10 goreleaser release --snapshot --clean
echo "snapshot built in $(($(date +%s) - start)) s" >&2

fail() {
  echo "release-snapshot: $*" >&2
  exit 1
}
cd dist
pages=$(cd ../docs/man && ls ./*.1 | sed 's|^\./|man/man1/|')
npages=$(wc -l <<<"$pages")
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
  for f in README.md LICENSE THIRD_PARTY_NOTICES.md completions/kk.bash completions/_kk completions/kk.fish completions/kk.ps1 $pages; do
    grep -qx "$f" <<<"$list" || fail "$a lacks $f"
  done
  case $a in
  *.zip) notices=$(unzip -p "$a" THIRD_PARTY_NOTICES.md) ;;
  *) notices=$(tar -xzOf "$a" THIRD_PARTY_NOTICES.md) ;;
  esac
  for m in "Go standard library" github.com/spf13/cobra modernc.org/sqlite "github.com/santhosh-tekuri/jsonschema/v6" "Apache License"; do
    grep -qF "$m" <<<"$notices" || fail "$a: THIRD_PARTY_NOTICES.md does not cover $m"
  done
  case $a in
  *windows*) grep -qx kk.exe <<<"$list" || fail "$a lacks kk.exe" ;;
  *) grep -qx kk <<<"$list" || fail "$a lacks kk" ;;
  esac
done
[ "$(grep -c '\.tar\.gz$\|\.zip$' checksums.txt)" -eq 6 ] || fail "checksums.txt does not list exactly six archives"
sha256sum --check --ignore-missing --quiet checksums.txt || fail "checksums.txt does not match the files"
[ -s checksums.txt.sig ] || fail "checksums.txt is not signed (no checksums.txt.sig)"
printf 'kk-release %s\n' "$KK_RELEASE_KEY" >"$keydir/allowed_signers"
ssh-keygen -Y verify -f "$keydir/allowed_signers" -I kk-release -n file -s checksums.txt.sig <checksums.txt >/dev/null ||
  fail "checksums.txt.sig does not verify with the signing key"
[ -s homebrew/Casks/kk.rb ] || fail "no Homebrew cask (dist/homebrew/Casks/kk.rb)"
grep -q 'binary "kk"' homebrew/Casks/kk.rb || fail "the Homebrew cask installs no kk binary"
for p in $pages; do
  grep -qF "manpage \"$p\"" homebrew/Casks/kk.rb || fail "the Homebrew cask does not install $p"
done
[ -s scoop/kk.json ] || fail "no Scoop manifest (dist/scoop/kk.json)"
grep -q '"bin": "kk.exe"\|"kk.exe"' scoop/kk.json || fail "the Scoop manifest installs no kk.exe"
cd ..

KK_RELEASE_DIST="$PWD/dist" go test -count=1 -run 'TestInstallSnapshot' -v ./cmd/kk
echo "release-snapshot: ok: 6 archives with notices, completions, $npages man pages and SBOMs; checksums signed and verified; Homebrew cask with every man page; Scoop manifest; install.sh checked the signature and installed the snapshot" >&2
