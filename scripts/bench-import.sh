#!/bin/sh
# Times 'vmxsim import perf-script' on a large synthetic perf script text and checks >= 1M lines/s of CPU time.
# Usage: scripts/bench-import.sh [VMXSIM] [LINES]   (defaults: ./vmxsim, 2000000; MIN_RATE=1000000)
# The text imitates a pinned 'perf bench sched pipe' recording: two processes ping-pong on
# one CPU (sys_enter/sys_exit read and write, sched_switch, the switch's tlb_flush), plus
# page faults and a second CPU, so every converter path is timed.
set -e
VMXSIM=${1:-./vmxsim}
LINES=${2:-2000000}
MIN_RATE=${MIN_RATE:-1000000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM

awk -v n="$LINES" 'BEGIN {
  t = 1000.0; a = 4242; b = 4243
  for (i = 0; i < n; ) {
    p = (i % 16 < 8) ? a : b; q = (p == a) ? b : a; cpu = (i % 97 == 0) ? "001" : "000"
    printf "      sched-pipe %5d/%-5d [%s] %.6f:       raw_syscalls:sys_enter: NR 1 (5, 7ffd3be51060, 4, 7ff77642db60, 0, 0)\n", p, p, cpu, t; t += 0.000002; i++
    printf "      sched-pipe %5d/%-5d [%s] %.6f:        raw_syscalls:sys_exit: NR 1 = 4\n", p, p, cpu, t; t += 0.000002; i++
    printf "      sched-pipe %5d/%-5d [%s] %.6f:       raw_syscalls:sys_enter: NR 0 (6, 7ffd3be51060, 4, 7ff77642db60, 0, 0)\n", p, p, cpu, t; t += 0.000001; i++
    printf "      sched-pipe %5d/%-5d [%s] %.6f:   exceptions:page_fault_user: address=0x7ff77710%04x ip=0x7ff77710d7ad error_code=0x6\n", p, p, cpu, t, i % 65536; t += 0.000001; i++
    printf "      sched-pipe %5d/%-5d [%s] %.6f:           sched:sched_switch: prev_comm=sched-pipe prev_pid=%d prev_prio=120 prev_state=S ==> next_comm=sched-pipe next_pid=%d next_prio=120\n", p, p, cpu, t, p, q; t += 0.000001; i++
    printf "      sched-pipe %5d/%-5d [%s] %.6f:                tlb:tlb_flush: pages:-1 reason:flush on task switch (0)\n", p, p, cpu, t; t += 0.000001; i++
    printf "      sched-pipe %5d/%-5d [%s] %.6f:        raw_syscalls:sys_exit: NR 0 = 4\n", q, q, cpu, t; t += 0.000002; i++
    printf "            perf %5d/%-5d [%s] %.6f:      sched:sched_wakeup: comm=sched-pipe pid=%d prio=120 target_cpu=000\n", q, q, cpu, t, p; t += 0.000001; i++
  }
}' > "$dir/big.txt"

lines=$(wc -l < "$dir/big.txt" | tr -d ' ')
bytes=$(wc -c < "$dir/big.txt" | tr -d ' ')
cat "$dir/big.txt" > /dev/null                     # warm the page cache: time the parser, not the disk
# The check uses CPU time (user + system, from GNU time where installed) so that other load
# on a shared machine does not fail it; wall time is reported beside it.
start=$(date +%s.%N)
if [ -x /usr/bin/time ]; then
  /usr/bin/time -f '%U %S' -o "$dir/cpu" "$VMXSIM" import perf-script "$dir/big.txt" -o "$dir/big.bin" || exit 1
else
  "$VMXSIM" import perf-script "$dir/big.txt" -o "$dir/big.bin" || exit 1
fi
end=$(date +%s.%N)
cpu=$(awk '{ print $1 + $2 }' "$dir/cpu" 2>/dev/null)
awk -v l="$lines" -v b="$bytes" -v s="$start" -v e="$end" -v cpu="${cpu:-}" -v min="$MIN_RATE" 'BEGIN {
  wall = e - s; if (wall <= 0) wall = 1e-6
  t = cpu != "" ? cpu : wall; if (t <= 0) t = 1e-6
  rate = l / t
  printf "import perf-script: %d lines (%.0f MB): %.3f s wall (%.2f M lines/s), %s s CPU (%.2f M lines/s, %.0f MB/s); minimum %.2f M lines/s\n",
         l, b / 1e6, wall, l / wall / 1e6, cpu != "" ? sprintf("%.3f", cpu) : "?", rate / 1e6, b / 1e6 / t, min / 1e6
  exit rate >= min ? 0 : 1
}' || { echo "bench-import: FAIL: slower than $MIN_RATE lines/s" >&2; exit 1; }
