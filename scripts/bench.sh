#!/bin/sh
# `make bench`: events/s per policy on large generated traces, beside a raw
# sequential read of the same file in the same run, plus generator speed; then
# a 500-run sweep with -j 1 and with -j 2, and the ratio of their speeds.
# Speed goals (issues): >= 100 M events/s for a policy without MMU work,
# >= 25 M events/s for shadowcache on lat_ctx, >= 50 M events/s generated;
# a sweep on 2 workers close to twice as fast as on one.
#
#   scripts/bench.sh [VMXSIM [SECTION...]]    SECTION: replay, import, sweep (default: all)
set -eu
VMXSIM=${1:-./vmxsim}
[ $# -gt 0 ] && shift
SECTIONS=${*:-replay import sweep}
want() { case " $SECTIONS " in *" $1 "*) return 0 ;; esac; return 1; }
DIR=${BENCH_DIR:-bench}
EVENTS=${BENCH_EVENTS:-50000000}
mkdir -p "$DIR"

now() { date +%s.%N; }
rate() { awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN { t = b - a; printf "%8.1f M events/s  (%.2f s)", n / t / 1e6, t }'; }
count() { "$VMXSIM" trace info "$1" --format json | sed -n 's/.*"records":[^0-9]*\([0-9]*\).*/\1/p' | head -1; }

bench_trace() { # name, generator args...
  name=$1; shift
  f="$DIR/$name.bin"
  rm -f "$f"
  t0=$(now)
  if [ -x /usr/bin/time ]; then /usr/bin/time -f '%U' -o "$DIR/.cpu" "$VMXSIM" gen "$@" -o "$f"; else "$VMXSIM" gen "$@" -o "$f"; fi
  t1=$(now)
  n=$(count "$f")
  # also per second of the generator's own (user) CPU time: the wall time includes the kernel's writing
  cpu=$(awk -v n="$n" '{ if ($1 > 0) printf ", %.1f M events per user-CPU second", n / $1 / 1e6 }' "$DIR/.cpu" 2>/dev/null)
  echo "trace $name: $n events ($(du -h "$f" | cut -f1)); generated at $(rate "$n" "$t0" "$t1")$cpu"
  t0=$(now); cat "$f" > /dev/null; t1=$(now)
  echo "  raw read (cat)             $(rate "$n" "$t0" "$t1")"
  t0=$(now); "$VMXSIM" trace info "$f" > /dev/null; t1=$(now)
  echo "  record scan (trace info)   $(rate "$n" "$t0" "$t1")"
}

bench_policy() { # trace name, policy: wall rate, user-CPU rate and max RSS in one run
  f="$DIR/$1.bin"
  n=$(count "$f")
  t0=$(now)
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -f '%U %M' -o "$DIR/.cpu" "$VMXSIM" --policy "$2" --no-db --quiet --format csv "$f" > /dev/null
  else
    "$VMXSIM" --policy "$2" --no-db --quiet --format csv "$f" > /dev/null
  fi
  t1=$(now)
  extra=$(awk -v n="$n" '{ if ($1 > 0) printf ", %6.1f M events per user-CPU second", n / $1 / 1e6; printf ", max RSS %.0f MiB", $2 / 1024 }' "$DIR/.cpu" 2>/dev/null)
  printf '  %-24s %s%s\n' "$2" "$(rate "$n" "$t0" "$t1")" "$extra"
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

if want replay; then
  # System calls under EPT: no MMU work beyond the TLB, so the loop itself is measured.
  per=$((EVENTS / 6 + 1))
  bench_trace syscalls syscalls --count "$per" --mode hvm
  for p in ept shadowcache; do bench_policy syscalls "$p"; done
  # lat_ctx: the shadow policies with MMU work on every switch.
  bench_trace lat_ctx lat_ctx --procs 8 --size 0 --iters $((EVENTS / 8 / 20 + 1))
  for p in nocache shadowcache cr3cache prevroots ept; do bench_policy lat_ctx "$p"; done
  # memory must not grow with trace length: the same policy on a trace 1/10 as long
  bench_trace lat_ctx_small lat_ctx --procs 8 --size 0 --iters $((EVENTS / 8 / 200 + 1))
  bench_policy lat_ctx_small shadowcache
  rm -f "$DIR"/*.bin "$DIR/.cpu"
fi
if want import && [ -x scripts/bench-import.sh ]; then scripts/bench-import.sh "$VMXSIM"; fi
if want sweep; then bench_sweep; fi
rm -f "$DIR/.cpu"
rmdir "$DIR" 2>/dev/null || true
