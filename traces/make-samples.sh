#!/bin/sh
# Regenerates the sample traces described in traces/README.md, byte for byte.
# Usage: traces/make-samples.sh [VMXSIM [OUTDIR]]   (defaults: ./vmxsim and traces/)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
vmxsim=${1:-$root/vmxsim}
out=${2:-$root/traces}
mkdir -p "$out"

sample() { # FILE GENERATOR [OPTIONS...]
  file=$1
  shift
  "$vmxsim" gen "$@" -o "$out/$file"
  echo "  $out/$file"
}

sample lat_ctx-2p.bin     lat_ctx --procs 2 --size 0 --iters 25
sample lat_ctx-8p-32.bin  lat_ctx --procs 8 --size 16 --iters 5 --paging 32
sample hackbench-1g.bin   hackbench --groups 1 --loops 1
sample syscalls-pti.bin   syscalls --count 100 --mode pti
sample syscalls-pv64.bin  syscalls --count 100 --mode pv64
sample cr4toggle-pge.bin  cr4toggle --count 100 --bit pge
sample debug-2p.bin       debug --procs 2 --iters 25
