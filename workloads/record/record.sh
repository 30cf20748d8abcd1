#!/bin/sh
# Records a workload on an ordinary Linux machine with perf tracepoints and writes the
# 'perf script -F +pid' text that 'vmxsim import perf-script' reads (see README.md here).
#
# usage: workloads/record/record.sh RECIPE [-o OUT.txt] [-l LOOPS] [--cpus LIST] [--max-lines N]
#                                   [--window-start F] [--src DIR] [--native-time] [--keep-data] [--check]
#        workloads/record/record.sh custom [-o OUT.txt] -- COMMAND [ARGS...]
# recipes:
#   pipe       perf bench sched pipe -l LOOPS (2 processes ping-pong a token: lat_ctx -s 0 2),
#              pinned to CPU 0 unless --cpus says otherwise      (default LOOPS 2000)
#   messaging  perf bench sched messaging -g 1 -l LOOPS (the hackbench case)  (default 5)
#   hackbench  rt-tests hackbench -g 1 -l LOOPS (processes, UNIX sockets)     (default 5)
#   syscalls   a null-syscall loop: perf bench syscall basic -l LOOPS, or dd with 1-byte
#              reads and writes where perf has no syscall benchmark          (default 20000)
#   lat_ctx    lmbench lat_ctx -s 0 2 (where lmbench is installed: not packaged by Debian)
#   kbuild     an allnoconfig i386 kernel build, make -jLOOPS vmlinux, in a copy of Debian's
#              linux-source (or --src DIR); also records execs, and appends the whole
#              build's event counts, object count and times as '# kbuild:' lines (default 1)
#   custom     any command after --
# options:
#   -o OUT.txt      output (default RECIPE.txt)
#   -l LOOPS        workload size (see above)
#   --cpus LIST     run the workload under 'taskset -c LIST' ("" for no pinning)
#   --max-lines N   keep only the first N event lines (to commit a small sample)
#   --window-start F  with --max-lines: the kept lines start at fraction F (0..1) of the
#                   recording's span rather than at its beginning (default 0; kbuild 0.5)
#   --src DIR       kbuild: the kernel tree to build (default: Debian's linux-source
#                   tarball unpacked into OUT.src)
#   --native-time   kbuild: after the recording, build again from clean without perf and
#                   append that build's real, user and system times and load average
#   --keep-data     keep perf.data beside OUT (OUT.data)
#   --check         only check that recording is possible, and say what is missing
# exit codes: 0 ok, 1 recording failed, 2 usage, 4 perf missing or not permitted.
set -u

EVENTS="sched:sched_switch sched:sched_process_fork raw_syscalls:sys_enter raw_syscalls:sys_exit
exceptions:page_fault_user exceptions:page_fault_kernel tlb:tlb_flush"

die() { code=$1; shift; echo "record: $*" >&2; exit "$code"; }
usage() { sed -n '5,/^# exit codes/s/^# \{0,1\}//p' "$0"; }   # the header, to its last line

# ---- checks: perf, permissions, tracefs, which tracepoints exist ----

tracefs_dir() {
  for d in /sys/kernel/tracing /sys/kernel/debug/tracing; do
    [ -d "$d/events" ] && { echo "$d"; return 0; }
  done
  return 1
}

check_perf() {
  command -v perf >/dev/null 2>&1 ||
    die 4 "perf is not installed (Debian/Ubuntu: apt-get install linux-perf, or linux-tools-\$(uname -r); Fedora: dnf install perf)"
  perf --version >/dev/null 2>&1 ||
    die 4 "'perf --version' fails: the perf wrapper found no perf for kernel $(uname -r) (install linux-tools-$(uname -r) or linux-perf)"
  paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo unknown)
  if [ "$(id -u)" != 0 ] && [ "$paranoid" != unknown ] && [ "$paranoid" -gt -1 ]; then
    die 4 "kernel.perf_event_paranoid is $paranoid: recording tracepoints as a normal user needs -1
  (sudo sysctl -w kernel.perf_event_paranoid=-1), CAP_PERFMON, or running this script as root"
  fi
  if ! dir=$(tracefs_dir); then
    # perf mounts tracefs itself when it may (as root); ask it to, then look again.
    perf list 'sched:sched_switch' >/dev/null 2>&1
    dir=$(tracefs_dir) || die 4 "tracefs is not mounted or not readable (as root: mount -t tracefs nodev /sys/kernel/tracing;
  as a user: also make /sys/kernel/tracing readable, e.g. chmod -R go+rx /sys/kernel/tracing)"
  fi
  [ -r "$dir/events/sched/sched_switch/id" ] || [ -r "$dir/events/sched/sched_switch/format" ] ||
    die 4 "cannot read $dir/events/sched/sched_switch (tracefs permissions: run as root, or chmod -R go+rx $dir)"
  TRACEFS=$dir
}

# The tracepoints of $EVENTS this kernel has (tlb:tlb_flush and exceptions:* are x86-only).
available_events() {
  avail=""
  for e in $EVENTS; do
    if [ -d "$TRACEFS/events/${e%%:*}/${e#*:}" ]; then avail="$avail $e"
    else echo "record: note: tracepoint $e does not exist on this kernel; recording without it" >&2; fi
  done
  case "$avail" in *sched:sched_switch*) ;; *) die 4 "this kernel has no sched:sched_switch tracepoint" ;; esac
  echo "$avail"
}

probe_record() {
  tmp=$(mktemp -d)
  if ! perf record -q -e sched:sched_switch -o "$tmp/probe.data" -- true >"$tmp/err" 2>&1; then
    msg=$(head -5 "$tmp/err")
    rm -rf "$tmp"
    die 4 "'perf record -e sched:sched_switch -- true' fails here:
$msg"
  fi
  rm -rf "$tmp"
}

# ---- recipes ----

find_lat_ctx() {
  command -v lat_ctx 2>/dev/null && return 0
  for f in /usr/lib/lmbench/bin/*/lat_ctx /usr/local/lib/lmbench/bin/*/lat_ctx /opt/lmbench/bin/*/lat_ctx; do
    [ -x "$f" ] && { echo "$f"; return 0; }
  done
  return 1
}

# kbuild: a configured, clean i386 allnoconfig tree in KSRC, and the cross compiler
# when there is one (KCROSS); the native gcc builds i386 kernels too (-m32).
kbuild_prepare() {
  command -v flex >/dev/null 2>&1 && command -v bison >/dev/null 2>&1 && command -v bc >/dev/null 2>&1 ||
    die 4 "kbuild needs flex, bison and bc (Debian: scripts/setup.sh kbuild)"
  if [ -z "$KSRC" ]; then
    tarball=$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | tail -1)
    [ -n "$tarball" ] || die 4 "no kernel source: give --src DIR, or install Debian's linux-source (scripts/setup.sh kbuild)"
    KSRC="${OUT:-kbuild.txt}.src"
    if [ ! -f "$KSRC/Makefile" ]; then
      echo "record: unpacking $tarball into $KSRC" >&2
      mkdir -p "$KSRC" && tar -xJf "$tarball" -C "$KSRC" --strip-components=1 || die 1 "cannot unpack $tarball"
    fi
  fi
  [ -f "$KSRC/Makefile" ] || die 2 "--src $KSRC: no kernel Makefile there"
  KCROSS=""
  command -v i686-linux-gnu-gcc >/dev/null 2>&1 && KCROSS="CROSS_COMPILE=i686-linux-gnu-"
  # shellcheck disable=SC2086
  { make -s -C "$KSRC" ARCH=i386 $KCROSS clean && make -s -C "$KSRC" ARCH=i386 $KCROSS allnoconfig; } >&2 ||
    die 1 "make allnoconfig failed in $KSRC"
  KCC=$(${KCROSS#CROSS_COMPILE=}gcc --version | head -1)
  KVER=$(make -s -C "$KSRC" kernelversion 2>/dev/null)
}

# The load average now: its 1, 5 and 15 minute figures ("unknown" without /proc).
loadavg() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown; }

# A '# kbuild: time LABEL' line. $2 $3: the times before and after (date +%s.%N), $4 $5:
# the children's user and system times before and after (the last line of the shell's
# 'times'), $6 $7: the load average before and after.
kbuild_time_line() {
  echo "$4 $5" | awk -v label="$1" -v real="$(echo "$3 - $2" | bc)" -v l0="$6" -v l1="$7" '
    function sec(s, m) { m = s; sub(/m.*/, "", m); sub(/^[0-9]+m/, "", s); sub(/s$/, "", s); return m * 60 + s }
    { printf "# kbuild: time %s: real %.2f s, user %.2f s, sys %.2f s (load average before %s, after %s)\n",
             label, real, sec($3) - sec($1), sec($4) - sec($2), l0, l1 }'
}

# kbuild: what the whole build did, as '# kbuild:' comment lines. $1: the stamp file made
# just before the recording, $2 $3: the times before and after it (date +%s.%N), $4 $5:
# the children's user and system times before and after it (the shell's 'times'), $6 $7:
# the load average before and after it.
kbuild_summary() {
  objs=$(find "$KSRC" -name '*.o' -newer "$1" | wc -l)
  cobjs=$(find "$KSRC" -name '*.o' -newer "$1" | sed 's/\.o$/.c/' | while read -r f; do [ -f "$f" ] && echo; done | wc -l)
  echo "# kbuild: command: make -C SRC ARCH=i386 ${KCROSS:+$KCROSS }-j$LOOPS vmlinux (allnoconfig; Linux $KVER)"
  echo "# kbuild: toolchain: $KCC"
  echo "# kbuild: host: $(uname -sr) $(uname -m), $(nproc 2>/dev/null || echo '?') CPUs"
  echo "# kbuild: objects built: $objs ($cobjs compiled from .c files)"
  kbuild_time_line "under perf record" "$2" "$3" "$4" "$5" "$6" "$7"
}

# kbuild --native-time: the same build again from a clean tree, without perf, so that its
# user and system times are the build's own (perf's cost per event is not in them).
# Must run in the main shell: 'times' in a subshell sees none of the build.
kbuild_time_native() {
  # shellcheck disable=SC2086
  { make -s -C "$KSRC" ARCH=i386 $KCROSS clean && make -s -C "$KSRC" ARCH=i386 $KCROSS allnoconfig; } >&2 ||
    die 1 "make clean allnoconfig failed in $KSRC (for the build without perf)"
  nstamp="$OUT.nstamp"
  : > "$nstamp"
  nl0=$(loadavg); n0=$(date +%s.%N)
  times > "$OUT.times0"
  echo "record: timing the build again without perf: make -s -C $KSRC ARCH=i386 $KCROSS -j$LOOPS vmlinux" >&2
  # shellcheck disable=SC2086
  make -s -C "$KSRC" ARCH=i386 $KCROSS -j"$LOOPS" vmlinux >&2 || { rm -f "$nstamp" "$OUT.times0"; die 1 "the build without perf failed"; }
  n1=$(date +%s.%N)
  times > "$OUT.times1"
  nl1=$(loadavg)
  nc0=$(tail -1 "$OUT.times0"); nc1=$(tail -1 "$OUT.times1"); rm -f "$OUT.times0" "$OUT.times1"
  kbuild_time_line "without perf" "$n0" "$n1" "$nc0" "$nc1" "$nl0" "$nl1" >> "$OUT"
  echo "# kbuild: objects built without perf: $(find "$KSRC" -name '*.o' -newer "$nstamp" | wc -l)" >> "$OUT"
  rm -f "$nstamp"
}

# Sets CMD (the workload) and default LOOPS / CPUS for recipe $1.
recipe() {
  case "$1" in
  pipe)
    : "${LOOPS:=2000}"; : "${CPUS=0}"
    CMD="perf bench sched pipe -l $LOOPS" ;;
  messaging)
    : "${LOOPS:=5}"; : "${CPUS=}"
    CMD="perf bench sched messaging -g 1 -l $LOOPS" ;;
  hackbench)
    : "${LOOPS:=5}"; : "${CPUS=}"
    command -v hackbench >/dev/null 2>&1 ||
      die 4 "hackbench not found (rt-tests: apt-get install rt-tests); 'messaging' records the same workload with perf bench"
    CMD="hackbench -g 1 -l $LOOPS" ;;
  syscalls)
    : "${LOOPS:=20000}"; : "${CPUS=0}"
    if perf bench syscall basic -l 1 >/dev/null 2>&1; then CMD="perf bench syscall basic -l $LOOPS"
    else CMD="dd if=/dev/zero of=/dev/null bs=1 count=$LOOPS status=none"; fi ;;
  lat_ctx)
    : "${LOOPS:=0}"; : "${CPUS=0}"
    lc=$(find_lat_ctx) ||
      die 4 "lmbench's lat_ctx not found in PATH or /usr/lib/lmbench/bin (Debian does not package lmbench: build it from source)"
    CMD="$lc -N 1 -s $LOOPS 2" ;;
  kbuild)
    : "${LOOPS:=1}"; : "${CPUS=}"; : "${WINDOW:=0.5}"; : "${MAX_LINES:=150000}"
    kbuild_prepare
    EXTRA_EVENTS="sched:sched_process_exec"
    PERF_OPTS="-m 65536"                 # a build's event rate overflows perf's default buffer
    CMD="make -s -C $KSRC ARCH=i386 $KCROSS -j$LOOPS vmlinux" ;;
  custom)
    : "${CPUS=}"
    [ -n "$CUSTOM" ] || die 2 "custom: give the command after --" ;;
  *) die 2 "unknown recipe '$1' (pipe, messaging, hackbench, syscalls, lat_ctx, kbuild, custom); see --help" ;;
  esac
}

# ---- arguments ----

RECIPE=""; OUT=""; LOOPS=""; MAX_LINES=""; KEEP=0; CHECK=0; CUSTOM=""; KSRC=""; WINDOW=""; NATIVE=0
EXTRA_EVENTS=""; PERF_OPTS=""
unset CPUS
while [ $# -gt 0 ]; do
  case "$1" in
  -h|--help) usage; exit 0 ;;
  -o) [ $# -ge 2 ] || die 2 "-o needs a file"; OUT=$2; shift ;;
  -l) [ $# -ge 2 ] || die 2 "-l needs a number"; LOOPS=$2; shift ;;
  --cpus) [ $# -ge 2 ] || die 2 "--cpus needs a CPU list"; CPUS=$2; shift ;;
  --max-lines) [ $# -ge 2 ] || die 2 "--max-lines needs a number"; MAX_LINES=$2; shift ;;
  --window-start) [ $# -ge 2 ] || die 2 "--window-start needs a fraction"; WINDOW=$2; shift
    echo "$WINDOW" | grep -Eq '^(0|1|0?\.[0-9]+)$' || die 2 "--window-start: '$WINDOW' is not a fraction from 0 to 1" ;;
  --src) [ $# -ge 2 ] || die 2 "--src needs a directory"; KSRC=$2; shift ;;
  --native-time) NATIVE=1 ;;
  --keep-data) KEEP=1 ;;
  --check) CHECK=1 ;;
  --) shift; CUSTOM="$*"; break ;;
  -*) die 2 "unknown option '$1'; see --help" ;;
  *) [ -z "$RECIPE" ] || die 2 "one recipe expected, got '$1' too"; RECIPE=$1 ;;
  esac
  shift
done
[ "$NATIVE" = 0 ] || [ "$RECIPE" = kbuild ] || die 2 "--native-time is for the kbuild recipe only"

check_perf
EV=$(available_events)
probe_record
if [ "$CHECK" = 1 ]; then
  echo "record: ok: $(perf --version), perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid), tracefs at $TRACEFS"
  echo "record: tracepoints:$EV"
  exit 0
fi
[ -n "$RECIPE" ] || { usage >&2; exit 2; }
: "${OUT:=$RECIPE.txt}"
recipe "$RECIPE"
[ "$RECIPE" = custom ] && CMD=$CUSTOM
[ -n "${CPUS:-}" ] && CMD="taskset -c $CPUS $CMD"
[ -z "$WINDOW" ] || [ -n "$MAX_LINES" ] || [ "$RECIPE" = kbuild ] || die 2 "--window-start needs --max-lines"

# ---- record and convert ----

data="$OUT.data"
set --
for e in $EV $EXTRA_EVENTS; do set -- "$@" -e "$e"; done
echo "record: perf record$EV $EXTRA_EVENTS -- $CMD" >&2
# Without -a perf follows only the workload's tasks (and their children): switches
# *to* them from other tasks are not seen, and the importer infers those.
stamp="$OUT.stamp"
: > "$stamp"
l0=$(loadavg); t0=$(date +%s.%N)
# 'times' in a command substitution would report the subshell's children (none):
# run in this shell, into a file
times > "$OUT.times0"
# shellcheck disable=SC2086
perf record -q $PERF_OPTS "$@" -o "$data" -- $CMD >&2 || { rm -f "$stamp"; die 1 "perf record failed"; }
t1=$(date +%s.%N)
times > "$OUT.times1"             # the children's user and system time, all of them so far
l1=$(loadavg)
cpu0=$(tail -1 "$OUT.times0"); cpu=$(tail -1 "$OUT.times1"); rm -f "$OUT.times0" "$OUT.times1"
# perf's own warnings ("Processed N samples and lost 28.91% samples!") go to standard
# error: they are kept as "# perf: ..." comments, where 'vmxsim import' looks for lost data.
warn="$OUT.warnings"
counts="$OUT.counts"
# One pass: every event is counted by name (the whole recording's figures); the event
# lines kept are the first MAX_LINES from fraction WINDOW of the recording's span (the
# header's first and last sample times), or all of them.
perf script --header -F +pid -i "$data" 2>"$warn" | awk -v max="${MAX_LINES:--1}" -v frac="${WINDOW:-0}" -v counts="$counts" '
  /^#/ { if (/^# time of first sample :/) first = $NF; if (/^# time of last sample :/) last = $NF; print; next }
  {
    if (!match($0, /\] +[0-9]+\.[0-9]+: +[a-z_0-9]+:[a-z_0-9]+:/)) { if (max < 0 || (kept > 0 && kept < max)) print; next }
    f = substr($0, RSTART, RLENGTH); sub(/^\] +/, "", f)
    t = f; sub(/:.*/, "", t); t += 0
    ev = f; sub(/^[0-9.]+: +/, "", ev); sub(/:$/, "", ev)
    n[ev]++
    if (max < 0 || (t >= first + frac * (last - first) && kept < max)) {
      print; if (!kept) wfirst = t; wlast = t; kept++
    }
  }
  END {
    printf "# events: whole recording: %.6f s from the first to the last sample;", last - first > counts
    for (e in n) printf " %s %d", e, n[e] > counts
    printf "\n" > counts
    if (max >= 0) printf "# events: kept: %d event lines from %.6f s (fraction %s of the span) to %.6f s\n", kept, wfirst - first, frac, wlast - first > counts
  }' > "$OUT" || { rm -f "$warn" "$counts" "$stamp"; die 1 "perf script failed"; }
[ "$RECIPE" = kbuild ] && { kbuild_summary "$stamp" "$t0" "$t1" "$cpu0" "$cpu" "$l0" "$l1"; sed 's/^# events:/# kbuild:/' "$counts"; } >> "$OUT"
[ "$NATIVE" = 1 ] && kbuild_time_native
grep -v '^[[:space:]]*$' "$warn" | sed 's/^/# perf: /' >> "$OUT"
rm -f "$warn" "$counts" "$stamp"
[ "$KEEP" = 1 ] || rm -f "$data"
echo "record: wrote $OUT ($(grep -vc '^#' "$OUT") event lines); next: vmxsim import perf-script $OUT -o ${OUT%.txt}.bin" >&2
