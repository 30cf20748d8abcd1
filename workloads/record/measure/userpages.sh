#!/bin/sh
# Counts the distinct user pages that one pass of a lat_ctx-like ring touches, in a 32-bit
# and a 64-bit build of ring.c, from valgrind's lackey memory trace (README.md of
# workloads/record, "Measuring the workload inputs").
#
# usage: workloads/record/measure/userpages.sh [-s KB] [-n PASSES] [--bits 32|64|both]
#                                              [--list] [--keep DIR]
#   -s KB        each process sums a buffer of KB kilobytes per pass, as lat_ctx -s KB
#                (default 0; -s 1000 takes a few minutes)
#   -n PASSES    token passes of the 2-process ring (default 12: about 6 per process, of
#                which the first 2 and the last are left out)
#   --bits B     which builds to run (default both)
#   --list       list the pages of every steady pass
#   --keep DIR   keep the programs and the lackey logs in DIR
# Needs a C compiler, valgrind and python3; the 32-bit build needs 'cc -m32' (Debian:
# gcc-multilib) and is skipped with a message where that cannot build.
# exit codes: 0 ok, 1 a measurement failed, 2 usage, 4 a tool is missing.
set -u
here=$(cd "$(dirname "$0")" && pwd)
CC=${CC:-cc}
KB=0; PASSES=12; BITS="32 64"; LIST=""; KEEP=""

die() { code=$1; shift; echo "userpages: $*" >&2; exit "$code"; }
usage() { sed -n '6,16s/^# \{0,1\}//p' "$0"; }

while [ $# -gt 0 ]; do
  case "$1" in
  -h|--help) usage; exit 0 ;;
  -s) [ $# -ge 2 ] || die 2 "-s needs a size in KB"; KB=$2; shift ;;
  -n) [ $# -ge 2 ] || die 2 "-n needs a number of passes"; PASSES=$2; shift ;;
  --bits) [ $# -ge 2 ] || die 2 "--bits needs 32, 64 or both"; case $2 in
            32|64) BITS=$2 ;; both) BITS="32 64" ;; *) die 2 "--bits: 32, 64 or both, not '$2'" ;;
          esac; shift ;;
  --list) LIST=--list ;;
  --keep) [ $# -ge 2 ] || die 2 "--keep needs a directory"; KEEP=$2; shift ;;
  *) die 2 "unknown argument '$1'; see --help" ;;
  esac
  shift
done
case $KB$PASSES in *[!0-9]*) die 2 "-s and -n take whole numbers" ;; esac

command -v valgrind >/dev/null 2>&1 || die 4 "valgrind is not installed (Debian: apt-get install valgrind)"
command -v python3 >/dev/null 2>&1 || die 4 "python3 is not installed (Debian: apt-get install python3)"
command -v "${CC%% *}" >/dev/null 2>&1 || die 4 "no C compiler '$CC' (set CC, or Debian: apt-get install gcc)"

if [ -n "$KEEP" ]; then
  mkdir -p "$KEEP" || die 1 "cannot create $KEEP"
  dir=$KEEP
else
  dir=$(mktemp -d) || die 1 "mktemp failed"
  trap 'rm -rf "$dir"' EXIT
fi

rc=0
for bits in $BITS; do
  prog="$dir/ring$bits"
  # shellcheck disable=SC2086  # CC may hold flags
  if ! $CC -O2 -m"$bits" -o "$prog" "$here/ring.c" 2>"$dir/cc$bits.err"; then
    if [ "$bits" = 32 ]; then
      echo "32-bit: skipped: '$CC -m32' cannot build ring.c (Debian: apt-get install gcc-multilib)"
    else
      echo "$bits-bit: skipped: '$CC -m$bits' cannot build ring.c: $(head -1 "$dir/cc$bits.err")"
    fi
    continue
  fi
  rm -f "$dir/lackey$bits".*
  echo "$bits-bit: $CC -O2 -m$bits ring.c; valgrind --tool=lackey --trace-mem=yes ring -s $KB 2 $PASSES"
  # Each process of the ring logs to its own file (%p: its pid); ring prints the marker.
  marker=$(valgrind --tool=lackey --trace-mem=yes --log-file="$dir/lackey$bits.%p" \
             "$prog" -s "$KB" 2 "$PASSES" | sed -n 's/^ring: marker //p')
  [ -n "$marker" ] || { echo "$bits-bit: ring did not run under valgrind" >&2; rc=1; continue; }
  python3 "$here/pagecount.py" $LIST "$marker" "$dir/lackey$bits".* |
    sed "s|^$dir/lackey$bits\.|  process |; s|^user pages|$bits-bit: user pages|" || rc=1
done
exit $rc
