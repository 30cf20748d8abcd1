#!/bin/sh
# Records how hackbench (perf bench sched messaging, one group: 20 senders, 20 receivers)
# is scheduled, system-wide with perf, and prints sched_analyze.py's numbers for each
# configuration (README.md of workloads/record, "Measuring the workload inputs").
#
# usage: workloads/record/measure/messaging.sh [-l LOOPS] [-r RUNS] [-d DIR] [--cpu N]
#                                              [-m PAGES] [--analyze] [CONFIG...]
#   CONFIG      sockets-pinned, sockets-unpinned, pipes-pinned, pipes-unpinned (default: all);
#               pinned: taskset -c N; unpinned: on any CPU
#   -l LOOPS    perf bench's loops (default 300: 400 x LOOPS messages)
#   -r RUNS     recordings per configuration, pooled in the analysis (default 1)
#   -d DIR      where the recordings go, as CONFIG-rRUN.txt.gz (default messaging-recordings)
#   --cpu N     the CPU of the pinned configurations (default 0)
#   -m PAGES    perf's buffer per CPU, in pages (default 16384; more if samples are lost)
#   --analyze   do not record: analyse the recordings already in DIR
# Needs perf (Debian: linux-perf) permitted to record tracepoints system-wide (root, or
# kernel.perf_event_paranoid -1) and python3; x86-64 only (the filter names read and
# write by their x86-64 numbers, 0 and 1).
# exit codes: 0 ok, 1 a recording failed or lost samples, 2 usage, 4 perf missing or not
# permitted.
set -u
here=$(cd "$(dirname "$0")" && pwd)
LOOPS=300; RUNS=1; DIR=messaging-recordings; CPU=0; PAGES=16384; ANALYZE_ONLY=0; CONFIGS=""
ALL_CONFIGS="sockets-pinned sockets-unpinned pipes-pinned pipes-unpinned"

die() { code=$1; shift; echo "messaging: $*" >&2; exit "$code"; }
usage() { sed -n '6,17s/^# \{0,1\}//p' "$0"; }
number() { case $2 in ''|*[!0-9]*) die 2 "$1 takes a whole number, not '$2'" ;; esac; }

while [ $# -gt 0 ]; do
  case "$1" in
  -h|--help) usage; exit 0 ;;
  -l) [ $# -ge 2 ] || die 2 "-l needs a number"; number -l "$2"; LOOPS=$2; shift ;;
  -r) [ $# -ge 2 ] || die 2 "-r needs a number"; number -r "$2"; RUNS=$2; shift ;;
  -d) [ $# -ge 2 ] || die 2 "-d needs a directory"; DIR=$2; shift ;;
  --cpu) [ $# -ge 2 ] || die 2 "--cpu needs a CPU number"; number --cpu "$2"; CPU=$2; shift ;;
  -m) [ $# -ge 2 ] || die 2 "-m needs a number of pages"; number -m "$2"; PAGES=$2; shift ;;
  --analyze) ANALYZE_ONLY=1 ;;
  sockets-pinned|sockets-unpinned|pipes-pinned|pipes-unpinned) CONFIGS="$CONFIGS $1" ;;
  *) die 2 "unknown argument '$1' (configurations: $ALL_CONFIGS); see --help" ;;
  esac
  shift
done
: "${CONFIGS:=$ALL_CONFIGS}"
command -v python3 >/dev/null 2>&1 || die 4 "python3 is not installed (Debian: apt-get install python3)"

describe() { # CONFIG: what perf bench runs, in words
  case $1 in
  sockets-*) printf 'UNIX sockets' ;;
  pipes-*) printf 'pipes' ;;
  esac
  case $1 in
  *-pinned) printf ', pinned to CPU %s' "$CPU" ;;
  *) printf ', on any of %s CPUs' "$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo '?')" ;;
  esac
}

# record CONFIG RUN: one recording, as perf script text; returns 1 if it lost samples
record() {
  name="$1-r$2"; data="$DIR/$name.data"
  pipe=""; pin=""
  case $1 in pipes-*) pipe="-p " ;; esac
  case $1 in *-pinned) pin="taskset -c $CPU " ;; esac
  echo "messaging: recording $name: ${pin}perf bench sched messaging -g 1 ${pipe}-l $LOOPS" >&2
  # System-wide (-a): switches to and from other programs and idle are seen too. The
  # filter keeps only the message reads and writes (100 bytes: perf bench's DATASIZE).
  # shellcheck disable=SC2086  # $pin and $pipe are lists of words
  perf record -m "$PAGES" -a -e sched:sched_switch -e sched:sched_wakeup \
      -e sched:sched_process_fork -e raw_syscalls:sys_exit \
      --filter '(id == 0 || id == 1) && ret == 100' -o "$data" -- \
      $pin perf bench sched messaging -g 1 $pipe -l "$LOOPS" >"$DIR/$name.log" 2>&1 ||
    { tail -3 "$DIR/$name.log" >&2; die 1 "perf record failed (log: $DIR/$name.log)"; }
  # perf drops samples when its buffer fills faster than it writes them out; the
  # recording then misses switches and messages. perf report --stats counts the losses.
  lost=$(perf report --stats -i "$data" 2>/dev/null |
           awk '/LOST/ { for (i = 1; i < NF; i++) if ($i == "events:") n += $(i + 1) } END { print n + 0 }')
  out="$DIR/$name.txt.gz"
  [ "$lost" = 0 ] || out="$DIR/$name.lost.txt.gz"
  perf script --header -F comm,pid,tid,cpu,time,event,trace -i "$data" 2>/dev/null |
    gzip -9n > "$out" || die 1 "perf script failed"
  rm -f "$data"
  if [ "$lost" != 0 ]; then
    said=$(grep -i 'lost [0-9]' "$DIR/$name.log" | tr -s ' \n' ' ')
    echo "messaging: WARNING: $name lost samples (perf report --stats counts LOST records;" \
         "perf said: ${said:-nothing}): kept as $out but left out of the analysis;" \
         "record again with a larger -m" >&2
    return 1
  fi
  return 0
}

rc=0
mkdir -p "$DIR" || die 1 "cannot create $DIR"
if [ "$ANALYZE_ONLY" = 0 ]; then
  # The project's recorder checks perf, its permissions and tracefs, and says what is missing.
  "$here/../record.sh" --check >/dev/null || exit 4
  [ "$(uname -m)" = x86_64 ] || die 4 "the sys_exit filter uses x86-64 system-call numbers; this is $(uname -m)"
  for config in $CONFIGS; do
    rm -f "$DIR/$config"-r*.txt.gz
    run=1
    while [ "$run" -le "$RUNS" ]; do
      record "$config" "$run" || rc=1
      run=$((run + 1))
    done
  done
fi
for config in $CONFIGS; do
  set -- "$DIR/$config"-r*[0-9].txt.gz
  [ -e "$1" ] || { echo "== $config: no recordings in $DIR"; rc=1; continue; }
  echo "== $config ($(describe "$config")): $# recording(s)"
  python3 "$here/sched_analyze.py" "$@" || rc=1
done
exit $rc
