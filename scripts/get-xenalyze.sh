#!/bin/sh
# Builds xenalyze, Xen's trace analyser, from Debian's source package of Xen, for the
# bench's comparison (`make bench` times `xenalyze --summary` beside vmxsim's replay of
# the same xentrace file).  Debian ships no xenalyze binary, but its `xen` source package
# carries tools/xentrace/xenalyze.c; this script takes that file and the four it needs
# (mread.c, mread.h, analyze.h, pv.h), Xen's public trace.h and tools' libs.h, all from
# one upstream tarball, unmodified, and compiles them with `cc -O2`.
#
#   scripts/get-xenalyze.sh [OUT]     OUT: the binary to write (default build/xenalyze)
#   scripts/get-xenalyze.sh --help    this text
#
# It reads the mirrors this system's apt already uses (`apt-cache policy`: the URI and
# suite of each main component) and asks them for their source lists through a private
# apt list directory, so that the system's apt configuration is not touched; then apt
# itself downloads the xen source package (about 7 MB: apt's mirror, proxy and checksum
# checks all apply) and only the files named above are extracted.  Needs apt-get, xz, tar
# and a C compiler.  The binary is kept only if its `--summary` of
# tests/data/xentrace-sample/sample.xentrace equals the one kept there.
set -eu

usage() { sed -n '2,/^set -eu/{/^set -eu/d;s/^# \{0,1\}//;p}' "$0"; }
case ${1:-} in
  -h|--help) usage; exit 0 ;;
  -*) echo "get-xenalyze: unknown option '$1' (usage: scripts/get-xenalyze.sh [OUT]; --help)" >&2; exit 2 ;;
esac
[ $# -le 1 ] || { echo "get-xenalyze: one OUT at most (usage: scripts/get-xenalyze.sh [OUT]; --help)" >&2; exit 2; }
OUT=${1:-build/xenalyze}
SAMPLE=$(cd "$(dirname "$0")/.." && pwd)/tests/data/xentrace-sample
CC=${CC:-cc}

for tool in apt-get apt-cache tar xz "$CC"; do
  command -v "$tool" > /dev/null || { echo "get-xenalyze: $tool is needed and not found" >&2; exit 1; }
done

T=$(mktemp -d "${TMPDIR:-/tmp}/get-xenalyze.XXXXXX")
trap 'rm -rf "$T"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mkdir -p "$T/lists/partial" "$T/cache/archives/partial" "$T/dl"
# "deb-src URI SUITE main" for each "NNN URI SUITE/main ARCH Packages" line apt knows:
# the system's own mirrors; of them the release's own suite where apt has it (its
# updates and security suites are left out: the trace format is stable, and their
# source pools are not always where their binary ones are)
apt-cache policy | awk '$2 ~ /^[a-z]+:\/\// && $3 ~ /\/main$/ { sub(/\/main$/, "", $3); print "deb-src " $2 " " $3 " main" }' |
  sort -u > "$T/all.list"
release=$( (. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}") || true)
grep " $release main\$" "$T/all.list" > "$T/sources.list" 2>/dev/null || cp "$T/all.list" "$T/sources.list"
[ -s "$T/sources.list" ] || { echo "get-xenalyze: apt knows no mirror with a main component (apt-cache policy); configure apt first" >&2; exit 1; }
APT="apt-get -q -o Dir::Etc::SourceList=$T/sources.list -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists=$T/lists -o Dir::Cache=$T/cache"
$APT update > "$T/update.log" 2>&1 || { cat "$T/update.log" >&2; echo "get-xenalyze: apt-get update of the source lists failed" >&2; exit 1; }
(cd "$T/dl" && $APT source --download-only xen) > "$T/source.log" 2>&1 ||
  { cat "$T/source.log" >&2; echo "get-xenalyze: apt-get source --download-only xen failed" >&2; exit 1; }
file=$(cd "$T/dl" && ls | grep '\.orig\.tar\.xz$' | head -n 1)
[ -n "$file" ] || { echo "get-xenalyze: the xen source package has no .orig.tar.xz" >&2; exit 1; }
mv "$T/dl/$file" "$T/$file"
echo "get-xenalyze: $file"

mkdir "$T/src"
tar -xJf "$T/$file" -C "$T/src" --strip-components=1 --wildcards \
  '*/tools/xentrace/xenalyze.c' '*/tools/xentrace/mread.c' '*/tools/xentrace/mread.h' \
  '*/tools/xentrace/analyze.h' '*/tools/xentrace/pv.h' \
  '*/xen/include/public/trace.h' '*/tools/include/xen-tools/libs.h'
B="$T/build"
mkdir -p "$B/xen" "$B/xen-tools"
cp "$T"/src/tools/xentrace/*.[ch] "$B/"
cp "$T/src/xen/include/public/trace.h" "$B/xen/trace.h"          # included as <xen/trace.h>
cp "$T/src/tools/include/xen-tools/libs.h" "$B/xen-tools/libs.h"  # included as <xen-tools/libs.h>
mkdir -p "$(dirname "$OUT")"
$CC -O2 -w -I"$B" -o "$T/xenalyze" "$B/xenalyze.c" "$B/mread.c"
# the sample's summary, as tests/data/xentrace-sample/README.md says it was made
"$T/xenalyze" --summary "$SAMPLE/sample.xentrace" 2>/dev/null > "$T/summary.txt" || true
if ! cmp -s "$T/summary.txt" "$SAMPLE/xenalyze-summary.txt"; then
  echo "get-xenalyze: the built xenalyze's --summary of $SAMPLE/sample.xentrace differs from the one kept there; not installed" >&2
  exit 1
fi
cp "$T/xenalyze" "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
echo "get-xenalyze: wrote $OUT (from $file)"
