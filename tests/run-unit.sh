#!/bin/sh
# Runs the cmocka unit-test programs given as arguments and sums their results.
passed=0; failed=0
for t in "$@"; do
  out=$("$t" 2>&1); rc=$?
  p=$(printf '%s\n' "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' | tail -1)
  f=$(printf '%s\n' "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' | tail -1)
  passed=$((passed + ${p:-0})); failed=$((failed + ${f:-0}))
  if [ $rc -ne 0 ] || [ -z "$p" ]; then
    printf '%s\n' "$out"
    [ -z "$f" ] && failed=$((failed + 1))
    echo "  FAIL  $(basename "$t") (exit $rc)"
  else
    echo "  ok    $(basename "$t") ($p tests)"
  fi
done
echo "unit: $passed passed, $failed failed"
[ "$failed" = 0 ]
