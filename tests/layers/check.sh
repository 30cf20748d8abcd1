#!/bin/sh
# Fails when a file includes a header of a higher layer (tests/layers/layers.txt),
# or when headers include each other in a circle (a.h -> b.h -> a.h), which
# layers cannot see inside one folder.
# Prints "layers: N passed, M failed" like the other test suites.
# Usage: tests/layers/check.sh [TREE]   (TREE: the top of a tree to check; default this one)
layers=$(cd "$(dirname "$0")" && pwd)/layers.txt
cd "${1:-$(dirname "$0")/../..}" || exit 1
edges=$(mktemp) && counts=$(mktemp) || exit 1
trap 'rm -f "$edges" "$counts"' EXIT
awk -v edges="$edges" -v counts="$counts" '
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
  function collapse(path,   n, i, k, part, out) {   # a/b/../c -> a/c, ./a -> a
    n = split(path, part, "/"); k = 0
    for (i = 1; i <= n; i++) {
      if (part[i] == "." || part[i] == "") continue
      if (part[i] == ".." && k > 0 && out[k] != "..") { k--; continue }
      out[++k] = part[i]
    }
    path = ""
    for (i = 1; i <= k; i++) path = path (i > 1 ? "/" : "") out[i]
    return path
  }
  # "x.h" beside the file, "dir/x.h" from the top (-I.), "../x.h" from the file;
  # <models/...>, <sim/...>, <workloads/...> from the top as well
  /^[ \t]*#[ \t]*include[ \t]*("|<(models|sim|workloads)\/)/ {
    inc = $0; sub(/^[^"<]*["<]/, "", inc); sub(/[">].*$/, "", inc)
    if (inc ~ /^\.\.?\//) target = collapse(dir(FILENAME) inc)
    else target = collapse((inc ~ /\//) ? inc : dir(FILENAME) inc)
    if (target ~ /^build/) next                # generated files
    print FILENAME, target > edges
    ls = layer(FILENAME); lt = layer(target)
    if (ls == 0 || lt == 0) next               # outside the layered tree (tests, build)
    if (dir(FILENAME) == dir(target) || lt < ls) { ok++; next }
    printf "  FAIL  %s:%d includes %s (layer %d, its own is %d)\n", FILENAME, FNR, target, lt, ls
    bad++
  }
  END { print ok + 0, bad + 0 > counts }
' "$layers" $(find models sim workloads -name "*.[ch]" 2>/dev/null | sort)
read -r ok bad < "$counts"
# tsort names the files of each circle it finds on its standard error.
loop=$(tsort "$edges" 2>&1 >/dev/null | sed -n 's/^tsort: //p' | grep -v 'input contains a loop' | tr '\n' ' ')
if [ -n "$loop" ]; then
  printf '  FAIL  include cycle among: %s\n' "${loop% }"
  bad=$((bad + 1))
fi
printf 'layers: %d passed, %d failed (includes between layers, include cycles)\n' "$ok" "$bad"
[ "$bad" -eq 0 ]
