#!/bin/sh
# Regenerates the figures of docs/figures.md (the gallery; the README shows one) in docs/: every chart `vmxsim reproduce
# --plots` draws (docs/EXPERIMENT.png) and the three plot.sh charts of scripts/plot/README.md's
# example (docs/plot-exits.png, plot-cycles.png, plot-param-procs.png), and sweep.sh's chart
# of a small sweep (docs/plot-sweep-procs.png).  PNG only: the SVG
# and PDF of each are made by the same commands.  Takes about half a minute.
# usage: scripts/plot/gallery.sh [VMXSIM]   (default ./vmxsim)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
vmxsim=${1:-$root/vmxsim}
case $vmxsim in /*) ;; *) vmxsim=$PWD/$vmxsim ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$vmxsim" reproduce --no-db --quiet --plots "$tmp/xp" > /dev/null
for f in "$tmp"/xp/*.png; do cp "$f" "$root/docs/"; done

cd "$tmp"
for p in 2 4 8 16 32; do
  "$vmxsim" gen lat_ctx --procs $p --iters 200 -o lat_ctx-$p.bin
  for pol in nocache shadowcache cr3cache prevroots; do
    "$vmxsim" --policy $pol --db g.db lat_ctx-$p.bin > /dev/null
  done
done
plot=$root/scripts/plot/plot.sh
"$plot" exits --db g.db --trace lat_ctx-4.bin -o "$tmp/plot-exits" > /dev/null
"$plot" cycles --db g.db --trace lat_ctx-4.bin -o "$tmp/plot-cycles" > /dev/null
"$plot" param --db g.db --param procs -o "$tmp/plot-param-procs" > /dev/null
# a sweep (docs/sweeps.md) and scripts/plot/sweep.sh's chart of it
cat > study.json <<'PLAN'
{"name": "gallery", "traces": [{"generator": "lat_ctx", "params": {"procs": [2, 3, 4, 6, 8], "iters": 200, "vcpus": 4}}],
 "policies": ["shadowcache", "cr3cache", "prevroots"], "cpus": ["core2-2008"], "cache": "cache"}
PLAN
"$vmxsim" sweep study.json --db s.db --quiet > /dev/null
"$root/scripts/plot/sweep.sh" --db s.db --param procs -o "$tmp/plot-sweep-procs" > /dev/null
cp plot-exits.png plot-cycles.png plot-param-procs.png plot-sweep-procs.png "$root/docs/"
ls "$root"/docs/*.png
