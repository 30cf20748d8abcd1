#!/bin/sh
# `make demo`: generate a small lat_ctx trace (2 processes passing a token, the
# classic shadow-page-table benchmark), replay it under several policies, store
# every run in the default database (vmxsim.db) and print the comparison.
# Every replay uses one CPU profile, Nehalem (2009): the first in the list with EPT
# (the Core 2 profiles have none, so `ept` fails VM entry there), and compare wants
# runs on one profile.
set -eu
VMXSIM=${1:-./vmxsim}
TRACE=${DEMO_TRACE:-demo-lat_ctx.bin}
CPU=${DEMO_CPU:-nehalem-2009}
POLICIES="nocache shadowcache cr3cache prevroots ept"

echo "== vmxsim gen lat_ctx --procs 2 --size 0 --iters 2000 --paging 64 -o $TRACE"
"$VMXSIM" gen lat_ctx --procs 2 --size 0 --iters 2000 --paging 64 -o "$TRACE"
"$VMXSIM" trace info "$TRACE" | head -12
for p in $POLICIES; do
  echo
  echo "== vmxsim --policy $p --cpu $CPU $TRACE"
  "$VMXSIM" --policy "$p" --cpu "$CPU" "$TRACE" > demo.out   # its exit status counts (no pipe)
  sed -n '1,/^Total exits/p' demo.out
  grep '^per operation' demo.out || true
done
echo
rm -f demo.out
echo "== vmxsim compare --trace $TRACE --policy $(echo $POLICIES | tr ' ' ',') --cpu $CPU"
"$VMXSIM" compare --trace "$TRACE" --policy "$(echo $POLICIES | tr ' ' ',')" --cpu "$CPU"
echo
echo "Every run above is stored in vmxsim.db: try 'vmxsim runs' and 'vmxsim report --last'."
