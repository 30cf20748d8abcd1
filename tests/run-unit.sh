#!/bin/sh
# Runs the cmocka unit-test programs given as arguments and sums their results:
# "unit: N passed, M failed, K skipped". A program that crashes or prints no cmocka summary
# counts as one failure; skipped tests (cmocka's skip()) are listed by name.
CMOCKA_MESSAGE_OUTPUT=stdout; export CMOCKA_MESSAGE_OUTPUT   # the format parsed below
passed=0; failed=0; skipped=0
for t in "$@"; do
  out=$("$t" 2>&1); rc=$?
  # cmocka's closing lines: "[  PASSED  ] N test(s).", "[  FAILED  ] N test(s), listed below:",
  # "[  SKIPPED ] N test(s), listed below:" followed by one "[  SKIPPED ] name" per test
  p=$(printf '%s\n' "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' | tail -1)
  f=$(printf '%s\n' "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' | tail -1)
  s=$(printf '%s\n' "$out" | sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' | tail -1)
  names=$(printf '%s\n' "$out" | awk '
    /^\[  SKIPPED \] [0-9]+ test/ { listing = 1; next }
    listing && /^\[  SKIPPED \] / { sub(/^\[  SKIPPED \] /, ""); printf "%s%s", sep, $0; sep = ", "; next }
    { listing = 0 }')
  passed=$((passed + ${p:-0})); failed=$((failed + ${f:-0})); skipped=$((skipped + ${s:-0}))
  name=$(basename "$t")
  if [ $rc -ne 0 ] || [ -z "$p" ]; then
    printf '%s\n' "$out"
    [ -z "$f" ] && failed=$((failed + 1))
    echo "  FAIL  $name (exit $rc)"
  else
    echo "  ok    $name ($p tests)"
  fi
  [ -n "$s" ] && [ "$s" != 0 ] && echo "  skip  $name ($s skipped: $names)"
done
echo "unit: $passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
