#!/bin/sh
# `make bench`: vmxsim's speed figures, each a ratio of two times measured in the same run
# (paired runs, alternating, medians), printed beside its goal:
#   replay / `cat` of the same file: ept on a 66.7 M-event system-call trace (<= 2x),
#     shadowcache on a 50 M-event lat_ctx trace (<= 4x);
#   a run stored in the results database / the same run with --no-db (< +5%);
#   N configurations replayed in one pass / N separate replays (well under 1);
#   replay memory (max RSS) at 10^6, 10^7 and 10^8 events (flat);
#   a synthetic xentrace file: import + replay and replay of the imported trace against
#     xenalyze --summary (XENALYZE=path, or build/xenalyze from scripts/get-xenalyze.sh),
#     and vmxsim summary (its views alone)
#     against it with no goal; import peak memory at 52 and 520 MB;
#   a 500-run sweep with -j 1 and with -j 2, and the ratio of their speeds (close to 2).
# Usage: scripts/bench.sh [VMXSIM [SECTION...]]   SECTION: replay, import, sweep (default: all)
#   BENCH_DIR=dir      where the traces go (default bench/; about 6 GB, removed at the end)
#   BENCH_RUNS=n       paired runs per figure (default 5)
#   BENCH_SCALE=f      scale every trace size by f (default 1; 0.1 for a quick look)
#   BENCH_KEEP=1       keep the traces
#   GEN_XENTRACE=path  the synthetic xentrace generator (default build/gen-xentrace)
#   WALLTIME=path      the timer (scripts/walltime.c; default build/walltime when it exists):
#                      without it, commands are timed through sh and GNU time, whose own
#                      start-ups are counted too
#   XENALYZE=path      a xenalyze to time on the same xentrace file (default build/xenalyze when
#                      it exists: `make xenalyze` builds it from Debian's xen source package)
# Wall times are the figures; CPU seconds (user + system, from GNU time when installed) are
# printed beside them, since wall time on a busy machine measures the other load too. Run it
# on a quiet machine (`uptime`), a few times.
set -eu
VMXSIM=${1:-./vmxsim}
[ $# -gt 0 ] && shift
SECTIONS=${*:-replay import sweep}
if [ -z "${XENALYZE:-}" ] && [ -x build/xenalyze ]; then XENALYZE=$(pwd)/build/xenalyze; fi
if [ -z "${WALLTIME:-}" ] && [ -x build/walltime ]; then WALLTIME=$(pwd)/build/walltime; fi
want() { case " $SECTIONS " in *" $1 "*) return 0 ;; esac; return 1; }
DIR=${BENCH_DIR:-bench}
RUNS=${BENCH_RUNS:-5}
SCALE=${BENCH_SCALE:-1}
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)     # absolute: XDG_CACHE_HOME below must be (a relative one is ignored)
GNUTIME=; [ -x /usr/bin/time ] && GNUTIME=/usr/bin/time

scaled() { awk -v n="$1" -v s="$SCALE" 'BEGIN { printf "%d", n * s + 0.5 }'; }
records() { "$VMXSIM" trace info "$1" --format json | sed -n 's/.*"records":[^0-9]*\([0-9]*\).*/\1/p' | head -1; }
now() { date +%s.%N; }

# q WORD: WORD quoted for sh -c
q() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
V=$(q "$VMXSIM")

# simple SCRIPT: SCRIPT is one command (quoted words, perhaps NAME=VALUE words before it and
# 2>/dev/null after it), which timed runs with walltime (scripts/walltime.c, built by
# `make bench`; WALLTIME=path) and no shell between: a shell's, date's or GNU time's start-up
# (5-10 ms each on the 2-core virtual machine) would be counted on both sides of a ratio, and
# a 60 ms command's ratio to a 300 ms one would read 0.25 for 0.20.
simple() {
  case "$(printf '%s' "$1" | sed 's| 2>/dev/null$||')" in
    *[\;\|\&\<\>\`]*|*'$('*|*"
"*) return 1 ;;
  esac
}

# timed FILE SCRIPT: runs SCRIPT (output discarded) and appends "wall cpu maxrss_kib" to FILE
timed() {
  if [ -x "${WALLTIME:-}" ] && simple "$2"; then
    (
      script=$2
      eval "set -- $script"
      while [ $# -gt 0 ] && case "$1" in [A-Za-z_]*=*) true ;; *) false ;; esac; do export "$1"; shift; done
      case "$script" in *" 2>/dev/null") exec 2>/dev/null ;; esac
      exec "$WALLTIME" "$DIR/.wall" "$@"
    ) > /dev/null
    cat "$DIR/.wall" >> "$1"
    return
  fi
  t0=$(now)
  if [ -n "$GNUTIME" ]; then
    "$GNUTIME" -f '%U %S %M' -o "$DIR/.time" sh -c "$2" > /dev/null
  else
    sh -c "$2" > /dev/null; echo "- - -" > "$DIR/.time"
  fi
  t1=$(now)
  awk -v a="$t0" -v b="$t1" '{ printf "%.4f %s %s\n", b - a, ($1 == "-") ? "-" : $1 + $2, $3 }' "$DIR/.time" >> "$1"
}

# stat FILE COLUMN: "median min max" of a column (1 wall, 2 CPU, 3 max RSS)
stat() { awk -v c="$2" '$c != "-" { print $c }' "$1" | sort -g | awk '{ v[NR] = $1 } END {
  if (NR == 0) { print "- - -"; exit } printf "%s %s %s\n", v[int((NR + 1) / 2)], v[1], v[NR] }'; }

# paired NAME OP GOAL A B: RUNS paired runs of scripts A and B, alternating, then the
# ratio of the wall medians A/B against the goal (OP: <= or <; "" for a figure with no goal)
paired() {
  rm -f "$DIR/.a" "$DIR/.b"
  for i in $(seq "$RUNS"); do timed "$DIR/.a" "$4"; timed "$DIR/.b" "$5"; done
  set -- "$1" "$2" "$3" "$(stat "$DIR/.a" 1)" "$(stat "$DIR/.b" 1)" "$(stat "$DIR/.a" 2)" "$(stat "$DIR/.b" 2)"
  awk -v name="$1" -v op="$2" -v goal="$3" -v a="$4" -v b="$5" -v ca="$6" -v cb="$7" -v runs="$RUNS" 'BEGIN {
    split(a, A, " "); split(b, B, " "); split(ca, CA, " "); split(cb, CB, " ")
    r = A[1] / B[1]
    met = (op == "<=") ? r <= goal : r < goal
    cpu = (CA[1] != "-" && CB[1] > 0) ? sprintf("; CPU %.2f s / %.2f s = %.2f", CA[1], CB[1], CA[1] / CB[1]) : ""
    if (op == "") printf "%-60s %6.2f   (no goal)\n", name, r
    else printf "%-60s %6.2f   %s %-5s %s\n", name, r, op, goal, met ? "met" : "NOT MET"
    printf "    %.3f s [%.3f-%.3f] / %.3f s [%.3f-%.3f] (wall, median [min-max] of %d)%s\n",
           A[1], A[2], A[3], B[1], B[2], B[3], runs, cpu
  }'
}

gen() { # NAME TARGET_EVENTS GENERATOR ARGS... (the last argument is the count to scale: --count or --iters)
  name=$1; target=$2; shift 2
  f="$DIR/$name.bin"
  [ -s "$f" ] && [ -n "${BENCH_KEEP:-}" ] && return 0
  "$VMXSIM" gen "$@" -o "$f"
  echo "  $name: $(records "$f") events, $(du -h "$f" | cut -f1)"
}

# A count that makes a generator write about `target` events: measured on a small trace.
count_for() { # TARGET PER_UNIT_EVENTS
  awk -v t="$1" -v p="$2" 'BEGIN { n = int(t / p + 0.5); print n < 1 ? 1 : n }'
}

echo "vmxsim bench: $("$VMXSIM" --version), $(nproc 2>/dev/null || echo '?') CPUs, load:$(uptime | sed 's/.*load average://')"
replay_figures() {
  echo "traces (in $DIR):"
  # the system-call loop: about 19 records per call
  "$VMXSIM" gen syscalls --count 1000 --mode hvm -o "$DIR/probe.bin"
  per_call=$(awk -v n="$(records "$DIR/probe.bin")" 'BEGIN { print n / 1000 }')
  SC_EVENTS=$(scaled 66700000)
  gen syscalls "$SC_EVENTS" syscalls --mode hvm --count "$(count_for "$SC_EVENTS" "$per_call")"
  # lat_ctx with 8 processes: about 74 records per pass (its touch sets), 8 passes per trip
  "$VMXSIM" gen lat_ctx --procs 8 --size 0 --iters 100 -o "$DIR/probe.bin"
  per_trip=$(awk -v n="$(records "$DIR/probe.bin")" 'BEGIN { print n / 100 }')
  LAT_EVENTS=$(scaled 50000000)
  gen lat_ctx "$LAT_EVENTS" lat_ctx --procs 8 --size 0 --iters "$(count_for "$LAT_EVENTS" "$per_trip")"
  rm -f "$DIR/probe.bin"
  SC="$DIR/syscalls.bin"; LAT="$DIR/lat_ctx.bin"
  cat "$SC" "$LAT" > /dev/null                      # both in the page cache: time the replay, not the disk

  echo
  echo "figure (ratio of wall times)                                  ratio   goal"
  S=$(q "$SC"); L=$(q "$LAT")
  paired "ept replay of the system-call trace / cat" "<=" 2 \
    "$V --policy ept --cpu nehalem-2009 --no-db -q $S" "cat $S"
  paired "shadowcache replay of the lat_ctx trace / cat" "<=" 4 \
    "$V --policy shadowcache --no-db -q $L" "cat $L"

  # Storing: each stored run goes into one database, created before (as a user's is), which
  # remembers the hash of a file it stored a run of (docs/schema.md, "trace_files"): a stored
  # run of a trace stored before reads it once, as --no-db does, and does not hash it.  The
  # traces were written more than 3 s ago, so their hashes are remembered from the first run.
  DB=$(q "$DIR/b.db")
  rm -f "$DIR/b.db" "$DIR/b.db-wal" "$DIR/b.db-shm"
  "$VMXSIM" --policy shadowcache -q --db "$DIR/b.db" "$DIR/lat_ctx.bin" > /dev/null
  "$VMXSIM" --policy ept --cpu nehalem-2009 -q --db "$DIR/b.db" "$DIR/syscalls.bin" > /dev/null
  paired "shadowcache on lat_ctx, stored / --no-db" "<" 1.05 \
    "$V --policy shadowcache -q --db $DB $L" "$V --policy shadowcache --no-db -q $L"
  paired "ept on the system-call trace, stored / --no-db" "<" 1.05 \
    "$V --policy ept --cpu nehalem-2009 -q --db $DB $S" "$V --policy ept --cpu nehalem-2009 --no-db -q $S"
  # A file the database does not know is hashed as it is read, by whichever reading thread
  # would wait: touching the file before each run makes it new to the database every time.
  paired "shadowcache on lat_ctx, stored, file not yet known / --no-db" "" "" \
    "sh -c $(q "touch $L && $V --policy shadowcache -q --db $DB $L")" "$V --policy shadowcache --no-db -q $L"
  rm -f "$DIR/b.db" "$DIR/b.db-wal" "$DIR/b.db-shm"

  # Several configurations in one pass against as many separate replays.
  separate() { # OPTION LIST REST: one replay per element of LIST, as a script
    printf 'for x in %s; do %s %s "$x" %s; done' "$2" "$V" "$1" "$3"
}
# "On one core" is what the goal says: both sides pinned to processor 0 (taskset), so the
# separate replays cannot read ahead on the other processor either.
ONE=""
command -v taskset > /dev/null 2>&1 && ONE="taskset -c 0 "
paired "4 policies on lat_ctx, one pass / 4 replays${ONE:+, one core}" "<" 1 \
  "$ONE$V --policy shadowcache,cr3cache,prevroots,shadowcache+lazydr --no-db -q $L" \
  "${ONE}sh -c $(q "$(separate --policy "shadowcache cr3cache prevroots shadowcache+lazydr" "--no-db -q $L")")"
paired "4 policies on lat_ctx, one pass with -j 2 / 4 replays" "<" 1 \
  "$V --policy shadowcache,cr3cache,prevroots,shadowcache+lazydr -j 2 --no-db -q $L" \
  "$(separate --policy "shadowcache cr3cache prevroots shadowcache+lazydr" "--no-db -q $L")"
paired "shadowcache on 4 CPU profiles, lat_ctx, one pass / 4 replays" "<" 1 \
  "$V --policy shadowcache --cpu core2-2007,core2-2008,nehalem-2009,skylake-2019 --no-db -q $L" \
  "$(separate --cpu "core2-2007 core2-2008 nehalem-2009 skylake-2019" "--policy shadowcache --no-db -q $L")"
paired "4 EPT policies on system calls, one pass / 4 replays" "<" 1 \
  "$V --policy ept,ept+cr4mask,ept+lazydr,ept+cr4mask+lazydr --cpu nehalem-2009 --no-db -q $S" \
  "$(separate --policy "ept ept+cr4mask ept+lazydr ept+cr4mask+lazydr" "--cpu nehalem-2009 --no-db -q $S")"

# Memory: the same replay at 10^6, 10^7 and 10^8 events.
echo
if [ -n "$GNUTIME" ]; then
  line="replay memory (max RSS), ept on system calls:"
  for n in 1000000 10000000 100000000; do
    m=$(scaled "$n")
    gen "mem$n" "$m" syscalls --mode hvm --count "$(count_for "$m" "$per_call")" > /dev/null
    rm -f "$DIR/.m"
    timed "$DIR/.m" "$V --policy ept --cpu nehalem-2009 --no-db -q $(q "$DIR/mem$n.bin")"
    line="$line $(awk '{ printf "%.1f MiB", $3 / 1024 }' "$DIR/.m") at $(records "$DIR/mem$n.bin") events;"
    rm -f "$DIR/mem$n.bin"
  done
  echo "$line" | sed 's/;$/ (goal: flat, a few MiB)/'
else
  echo "replay memory: not measured: needs GNU time (/usr/bin/time; make deps installs it)"
fi
}

import_figures() {
  # Recordings: a synthetic xentrace file (scripts/gen-xentrace.c) imported and replayed,
  # against xenalyze --summary on the same file when XENALYZE names one (it is not in Debian).
  echo
  GEN_XENTRACE=${GEN_XENTRACE:-build/gen-xentrace}
  XEN_POLICY="--policy shadowcache --cpu skylake-xen-2018"   # the generator's guest runs on shadow paging
  if [ -x "$GEN_XENTRACE" ]; then
    XT="$DIR/xen.xentrace"; XB="$DIR/xen.bin"
    "$GEN_XENTRACE" -n "$(scaled 1000000)" -c 2 -o "$XT"
    echo "  xentrace: $(scaled 1000000) exits, $(du -h "$XT" | cut -f1)"
    "$VMXSIM" import xentrace "$XT" -o "$XB" > /dev/null
    X=$(q "$XT"); XBQ=$(q "$XB")
    # A recording replayed again reads the trace its first replay converted and kept in the
    # cache (sim/cli/stream_memo.h), kept once the file has been unchanged for 3 s: the bench's
    # own cache, filled now; the first replay of a recording is timed with the cache off, and a
    # replay with no kept conversions (VMXSIM_CACHE_MB=0) from the first reading's entry alone.
    export XDG_CACHE_HOME="$DIR/cache"
    rm -rf "$DIR/cache"
    while [ $(($(date +%s) - $(command stat -c %Z "$XT"))) -le 4 ]; do sleep 1; done
    "$VMXSIM" $XEN_POLICY --no-db -q "$XT" > /dev/null
    FIRST="VMXSIM_NO_CACHE=1 $V"
    VMXSIM_CACHE_MB=0 "$VMXSIM" $XEN_POLICY --no-db -q "$XT" > /dev/null   # the entry alone, beside the copy
    ENTRY="VMXSIM_CACHE_MB=0 $V"
    if [ -n "${XENALYZE:-}" ]; then
      # The generator's records carry no scheduling events, so xenalyze books the exits to
      # its default domain, which --summary shows only with --show-default-domain-summary
      # (it analyses them either way); its progress notes go to standard error.
      XA="$(q "$XENALYZE") --summary --show-default-domain-summary $X 2>/dev/null"
      # The two goals (the issue "Real recordings"): a policy replay of the recording at least
      # twice as fast as xenalyze --summary, and vmxsim summary of it at least five times.
      paired "replay goal: replay of the recording / xenalyze --summary" "<=" 0.5 "$V $XEN_POLICY --no-db -q $X" "$XA"
      paired "    the same, the recording's first replay (cache off)" "" "" "$FIRST $XEN_POLICY --no-db -q $X" "$XA"
      paired "    the same, no kept conversion (VMXSIM_CACHE_MB=0): one conversion" "" "" \
        "$ENTRY $XEN_POLICY --no-db -q $X" "$XA"
      paired "xentrace file: replay of the imported trace / xenalyze" "<=" 0.2 "$V $XEN_POLICY --no-db -q $XBQ" "$XA"
      # xenalyze's own job (no replay): the measured exits' views of the same file
      paired "xentrace file: vmxsim summary of the imported trace / xenalyze" "" "" "$V summary $XBQ" "$XA"
      paired "summary goal: vmxsim summary of the recording / xenalyze" "<=" 0.2 "$V summary $X" "$XA"
      # A host's recording (scripts/gen-xentrace.c -d: two guests of four vCPUs and dom0 on
      # four pCPUs, the scheduler's records, migrations, lost records): the lean pass after a
      # first pass over the headers, the records in TSC order; xenalyze attributes them alike.
      XD="$DIR/host.xentrace"
      "$GEN_XENTRACE" -d 2 -v 4 -0 2 -c 4 -l 2 -n "$(scaled 1000000)" -s 1 -o "$XD"
      D=$(q "$XD")
      paired "    the same, a host's recording (domains, lost records)" "" "" "$V summary $D" \
        "$(q "$XENALYZE") --summary $D 2>/dev/null"
      rm -f "$XD"
      # The same work on both sides: exit counts by reason (xenalyze's per vCPU, summed).
      xc=$(sh -c "$XA" | awk '/^ [A-Z_]+ +[0-9]+ +[0-9.]+s / { c[$1] += $2 } END { for (k in c) print k, c[k] }' | sort)
      vc=$(sh -c "$V $XEN_POLICY --no-db $X" 2>/dev/null | awk '/^ [A-Z_]+ +[0-9]+ +[0-9.]+ +[0-9.]+%/ { print $1, $2 }' | sort)
      if [ -n "$xc" ] && [ "$xc" = "$vc" ]; then
        echo "    exit counts by reason, vmxsim = xenalyze: $(echo "$xc" | tr '\n' ',' | sed 's/,$//; s/,/, /g')"
      else
        echo "    exit counts by reason DIFFER: vmxsim: $(echo "$vc" | tr '\n' ' '); xenalyze: $(echo "$xc" | tr '\n' ' ')"
      fi
    else
      rm -f "$DIR/.a" "$DIR/.b" "$DIR/.c"
      for i in $(seq "$RUNS"); do
        timed "$DIR/.a" "$V $XEN_POLICY --no-db -q $X"
        timed "$DIR/.b" "$V $XEN_POLICY --no-db -q $XBQ"
        timed "$DIR/.c" "$FIRST $XEN_POLICY --no-db -q $X"
      done
      awk -v a="$(stat "$DIR/.a" 1)" -v b="$(stat "$DIR/.b" 1)" -v c="$(stat "$DIR/.c" 1)" 'BEGIN { split(a, A, " "); split(b, B, " "); split(c, C, " ")
        printf "xentrace file: import + replay %.3f s [%.3f-%.3f] (the first replay, cache off: %.3f s [%.3f-%.3f]), replay of the imported trace %.3f s [%.3f-%.3f]\n", A[1], A[2], A[3], C[1], C[2], C[3], B[1], B[2], B[3]
        printf "    / xenalyze --summary (goals <= 0.5x and <= 0.2x): not measured: set XENALYZE=path to a xenalyze, or run make xenalyze\n" }'
    fi
    if [ -n "$GNUTIME" ]; then
      line="import peak memory (max RSS):"
      for n in 1000000 10000000; do
        m=$(scaled "$n")
        "$GEN_XENTRACE" -n "$m" -c 2 -o "$XT"
        rm -f "$DIR/.m"
        timed "$DIR/.m" "$V import xentrace $X -o $XBQ"
        line="$line $(awk '{ printf "%.1f MiB", $3 / 1024 }' "$DIR/.m") on $(du -h "$XT" | cut -f1);"
      done
      echo "$line" | sed 's/;$/ (goal: flat, < 16 MiB)/'
    else
      echo "import peak memory: not measured: needs GNU time (/usr/bin/time; make deps installs it)"
    fi
    rm -f "$XT" "$XB"
  else
    echo "xentrace figures: not measured: needs $GEN_XENTRACE (make bench builds it from scripts/gen-xentrace.c)"
  fi

    if [ -x scripts/bench-import.sh ]; then echo; scripts/bench-import.sh "$VMXSIM"; fi
}

# A sweep of 500 runs (20 lat_ctx traces x 5 policies x 5 CPU profiles) with one worker,
# then with two, into fresh databases, the traces made beforehand: the ratio of the two
# speeds is what the workers gain (goal: close to 2 on 2 cores).
bench_sweep() {
  sd="$DIR/sweep"
  rm -rf "$sd"
  mkdir -p "$sd"
  traces='{"generator": "lat_ctx", "params": {"procs": [2, 4, 8, 16, 32], "size": [0, 64], "iters": [50, 100]}}'
  printf '{"name": "bench-warm", "traces": [%s], "policies": ["nocache"], "cache": "cache"}\n' "$traces" > "$sd/warm.json"
  printf '{"name": "bench", "traces": [%s], "policies": ["nocache", "shadowcache", "cr3cache", "prevroots", "shadowcache+lazydr"],
    "cpus": ["core2-2007", "core2-2008", "nehalem-2009", "skylake-2019", "skylake-xen-2018"], "cache": "cache"}\n' \
    "$traces" > "$sd/plan.json"
  "$VMXSIM" sweep "$sd/warm.json" --db "$sd/warm.db" -q > /dev/null
  # CPU seconds of the sweep and its workers (GNU time, when installed): the work itself,
  # which the load of other processes does not change
  cpu() {
    out=$1
    shift
    if [ -x /usr/bin/time ]; then /usr/bin/time -f '%U %S' -o "$out" "$@"; else "$@"; fi
  }
  t0=$(now); cpu "$sd/j1.cpu" "$VMXSIM" sweep "$sd/plan.json" -j 1 --db "$sd/j1.db" -q > "$sd/j1.out"; t1=$(now)
  cpu "$sd/j2.cpu" "$VMXSIM" sweep "$sd/plan.json" -j 2 --db "$sd/j2.db" -q > "$sd/j2.out"; t2=$(now)
  n=$(sed -n 's/^sweep [^:]*: \([0-9]*\) runs:.*/\1/p' "$sd/j2.out")
  load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')
  awk -v n="$n" -v a="$t0" -v b="$t1" -v c="$t2" -v load="$load" 'BEGIN {
    printf "sweep of %d runs (lat_ctx traces x 5 policies x 5 CPU profiles, traces made beforehand;\n", n
    printf "  load average %s: other processes on the CPUs lower the ratio):\n", load
    printf "  -j 1  %6.2f s  %7.1f runs/s\n", b - a, n / (b - a)
    printf "  -j 2  %6.2f s  %7.1f runs/s\n", c - b, n / (c - b)
    printf "  -j 2 is %.2fx as fast as -j 1 (goal: close to 2 on 2 cores)\n", (b - a) / (c - b) }'
  if [ -s "$sd/j1.cpu" ] && [ -s "$sd/j2.cpu" ]; then
    awk '{ c[NR] = $1 + $2 } END { printf "  CPU seconds, sweep and workers: -j 1 %.2f, -j 2 %.2f (two workers add %+.1f%% work)\n",
                                   c[1], c[2], 100 * (c[2] - c[1]) / c[1] }' "$sd/j1.cpu" "$sd/j2.cpu"
  fi
  # Killed with -9 half way, then resumed: the stored runs are not run again.
  "$VMXSIM" sweep "$sd/plan.json" -j 2 --db "$sd/k.db" -q > /dev/null 2>&1 &
  pid=$!
  sleep "$(awk -v b="$t1" -v c="$t2" 'BEGIN { printf "%.1f", (c - b) / 2 }')"
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  "$VMXSIM" sweep "$sd/plan.json" -j 2 --db "$sd/k.db" -q > "$sd/k.out"
  check=$(sqlite3 "$sd/k.db" 'PRAGMA integrity_check; SELECT count(*) = count(DISTINCT run_key) FROM runs' 2>/dev/null |
          paste -sd' ' - || true)
  case $check in
    "ok 1") check="; integrity_check ok, every run stored once" ;;
    "") ;;
    *) check="; integrity_check and runs stored once: NOT OK ($check)" ;;
  esac
  echo "  killed with -9 half way and resumed: $(sed -n 's/.*: \([0-9]* run now, [0-9]* stored before, [0-9]* failed\).*/\1/p' "$sd/k.out")$check"
  rm -rf "$sd"
}

if want replay; then replay_figures; fi
if want import; then import_figures; fi
if want sweep; then echo; bench_sweep; fi
[ -n "${BENCH_KEEP:-}" ] || { rm -f "$DIR"/*.bin "$DIR"/*.xentrace "$DIR/.time" "$DIR/.a" "$DIR/.b" "$DIR/.m"; rmdir "$DIR" 2>/dev/null || true; }
