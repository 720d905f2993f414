#!/usr/bin/env bash
# Measures p4-to-rust against a folder of P4 programs written elsewhere (for
# instance a sample of p4c's testdata), the way README.md's "Compiler
# limitations" figures were taken:
#
#   CORPUS/stf/NAME.p4 + NAME.stf   must compile, and pass `p4-to-rust stf`
#   CORPUS/compile/NAME.p4          must compile
#   CORPUS/reject/NAME.p4           must be refused (exit status 1, no panic)
#   CORPUS/inc/                     include folder (fragments such as p4c's
#                                   arith-skeleton.p4)
#
# Usage: measure_corpus.sh CORPUS [--stf]   (BIN=path/to/p4-to-rust to pick
# a build; the default is the release build of this checkout). Prints one
# line per figure and the failures; nothing in CORPUS is changed.
set -u
corpus=${1:?usage: measure_corpus.sh CORPUS [--stf]}
here=$(cd "$(dirname "$0")" && pwd)
bin=${BIN:-$here/../../../target/release/p4-to-rust}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

ok=0; failed=0
for f in "$corpus"/stf/*.p4 "$corpus"/compile/*.p4; do
  [ -e "$f" ] || continue
  if timeout 120 "$bin" compile -I "$corpus/inc" "$f" -o "$out/x.rs" >"$out/log" 2>&1; then
    ok=$((ok + 1))
  else
    failed=$((failed + 1))
    echo "does not compile: $f: $(grep -m1 -E '^error|panicked' "$out/log")"
  fi
done
echo "compile: $ok of $((ok + failed))"

refused=0; accepted=0
for f in "$corpus"/reject/*.p4; do
  [ -e "$f" ] || continue
  timeout 120 "$bin" compile -I "$corpus/inc" "$f" -o "$out/x.rs" >"$out/log" 2>&1
  case $? in
    0) accepted=$((accepted + 1)); echo "accepted, must be refused: $f" ;;
    1) refused=$((refused + 1)) ;;
    *) echo "crashed: $f" ;;
  esac
done
echo "must-reject accepted: $accepted of $((refused + accepted))"

if [ "${2:-}" = --stf ]; then
  "$bin" stf -I "$corpus/inc" "$corpus/stf" >"$out/stf" 2>&1
  grep -E '^FAIL' "$out/stf"
  echo "stf: $(tail -1 "$out/stf")"
fi
