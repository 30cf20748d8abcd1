# CLI tests for workloads/record/record.sh's options that need no perf: its help, and the
# checks of --window-start; with perf, a window from the middle of a recording.
# Sourced by tests/cli/run.sh in a scratch directory; $ROOT is the repo.

RECORD="$ROOT/workloads/record/record.sh"

run sh "$RECORD" --help
check_rc "record.sh --help" 0
check_contains "--help shows every option (the header's last lines too)" "$out" "--src DIR"
check_eq "--help ends with the exit codes" "exit codes: 0 ok, 1 recording failed, 2 usage, 4 perf missing or not permitted." \
  "$(printf '%s\n' "$out" | tail -1)"
check_contains "--help names the kbuild recipe" "$out" "kbuild     an allnoconfig i386 kernel build"

run sh "$RECORD" pipe --max-lines 10 --window-start 2
check_rc "--window-start above 1" 2
check_contains "--window-start above 1 explained" "$err" "--window-start: '2' is not a fraction from 0 to 1"
run sh "$RECORD" pipe --max-lines 10 --window-start
check_rc "--window-start without a value" 2

if reason=$(sh "$RECORD" --check 2>&1 >/dev/null); then
  run sh "$RECORD" pipe -l 400 --window-start 0.5 -o whole.txt
  check_rc "--window-start without --max-lines" 2
  if sh "$RECORD" pipe -l 400 --max-lines 20 --window-start 0.5 -o half.txt >/dev/null 2>half.err; then
    # the first kept line is at or after the middle of the header's first..last sample times
    mid=$(awk '/^# time of first sample :/ { f = $NF } /^# time of last sample :/ { l = $NF } END { printf "%.6f", f + (l - f) / 2 }' half.txt)
    first=$(grep -v '^#' half.txt | head -1 | sed -n 's/.*\] *\([0-9]*\.[0-9]*\):.*/\1/p')
    check_eq "window: 20 event lines" "20" "$(grep -vc '^#' half.txt)"
    check_eq "window: starts in the second half" "yes" "$(awk -v a="$first" -v m="$mid" 'BEGIN { print (a + 0 >= m + 0) ? "yes" : "no" }')"
  else
    fail "record.sh pipe --window-start" "$(cat half.err)"
  fi
else
  skip "live perf recording: $(printf '%s\n' "$reason" | head -1)"
fi
