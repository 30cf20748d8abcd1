# CLI tests for scripts/plot/plot.sh: each plot is a valid PNG made from a small results database.
# Sourced by tests/cli/run.sh in a scratch directory; $VMXSIM is the program, $ROOT the repo.

PLOT="$ROOT/scripts/plot/plot.sh"

# is_png FILE: the 8-byte PNG signature \211 P N G \r \n \032 \n
is_png() { [ "$(od -An -tx1 -N8 "$1" 2>/dev/null | tr -d ' \n')" = "89504e470d0a1a0a" ]; }

# ring N: a text trace of N processes switching address spaces, with N in its metadata
ring() {
  printf '@workload ring\n@paging 64\n@meta {"generator": "t_plot", "procs": %d}\n' "$1"
  printf '@init cr0=0x80050033 cr3=0x1000 cr4=0x6f0\n'
  i=0
  while [ $i -lt 10 ]; do
    p=1
    while [ $p -le "$1" ]; do
      printf 'run 2000\ncr3w 0x%x\ntouch 0x400000 1 w\nmark switch\n' $((p * 4096))
      p=$((p + 1))
    done
    i=$((i + 1))
  done
}

for n in 2 4 8; do
  ring $n > ring$n.txt
  "$VMXSIM" trace asm ring$n.txt -o ring$n.bin
  for pol in nocache shadowcache cr3cache; do
    "$VMXSIM" --policy $pol --db plot.db ring$n.bin >/dev/null || fail "run $pol on ring$n.bin"
  done
done
check_eq "the small database has 9 runs" "9" "$(sqlite3 plot.db 'SELECT count(*) FROM runs')"

run "$PLOT" exits --db plot.db --trace ring4.bin -o exits.png
check_rc "exits plot succeeds" 0
check_eq "exits plot names its file" "exits.png" "$out"
check_eq "exits plot: nothing on stderr" "" "$err"
is_png exits.png && pass "exits plot is a PNG" || fail "exits plot is a PNG" "$(od -c -N8 exits.png 2>&1)"

run "$PLOT" cycles --db plot.db -o cycles.png
check_rc "cycles plot succeeds (default: the latest trace)" 0
check_eq "cycles plot: nothing on stderr" "" "$err"
is_png cycles.png && pass "cycles plot is a PNG" || fail "cycles plot is a PNG" "$(od -c -N8 cycles.png 2>&1)"

run "$PLOT" param --db plot.db --param procs
check_rc "param plot succeeds" 0
check_eq "param plot default file name" "param-procs.png" "$out"
check_eq "param plot: nothing on stderr" "" "$err"
is_png param-procs.png && pass "param plot is a PNG" || fail "param plot is a PNG" "$(od -c -N8 param-procs.png 2>&1)"

# Data and messages behind the plots.
run "$PLOT" param --db plot.db --param nosuchkey -o none.png
check_rc "param with a key no trace has fails" 1
check_contains "param with a key no trace has says so" "$err" "'nosuchkey'"
[ ! -e none.png ] && pass "no PNG on failure" || fail "no PNG on failure"
run "$PLOT" exits --db plot.db --trace nosuch.bin
check_rc "an unknown trace fails" 1
check_contains "an unknown trace is named" "$err" "no stored run of trace nosuch.bin"
run "$PLOT" exits --db missing.db
check_rc "a missing database fails" 1
check_contains "a missing database is named" "$err" "missing.db does not exist"
run "$PLOT" param --db plot.db
check_rc "param without --param is a usage error" 2
run "$PLOT" exits --bogus
check_rc "an unknown option is a usage error" 2
run "$PLOT" --help
check_rc "--help succeeds" 0
check_contains "--help teaches by example" "$out" "scripts/plot/plot.sh param --param procs"
