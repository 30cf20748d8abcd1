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
run sh "$RECORD" pipe --native-time
check_rc "--native-time with another recipe" 2
check_contains "--native-time with another recipe explained" "$err" "--native-time is for the kbuild recipe only"

# A stand-in kernel tree: the targets record.sh's kbuild recipe makes, three objects that
# cost nothing to build, so that a kbuild recording takes seconds.
mkdir fakekernel
printf 'int x;\n' > fakekernel/a.c; cp fakekernel/a.c fakekernel/b.c; cp fakekernel/a.c fakekernel/c.c
printf '%s\n' 'clean:' '	rm -f *.o' 'allnoconfig:' '	@:' 'kernelversion:' '	@echo 0.0.1' \
  'vmlinux: a.o b.o c.o' '%.o: %.c' '	@sleep 0.1; touch $@' > fakekernel/Makefile

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
  if sh "$RECORD" kbuild --src fakekernel --native-time -o kb.txt >/dev/null 2>kb.err; then
    check_contains "kbuild: objects of the recorded build" "$(cat kb.txt)" "# kbuild: objects built: 3 (3 compiled from .c files)"
    check_eq "kbuild: the recorded build's times and load average" "1" \
      "$(grep -Ec '^# kbuild: time under perf record: real [0-9.]+ s, user [0-9.]+ s, sys [0-9.]+ s \(load average before [0-9. ]+, after [0-9. ]+\)$' kb.txt)"
    check_eq "kbuild --native-time: the build's times without perf" "1" \
      "$(grep -Ec '^# kbuild: time without perf: real [0-9.]+ s, user [0-9.]+ s, sys [0-9.]+ s \(load average before [0-9. ]+, after [0-9. ]+\)$' kb.txt)"
    check_contains "kbuild --native-time: its objects" "$(cat kb.txt)" "# kbuild: objects built without perf: 3"
    check_eq "kbuild --native-time: real time at least the 3 x 0.1 s of the stand-in build" "yes" \
      "$(sed -n 's/^# kbuild: time without perf: real \([0-9.]*\) s.*/\1/p' kb.txt | awk '{ print ($1 >= 0.3) ? "yes" : "no" }')"
  else
    fail "record.sh kbuild --src fakekernel --native-time" "$(cat kb.err)"
  fi
else
  skip "live perf recording: $(printf '%s\n' "$reason" | head -1)"
fi
