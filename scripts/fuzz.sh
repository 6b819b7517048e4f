#!/usr/bin/env bash
# Runs every fuzz target of kk (each `func Fuzz…` in a _test.go file) for a
# short time: FUZZTIME each, 100000 executions by default, which keeps the
# whole run (the targets and their instrumented builds) within a few minutes
# on two cores. The default is a count, not a duration: with a duration, Go
# 1.26's fuzzing coordinator can fail a target with a bare "context deadline
# exceeded" at the end of the window on a loaded machine, having found
# nothing (go.dev/issue/75804, fixed in Go 1.27); a count has no deadline.
# `go test ./...` already runs the seed corpora; this searches for new
# inputs. A failure leaves the input under the package's testdata/fuzz/;
# fix the bug and commit the input, which then runs with every `go test`.
#
#   bash scripts/fuzz.sh                  every target, 100000 executions each
#   FUZZTIME=2m bash scripts/fuzz.sh      longer (a duration: see above)
#   bash scripts/fuzz.sh FuzzFrameReader  only the targets named
set -euo pipefail
cd "$(dirname "$0")/.."

fuzztime=${FUZZTIME:-100000x}
targets=$(grep -rHo --include='*_test.go' --exclude-dir=.git '^func Fuzz[A-Za-z0-9_]*' . | sort)
if [ -z "$targets" ]; then
  echo "fuzz.sh: no fuzz targets found" >&2
  exit 1
fi
ran=0
while IFS= read -r t; do
  file=${t%%:*}
  name=${t##*func }
  if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$name"; then
    continue
  fi
  pkg=./$(dirname "${file#./}")
  echo "fuzz: $name in $pkg for $fuzztime"
  go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "$pkg"
  ran=$((ran + 1))
done <<<"$targets"
if [ "$ran" -eq 0 ]; then
  echo "fuzz.sh: no target named $*" >&2
  exit 1
fi
