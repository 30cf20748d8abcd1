#!/bin/sh
# Writes the tracecmd harness's seeds (tests/fuzz/corpus/tracecmd/) from the two trace.dat
# files of traces/recorded/: each converted to file version 6 without compression (trace-cmd
# convert), then cut by trim-tracedat.py to the formats of the events it holds and to each
# CPU's first two pages of records.  The recordings as made carry the format of every event
# of the recording kernel (101 systems, 2,383 formats): libtraceevent parsing those took
# most of each input's time, and libFuzzer's mutations landed mostly in them or in
# compressed bytes.  The seeds import to the same records as the first pages of the
# recordings (a test of docs/testing.md's procedure: t_import.sh imports both).
# usage: tests/fuzz/make-tracecmd-seeds.sh   (needs trace-cmd and python3)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
rec="$here/../../traces/recorded"
out="$here/corpus/tracecmd"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
mkdir -p "$out"
trace-cmd convert -i "$rec/tracecmd-sched.dat" -o "$d/sched6.dat" --file-version 6 --compression none > /dev/null 2>&1
python3 "$here/trim-tracedat.py" --pages 2 "$d/sched6.dat" "$out/sched.dat" \
  raw_syscalls:sys_enter raw_syscalls:sys_exit sched:sched_switch
gzip -dc "$rec/kvm-tracedat.dat.gz" > "$d/kvm.dat"
trace-cmd convert -i "$d/kvm.dat" -o "$d/kvm6.dat" --file-version 6 --compression none > /dev/null 2>&1
python3 "$here/trim-tracedat.py" --pages 2 "$d/kvm6.dat" "$out/kvm.dat" \
  kvm:kvm_exit kvm:kvm_entry kvm:kvm_cr kvm:kvm_cpuid kvm:kvm_msr
ls -l "$out"
