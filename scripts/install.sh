#!/bin/sh
# Installs kk from a release: downloads the archive for this platform,
# checksums.txt and its signature, checks the signature with the kk release
# key below (ssh-keygen -Y verify) and the archive's SHA-256 against
# checksums.txt, and installs kk, its manual pages and its shell
# completions under a prefix. Nothing is installed unless both checks pass.
# Run `sh install.sh --help` (or `curl ... | sh -s -- --help`) for the options.
set -eu

usage() {
	cat <<'USAGE'
Install kk from a release.

  curl -fsSL https://raw.githubusercontent.com/kk-project/kk/main/scripts/install.sh | sh
  curl -fsSL https://raw.githubusercontent.com/kk-project/kk/main/scripts/install.sh | sh -s -- --version 1.2.3
  sh install.sh [--version X.Y.Z] [--prefix DIR] [--base-url URL] [--skip-signature]

  --version         the release to install (default: the latest)
  --prefix          where to install: DIR/bin/kk, DIR/share/man/man1,
                    DIR/share/{bash-completion,zsh,fish}/... (default: $HOME/.local)
  --base-url        the folder holding checksums.txt and the archives
                    (default: the GitHub release of --version, or the latest)
  --skip-signature  do not check checksums.txt.sig (the archive is still
                    checked against checksums.txt); for a build of your own
  -h, --help        print this help

Environment: KK_VERSION, KK_PREFIX and KK_BASE_URL set the same;
KK_RELEASE_KEY replaces the release key this script carries (an
"ssh-ed25519 AAAA..." public key), for releases you sign yourself.

The check, by hand: download checksums.txt, checksums.txt.sig and an
archive from the release, then (OpenSSH 8.1 or newer)
  echo "kk-release <the key in this script>" > allowed_signers
  ssh-keygen -Y verify -f allowed_signers -I kk-release -n file -s checksums.txt.sig < checksums.txt
  sha256sum --check --ignore-missing checksums.txt
Linux and macOS, amd64 and arm64; on Windows use the zip or Scoop.
USAGE
}

# The kk release key: checksums.txt.sig must be its signature of
# checksums.txt. scripts/release-key.sh writes it between these lines.
# kk-release-key-begin
release_key=''
# kk-release-key-end

repo=kk-project/kk
version=${KK_VERSION:-}
prefix=${KK_PREFIX:-${HOME:-}/.local}
base_url=${KK_BASE_URL:-}
key=${KK_RELEASE_KEY:-$release_key}
skip_signature=0

die() {
	echo "kk-install: $*" >&2
	exit 1
}

while [ $# -gt 0 ]; do
	case $1 in
	--version) [ $# -ge 2 ] || die "--version needs a value"; version=$2; shift 2 ;;
	--version=*) version=${1#*=}; shift ;;
	--prefix) [ $# -ge 2 ] || die "--prefix needs a value"; prefix=$2; shift 2 ;;
	--prefix=*) prefix=${1#*=}; shift ;;
	--base-url) [ $# -ge 2 ] || die "--base-url needs a value"; base_url=$2; shift 2 ;;
	--base-url=*) base_url=${1#*=}; shift ;;
	--skip-signature) skip_signature=1; shift ;;
	-h | --help) usage; exit 0 ;;
	*) die "unknown argument $1 (see --help)" ;;
	esac
done
version=${version#v}
[ -n "$prefix" ] || die "no prefix: set --prefix or HOME"

case $(uname -s) in
Linux) os=linux ;;
Darwin) os=darwin ;;
*) die "no kk release for $(uname -s) from this script; on Windows download the zip or use Scoop" ;;
esac
case $(uname -m) in
x86_64 | amd64) arch=amd64 ;;
aarch64 | arm64) arch=arm64 ;;
*) die "no kk release for the $(uname -m) processor; build from source: go install github.com/$repo/cmd/kk@latest" ;;
esac

if [ -z "$base_url" ]; then
	if [ -n "$version" ]; then
		base_url=https://github.com/$repo/releases/download/v$version
	else
		base_url=https://github.com/$repo/releases/latest/download
	fi
fi
base_url=${base_url%/}

if command -v curl >/dev/null 2>&1; then
	fetch() { curl -fsSL --proto '=https,http' -o "$2" "$1"; }
elif command -v wget >/dev/null 2>&1; then
	fetch() { wget -q -O "$2" "$1"; }
else
	die "neither curl nor wget is installed; install one of them and run this again"
fi
if command -v sha256sum >/dev/null 2>&1; then
	sha256() { sha256sum "$1" | cut -d ' ' -f 1; }
elif command -v shasum >/dev/null 2>&1; then
	sha256() { shasum -a 256 "$1" | cut -d ' ' -f 1; }
else
	die "neither sha256sum nor shasum is installed, so the download cannot be checked"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kk-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

fetch "$base_url/checksums.txt" "$tmp/checksums.txt" || die "cannot download $base_url/checksums.txt; check --version and --base-url"

# The signature of checksums.txt, by the kk release key.
if [ "$skip_signature" = 1 ]; then
	echo "kk-install: warning: --skip-signature: the signature of checksums.txt is not checked" >&2
elif [ -z "$key" ]; then
	echo "kk-install: warning: this install.sh carries no release key, so the signature of checksums.txt is not checked (scripts/release-key.sh adds it)" >&2
else
	command -v ssh-keygen >/dev/null 2>&1 || die "ssh-keygen (OpenSSH 8.1 or newer) is needed to check the release signature; install it (Debian and Ubuntu: openssh-client), or pass --skip-signature to rely on checksums.txt alone"
	fetch "$base_url/checksums.txt.sig" "$tmp/checksums.txt.sig" || die "cannot download $base_url/checksums.txt.sig: the release is not signed; nothing was installed"
	printf 'kk-release %s\n' "$key" >"$tmp/allowed_signers"
	if ! ssh-keygen -Y verify -f "$tmp/allowed_signers" -I kk-release -n file -s "$tmp/checksums.txt.sig" <"$tmp/checksums.txt" >"$tmp/verify.log" 2>&1; then
		die "checksums.txt at $base_url is not signed by the kk release key ($(head -n 1 "$tmp/verify.log")); it was changed or comes from elsewhere; nothing was installed"
	fi
	echo "kk-install: checksums.txt is signed by the kk release key" >&2
fi

# The archive for this platform, as checksums.txt names it.
if [ -n "$version" ]; then
	want="kk_${version}_${os}_${arch}.tar.gz"
	line=$(awk -v f="$want" '$2 == f || $2 == "*" f' "$tmp/checksums.txt")
else
	line=$(awk -v s="_${os}_${arch}.tar.gz" 'substr($2, length($2) - length(s) + 1) == s && $2 ~ /^\*?kk_/' "$tmp/checksums.txt")
fi
[ -n "$line" ] || die "checksums.txt at $base_url lists no kk archive for $os/$arch${version:+ version $version}"
[ "$(printf '%s\n' "$line" | wc -l)" -eq 1 ] || die "checksums.txt at $base_url lists several kk archives for $os/$arch; name one with --version"
expected=$(printf '%s\n' "$line" | awk '{print $1}')
archive=$(printf '%s\n' "$line" | awk '{print $2}')
archive=${archive#\*}
case $archive in
*/* | .*) die "checksums.txt names an unexpected file: $archive" ;;
esac
version=${archive#kk_}
version=${version%_"${os}"_"${arch}".tar.gz}

echo "kk-install: downloading $archive" >&2
fetch "$base_url/$archive" "$tmp/$archive" || die "cannot download $base_url/$archive"
actual=$(sha256 "$tmp/$archive")
if [ "$actual" != "$expected" ]; then
	die "checksum mismatch for $archive: checksums.txt says $expected, the download is $actual. The archive is damaged or was tampered with; nothing was installed."
fi

mkdir "$tmp/x"
tar -xzf "$tmp/$archive" -C "$tmp/x" || die "cannot unpack $archive"
[ -f "$tmp/x/kk" ] || die "$archive holds no kk binary"

# Each file is copied beside its destination and renamed over it, so that
# a running kk is never half overwritten.
put() { # <source> <destination> <mode>
	mkdir -p "$(dirname "$2")"
	cp "$1" "$2.tmp.$$"
	chmod "$3" "$2.tmp.$$"
	mv -f "$2.tmp.$$" "$2"
}
put "$tmp/x/kk" "$prefix/bin/kk" 0755
for page in "$tmp"/x/man/man1/*.1; do
	if [ -f "$page" ]; then put "$page" "$prefix/share/man/man1/$(basename "$page")" 0644; fi
done
if [ -f "$tmp/x/completions/kk.bash" ]; then put "$tmp/x/completions/kk.bash" "$prefix/share/bash-completion/completions/kk" 0644; fi
if [ -f "$tmp/x/completions/_kk" ]; then put "$tmp/x/completions/_kk" "$prefix/share/zsh/site-functions/_kk" 0644; fi
if [ -f "$tmp/x/completions/kk.fish" ]; then put "$tmp/x/completions/kk.fish" "$prefix/share/fish/vendor_completions.d/kk.fish" 0644; fi

echo "kk-install: installed kk $version in $prefix/bin/kk" >&2
case ":${PATH:-}:" in
*":$prefix/bin:"*) ;;
*) echo "kk-install: $prefix/bin is not on your PATH; add it, e.g. export PATH=\"$prefix/bin:\$PATH\"" >&2 ;;
esac
