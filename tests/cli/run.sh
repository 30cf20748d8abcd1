#!/bin/sh
# Runs every tests/cli/t_*.sh against $VMXSIM and prints "N passed, N failed".
# Usage: VMXSIM=path/to/vmxsim tests/cli/run.sh [t_name.sh...]   (VERBOSE=1 lists each check)
here=$(cd "$(dirname "$0")" && pwd)
: "${VMXSIM:?set VMXSIM to the program under test}"
export VMXSIM ROOT="$(cd "$here/../.." && pwd)"
PASSED=0
FAILED=0
. "$here/lib.sh"
files=${*:-$(ls "$here"/t_*.sh)}
for f in $files; do
  CASE=$(basename "$f" .sh)
  T=$(mktemp -d)
  before=$FAILED
  ( cd "$T" && . "$f"; echo "$PASSED $FAILED" > "$T/.counts" )
  read p fl < "$T/.counts" 2>/dev/null || { p=$PASSED; fl=$((FAILED + 1)); echo "  FAIL  $CASE: aborted"; }
  PASSED=$p; FAILED=$fl
  [ "$FAILED" = "$before" ] && echo "  ok    $CASE" || echo "  FAIL  $CASE"
  rm -rf "$T"
done
echo "cli: $PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
