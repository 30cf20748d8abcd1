# CLI tests for signals and leftovers: SIGINT and SIGTERM remove the temporary files
# of a command that writes one and exit 130 / 143; a temporary file left by SIGKILL is
# named .NAME.vmxsim-tmp.PID.XXXXXX and removed by the next run for the same target
# once PID is gone.  Nothing here depends on timing: a signal is sent once the
# temporary file exists, to a command that is blocked or has seconds of work left.
# Sourced by tests/cli/run.sh in a scratch directory; $VMXSIM is the program.

mkdir -p tmp
export TMPDIR="$PWD/tmp"
ulimit -f 2000000 2>/dev/null   # a guard: a command that ignored its signal stops at a few GB

# wait_for PATTERN: waits (up to 20 s) until a file matching the shell pattern exists
wait_for() {
  for _ in $(seq 400); do
    for f in $1; do [ -e "$f" ] && return 0; done
    sleep 0.05
  done
  return 1
}
# finish PID: waits for it and sets rc to its exit status; a process that outlives
# its signal by 20 s is killed (status 137), so that a regression fails instead of hanging
finish() {
  ( for _ in $(seq 200); do sleep 0.1; done; kill -9 "$1" 2>/dev/null ) &
  watchdog=$!
  wait "$1"
  rc=$?
  kill "$watchdog" 2>/dev/null
  wait "$watchdog" 2>/dev/null
}
# leftovers DIR: the temporary files and directories of vmxsim in DIR, or "none"
leftovers() { l=$(ls -A "$1" | grep 'vmxsim-tmp' | tr '\n' ' '); echo "${l:-none}"; }
# a process id that is surely dead: a child that has exited and been waited for
dead_pid() { sh -c 'exit 0' & p=$!; wait "$p"; echo "$p"; }

# A generator job of about 350 MB: seconds of work, so it is still writing when signalled.
BIG="lat_ctx --procs 2 --iters 100000"

# ---- gen: SIGINT, SIGTERM ----
for sig in INT TERM; do
  want=130; [ $sig = TERM ] && want=143
  "$VMXSIM" gen $BIG -o big.bin 2>gen.err &
  pid=$!
  wait_for ".big.bin.vmxsim-tmp.$pid.*" || echo "  (no temporary file appeared)"
  kill -$sig "$pid"
  finish "$pid"
  check_eq "gen, SIG$sig: exit code" "$want" "$rc"
  check_eq "gen, SIG$sig: no temporary file left" "none" "$(leftovers .)"
  check_eq "gen, SIG$sig: no output" "absent" "$([ -e big.bin ] && echo present || echo absent)"
done

# An existing target stays as it was.
"$VMXSIM" gen lat_ctx --procs 2 --iters 10 -o keep.bin
before=$(cksum < keep.bin)
"$VMXSIM" gen $BIG -o keep.bin 2>/dev/null &
pid=$!
wait_for ".keep.bin.vmxsim-tmp.$pid.*"
kill -TERM "$pid"; finish "$pid"
check_eq "gen over an existing trace, SIGTERM: exit code" "143" "$rc"
check_eq "gen over an existing trace, SIGTERM: the old trace is unchanged" "$before" "$(cksum < keep.bin)"

# ---- trace asm: blocked reading its input (a FIFO), SIGINT ----
mkfifo in.fifo
"$VMXSIM" trace asm in.fifo -o asm.bin 2>asm.err &
pid=$!
exec 3>in.fifo                       # the writer: vmxsim waits for text that never comes
wait_for ".asm.bin.vmxsim-tmp.$pid.*"
kill -INT "$pid"; finish "$pid"
exec 3>&-
check_eq "trace asm, SIGINT: exit code" "130" "$rc"
check_eq "trace asm, SIGINT: no temporary file left" "none" "$(leftovers .)"

# ---- import -o -: a scratch directory in TMPDIR, blocked on a full pipe, SIGTERM ----
mkfifo out.fifo
"$VMXSIM" import perf-script "$ROOT/traces/recorded/perf-messaging.txt.gz" -o - >out.fifo 2>imp.err &
pid=$!
exec 4<out.fifo                      # a reader that never reads: the copy blocks
wait_for "tmp/.vmxsim-import.vmxsim-tmp.$pid.*"
kill -TERM "$pid"; finish "$pid"
exec 4<&-
check_eq "import -o -, SIGTERM: exit code" "143" "$rc"
check_eq "import -o -, SIGTERM: its scratch directory is removed" "none" "$(leftovers tmp)"

# ---- SIGKILL: a recognisable leftover, removed by the next run ----
"$VMXSIM" gen $BIG -o k9.bin 2>/dev/null &
pid=$!
wait_for ".k9.bin.vmxsim-tmp.$pid.*"
kill -9 "$pid"; wait "$pid" 2>/dev/null
left=$(leftovers .)
check_contains "SIGKILL leaves .NAME.vmxsim-tmp.PID.XXXXXX" "$left" ".k9.bin.vmxsim-tmp.$pid."
: > ".k9.bin.vmxsim-tmp.$$.abcdef"           # a live process's (this shell's): not touched
: > ".other.bin.vmxsim-tmp.$(dead_pid).abcdef"   # another target's: not touched
other=$(ls -A | grep '^.other.bin.vmxsim-tmp')
"$VMXSIM" gen lat_ctx --procs 2 --iters 10 -o k9.bin
check_eq "the next gen to the same target removes the dead process's leftover, and only that" \
  ".k9.bin.vmxsim-tmp.$$.abcdef $other " "$(leftovers .)"
rm -f .k9.bin.vmxsim-tmp.* .other.bin.vmxsim-tmp.*

# A scratch directory left in TMPDIR by a killed process goes with the next one of its name.
dead=$(dead_pid)
mkdir "tmp/.vmxsim-import.vmxsim-tmp.$dead.abcdef"
: > "tmp/.vmxsim-import.vmxsim-tmp.$dead.abcdef/trace.bin"
"$VMXSIM" import perf-script "$ROOT/traces/recorded/perf-pipe.txt.gz" -o - > piped.bin
check_eq "import -o -: a dead process's scratch directory is removed" "none" "$(leftovers tmp)"

# ---- regress --update: a leftover beside a case file is removed even when the case is unchanged ----
mkdir cases
cat > cases/one.json <<'EOF'
{
  "generate": ["lat_ctx", "--procs", "2", "--size", "0", "--iters", "5"],
  "policy": "shadowcache"
}
EOF
"$VMXSIM" regress --update cases > /dev/null
: > "cases/.one.json.vmxsim-tmp.$(dead_pid).Qx12ab"
run "$VMXSIM" regress --update cases
check_rc "regress --update over a leftover: exit code" 0
check_contains "regress --update: the case is unchanged" "$out" "unchanged"
check_eq "regress --update: the dead process's leftover is removed" "none" "$(leftovers cases)"

# regress -o: written whole at the end, through a temporary file
run "$VMXSIM" regress cases --format junit -o report.xml
check_rc "regress -o: exit code" 0
check_contains "regress -o: the report is written" "$(cat report.xml)" "<testsuite"
check_eq "regress -o: no temporary file left" "none" "$(leftovers .)"

# ---- documentation ----
run "$VMXSIM" --help
check_contains "--help documents 130" "$out" "130  interrupted (SIGINT"
check_contains "--help documents 143" "$out" "143  terminated (SIGTERM"
check_eq "TMPDIR is empty at the end" "" "$(ls -A tmp)"

# ---- run: an interrupt after the last progress point still means nothing is stored ----
# The trace comes through a FIFO that stays open after its last record: the replay has read
# every record and waits for the end of the input when the signal comes.
"$VMXSIM" gen lat_ctx --procs 2 --iters 50 -o fifo-src.bin > /dev/null
mkfifo feed
{ cat fifo-src.bin; : > written; exec sleep 30; } > feed &
writer=$!
"$VMXSIM" --policy shadowcache -q --db sig.db feed > run.out 2> run.err &
pid=$!
wait_for written || echo "  (the writer did not finish)"
kill -INT "$pid"
kill "$writer"                       # the end of the input: the replay can end
finish "$pid"
check_eq "run, SIGINT after the last record: exit code" "130" "$rc"
check_contains "run, SIGINT after the last record: says so" "$(cat run.err)" "nothing stored"
check_eq "run, SIGINT after the last record: nothing stored" "0" \
  "$("$VMXSIM" runs --db sig.db --format csv 2>/dev/null | tail -n +2 | wc -l | tr -d ' ')"
