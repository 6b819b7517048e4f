#!/usr/bin/env bash
# Makes the kk release key, once, before the first signed release:
#
#   bash scripts/release-key.sh ~/secrets/kk-release
#
# writes a new Ed25519 key pair to <path> and <path>.pub (refusing to
# overwrite one), and puts the public key into scripts/install.sh between
# its kk-release-key lines, so that every install checks checksums.txt.sig
# against it. Commit install.sh; keep the private key out of the repository
# (the release job reads it from KK_SIGNING_KEY, see docs/releasing.md).
# With --public <file.pub> it only writes an existing public key into
# install.sh (a key rotation, or a release key kept elsewhere).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1-}" = --public ]; then
  pub=${2:?usage: release-key.sh --public <key.pub>}
else
  key=${1:?usage: release-key.sh <path of the new private key> | --public <key.pub>}
  [ ! -e "$key" ] || { echo "release-key: $key exists; choose another path" >&2; exit 1; }
  ssh-keygen -q -t ed25519 -N '' -C kk-release -f "$key"
  pub=$key.pub
fi
line=$(awk '$1 == "ssh-ed25519" {print $1 " " $2; exit}' "$pub")
[ -n "$line" ] || { echo "release-key: $pub holds no ssh-ed25519 public key" >&2; exit 1; }
awk -v k="$line" '
  /^# kk-release-key-begin$/ {print; print "release_key='"'"'" k "'"'"'"; skip = 1; next}
  /^# kk-release-key-end$/ {skip = 0}
  !skip {print}
' scripts/install.sh >scripts/install.sh.tmp
mv scripts/install.sh.tmp scripts/install.sh
echo "release-key: scripts/install.sh now checks signatures against $line" >&2
