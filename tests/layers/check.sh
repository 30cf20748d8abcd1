#!/bin/sh
# Fails when a file includes a header of a higher layer (tests/layers/layers.txt).
# Prints "layers: N passed, M failed" like the other test suites.
cd "$(dirname "$0")/../.." || exit 1
awk '
  FNR == NR {                                  # layers.txt: rank of each path prefix
    if ($0 ~ /^#/ || NF == 0) next
    rank++
    for (i = 1; i <= NF; i++) { pre[++np] = $i; prank[np] = rank }
    next
  }
  function layer(path,   i, best, len) {      # longest matching prefix wins
    best = 0; len = 0
    for (i = 1; i <= np; i++)
      if (index(path, pre[i]) == 1 && length(pre[i]) > len) { best = prank[i]; len = length(pre[i]) }
    return best
  }
  function dir(path) { sub(/[^\/]*$/, "", path); return path }
  /^[ \t]*#[ \t]*include[ \t]*"/ {
    inc = $0; sub(/^[^"]*"/, "", inc); sub(/".*$/, "", inc)
    target = (inc ~ /\//) ? inc : dir(FILENAME) inc
    if (target ~ /^build/) next                # generated files
    ls = layer(FILENAME); lt = layer(target)
    if (ls == 0 || lt == 0) next               # outside the layered tree (tests, build)
    if (dir(FILENAME) == dir(target) || lt < ls) { ok++; next }
    printf "  FAIL  %s:%d includes %s (layer %d, its own is %d)\n", FILENAME, FNR, target, lt, ls
    bad++
  }
  END {
    printf "layers: %d passed, %d failed (includes between layers)\n", ok + 0, bad + 0
    exit bad > 0
  }
' tests/layers/layers.txt $(find models sim workloads -name "*.[ch]" | sort)
