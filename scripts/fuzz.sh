#!/bin/sh
# Runs the libFuzzer harnesses built into BUILD/fuzz/ (make fuzz, make fuzz-long; docs/testing.md).
#
#   scripts/fuzz.sh BUILD [NAME...]     NAME: a harness without its fuzz_ prefix (trace, asm, ...)
#
# Environment: FUZZ_SECONDS (per harness; default 10), FUZZ_RUNS (executions per harness
# instead of a time), FUZZ_JOBS (harnesses run at once; default 1), FUZZ_TIMEOUT (seconds one
# input may take; default 30, at least 300 for tracecmd and tracecmd_inproc), FUZZ_QUIET=1
# (the harnesses' own messages, the refusals of bad input, are discarded: several times
# faster where a parser prints for most inputs; libFuzzer's and the sanitizers' reports still
# come out).  Each harness starts from its committed seeds (tests/fuzz/corpus/NAME/, or the
# files tests/fuzz/NAME.seeds lists) and the inputs earlier runs found (BUILD/fuzz-corpus/NAME/,
# kept between runs, never committed), with its dictionary (tests/fuzz/NAME.dict) when there
# is one.  A crash, a leak, undefined behaviour, a timeout or an out-of-memory input is a
# finding: the input is kept as BUILD/fuzz-findings/NAME-* and the run fails.  Prints one line
# per harness (executions, speed, coverage, corpus) and ends with "fuzz: N passed, M failed".
set -u
case ${1:-} in
  -h|--help) sed -n '2,16s/^# \{0,1\}//p' "$0"; exit 0 ;;
  ''|-*) echo "usage: scripts/fuzz.sh BUILD [NAME...] (scripts/fuzz.sh --help; make fuzz runs it)" >&2; exit 2 ;;
esac
build=$1
shift
seconds=${FUZZ_SECONDS:-10}
jobs=${FUZZ_JOBS:-1}
case $jobs in ''|*[!0-9]*|0) echo "scripts/fuzz.sh: FUZZ_JOBS=$jobs: a number of harnesses at once, 1 or more" >&2; exit 2 ;; esac
timeout=${FUZZ_TIMEOUT:-30}
here=$(cd "$(dirname "$0")/.." && pwd)
logs="$build/fuzz-logs"
mkdir -p "$logs" "$build/fuzz-findings" "$build/fuzz-corpus"

if [ $# -eq 0 ]; then
  set --
  for b in "$build"/fuzz/fuzz_*; do [ -x "$b" ] && set -- "$@" "${b##*/fuzz_}"; done
fi
[ $# -gt 0 ] || { echo "scripts/fuzz.sh: no harnesses in $build/fuzz/ (make fuzz builds them)" >&2; exit 2; }

# run_one NAME: one harness; its log in $logs/NAME.log, its status in $logs/NAME.rc
run_one() {
  name=$1 bin="$build/fuzz/fuzz_$1" seeds="$here/tests/fuzz/corpus/$1" work="$build/fuzz-corpus/$1"
  if [ ! -x "$bin" ]; then echo "no harness $bin" > "$logs/$name.log"; echo 2 > "$logs/$name.rc"; return; fi
  rm -f "$logs/$name.rc"
  : > "$logs/$name.start"            # findings newer than this are this run's
  mkdir -p "$work"
  if [ -f "$here/tests/fuzz/$name.seeds" ] && [ -z "$(ls -A "$work")" ]; then
    grep -v '^#' "$here/tests/fuzz/$name.seeds" | while read -r f; do
      cp "$here/$f" "$work/" || echo "scripts/fuzz.sh: seed $f of $name not copied" >&2
    done
  fi
  # A trace.dat the libraries read in a loop ends its reader child after 15 s of CPU time in
  # this sanitizer build (sim/import/import_tracecmd.c), and tracecmd_inproc's read after as
  # long (its own timer);
  # at nice 19 beside other work that can take minutes of wall time, which libFuzzer's
  # timeout counts: theirs is at least 300 s.
  t=$timeout
  case $name in tracecmd|tracecmd_inproc) [ "$t" -lt 300 ] && t=300 ;; esac
  set -- -timeout="$t" -rss_limit_mb=2048 -malloc_limit_mb=2048 -print_final_stats=1 \
         -artifact_prefix="$build/fuzz-findings/$name-"
  if [ -n "${FUZZ_RUNS:-}" ]; then set -- "$@" -runs="$FUZZ_RUNS"; else set -- "$@" -max_total_time="$seconds"; fi
  [ "${FUZZ_QUIET:-}" = 1 ] && set -- "$@" -close_fd_mask=3
  [ -f "$here/tests/fuzz/$name.dict" ] && set -- "$@" -dict="$here/tests/fuzz/$name.dict"
  [ -d "$seeds" ] || seeds=""
  # libtracecmd allocates what a corrupt trace.dat's size fields say and copes with the NULL
  # malloc returns (vmxsim then refuses the file, exit 3): under ASan that NULL must be returned.
  # Its other faults end the child that reads the file (a refused file, not a finding), and
  # the sanitizer's report of each, symbolized, took half of the harness's time: a finding
  # of the harness itself is kept as a file, to be replayed with symbols (docs/testing.md).
  # A forked child's sanitizer report goes to LOG_PATH.PID (without log_path, .PID in the
  # current directory), and libFuzzer's handler in the child keeps its input as a finding:
  # both are the libraries' faults, counted and removed below when the harness passes.
  # Each tracecmd input forks that child, and a fork's cost grows with the harness's resident
  # memory, most of it ASan's quarantine of freed blocks (256 MB by default): 8 MB keeps the
  # fork cheap (a quarter fewer seconds for the same executions) and still holds a block freed
  # during one input until long after that input.
  # tracecmd_inproc reads the file in its own process, with its own options and suppressions
  # (tests/fuzz/fuzz_tracecmd_inproc.c); with the small quarantine an input of the seeds takes
  # 11 and 24 ms instead of 17 and 61 (ASan's recycling of a 256 MB quarantine).
  asan=""
  [ "$name" = tracecmd ] && asan=allocator_may_return_null=1:symbolize=0:quarantine_size_mb=8:log_path=$logs/$name-child
  [ "$name" = tracecmd_inproc ] && asan=quarantine_size_mb=8
  ASAN_OPTIONS="$asan${ASAN_OPTIONS:+${asan:+:}$ASAN_OPTIONS}" \
  LSAN_OPTIONS="suppressions=$here/tests/lsan-suppressions.txt${LSAN_OPTIONS:+:$LSAN_OPTIONS}" \
  UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}" \
    "$bin" "$@" "$work" $seeds > "$logs/$name.log" 2>&1
  rc=$?
  if [ "$name" = tracecmd ] && [ "$rc" = 0 ]; then
    find "$build/fuzz-findings" -name "$name-*" -newer "$logs/$name.start" -delete 2>/dev/null
    # (a child's allocation past its memory bound leaves only a warning there)
    n=$(find "$logs" -name "$name-child.*" -exec grep -l 'ERROR: ' {} + | wc -l)
    echo "$n inputs the libraries' reader refused with a sanitizer report (its child's reports, removed)" >> "$logs/$name.log"
    find "$logs" -name "$name-child.*" -delete
  fi
  echo $rc > "$logs/$name.rc"
}

# stat NAME KEY: a final statistic libFuzzer printed
stat() { sed -n "s/^stat::$2: *//p" "$logs/$1.log" | tail -1; }

# in groups of $jobs at once
i=0
for n in "$@"; do
  run_one "$n" &
  i=$((i + 1))
  [ $((i % jobs)) -ne 0 ] || wait
done
wait

passed=0 failed=0
for n in "$@"; do
  rc=$(cat "$logs/$n.rc" 2>/dev/null || echo 2)
  execs=$(stat "$n" number_of_executed_units) speed=$(stat "$n" average_exec_per_sec)
  cov=$(grep -o 'cov: [0-9]*' "$logs/$n.log" | tail -1) corpus=$(grep -o 'corp: [0-9]*/[0-9a-zA-Z]*' "$logs/$n.log" | tail -1)
  if [ "$rc" = 0 ]; then
    passed=$((passed + 1))
    printf '  ok    %-15s %10s executions, %6s/s, %s, %s\n' "$n" "${execs:-?}" "${speed:-?}" "${cov:-cov: ?}" "${corpus:-corp: ?}"
  else
    failed=$((failed + 1))
    printf '  FAIL  %-15s exit %s after %s executions; the log, %s/%s.log, ends:\n' "$n" "$rc" "${execs:-?}" "$logs" "$n"
    grep -v '^#[0-9]' "$logs/$n.log" | tail -25 | sed 's/^/        /'
    find "$build/fuzz-findings" -name "$n-*" -newer "$logs/$n.start" 2>/dev/null | sed 's/^/        finding: /'
  fi
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
