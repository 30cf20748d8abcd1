#!/bin/sh
# `make demo`: generate a small lat_ctx trace (2 processes passing a token, the
# classic shadow-page-table benchmark), replay it under several policies, store
# every run in the default database (vmxsim.db) and print the comparison.
set -eu
VMXSIM=${1:-./vmxsim}
TRACE=${DEMO_TRACE:-demo-lat_ctx.bin}
POLICIES="nocache shadowcache cr3cache prevroots ept"

echo "== vmxsim gen lat_ctx --procs 2 --size 0 --iters 2000 --paging 64 -o $TRACE"
"$VMXSIM" gen lat_ctx --procs 2 --size 0 --iters 2000 --paging 64 -o "$TRACE"
"$VMXSIM" trace info "$TRACE" | head -12
for p in $POLICIES; do
  echo
  echo "== vmxsim --policy $p $TRACE"
  "$VMXSIM" --policy "$p" "$TRACE" | sed -n '1,/^Total exits/p'
  "$VMXSIM" report --last | grep '^per operation' || true
done
echo
echo "== vmxsim compare --trace $TRACE --policy $(echo $POLICIES | tr ' ' ',')"
"$VMXSIM" compare --trace "$TRACE" --policy "$(echo $POLICIES | tr ' ' ',')"
echo
echo "Every run above is stored in vmxsim.db: try 'vmxsim runs' and 'vmxsim report --last'."
