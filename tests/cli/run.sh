#!/bin/sh
# Runs every tests/cli/t_*.sh against $VMXSIM; ends with "cli: N passed, M failed, K skipped".
# Usage: VMXSIM=path/to/vmxsim tests/cli/run.sh [t_name.sh...]   (VERBOSE=1 lists each check)
# Each file runs in its own scratch directory ($T) with the helpers of lib.sh. A file that
# runs no check and skips nothing fails: a test that asserts nothing proves nothing.
here=$(cd "$(dirname "$0")" && pwd)
: "${VMXSIM:?set VMXSIM to the program under test}"
ROOT=${ROOT:-$(cd "$here/../.." && pwd)}
export VMXSIM ROOT
PASSED=0
FAILED=0
SKIPPED=0
. "$here/lib.sh"
files=${*:-$(ls "$here"/t_*.sh)}
for f in $files; do
  case $f in /*) ;; *) f=$PWD/$f ;; esac   # each file runs in its own directory
  CASE=$(basename "$f" .sh)
  T=$(mktemp -d)
  p0=$PASSED; f0=$FAILED; s0=$SKIPPED
  ( cd "$T" && XDG_CACHE_HOME="$T/.cache" && export XDG_CACHE_HOME && . "$f"; echo "$PASSED $FAILED $SKIPPED" > "$T/.counts" )
  if ! read -r PASSED FAILED SKIPPED 2>/dev/null < "$T/.counts"; then
    PASSED=$p0; FAILED=$((f0 + 1)); SKIPPED=$s0
    echo "  FAIL  $CASE: aborted (the file exited before its end)"
  elif [ "$FAILED" != "$f0" ]; then
    echo "  FAIL  $CASE"
  elif [ "$PASSED" != "$p0" ]; then
    echo "  ok    $CASE"
  elif [ "$SKIPPED" = "$s0" ]; then
    FAILED=$((FAILED + 1))
    echo "  FAIL  $CASE: ran no check"
  fi                                   # only skipped: its skip lines said why
  rm -rf "$T"
done
echo "cli: $PASSED passed, $FAILED failed, $SKIPPED skipped"
[ "$FAILED" = 0 ]
