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
# It asks Debian's mirror for the source package's file list through a private apt
# list directory (the system's apt configuration is not touched), downloads only the
# upstream tarball (about 5 MB), checks its SHA-256 against the list, and extracts only
# the files named above.  Needs apt-get, curl, xz, tar and a C compiler; the mirror is
# DEBIAN_MIRROR (default http://deb.debian.org/debian).  The binary is kept only if its
# `--summary` of tests/data/xentrace-sample/sample.xentrace equals the one kept there.
set -eu

usage() { sed -n '2,/^set -eu/{/^set -eu/d;s/^# \{0,1\}//;p}' "$0"; }
case ${1:-} in
  -h|--help) usage; exit 0 ;;
  -*) echo "get-xenalyze: unknown option '$1' (usage: scripts/get-xenalyze.sh [OUT]; --help)" >&2; exit 2 ;;
esac
[ $# -le 1 ] || { echo "get-xenalyze: one OUT at most (usage: scripts/get-xenalyze.sh [OUT]; --help)" >&2; exit 2; }
OUT=${1:-build/xenalyze}
SAMPLE=$(cd "$(dirname "$0")/.." && pwd)/tests/data/xentrace-sample
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
SUITE=$( (. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}") || true)
SUITE=${SUITE:-bookworm}
CC=${CC:-cc}

for tool in apt-get curl tar xz sha256sum "$CC"; do
  command -v "$tool" > /dev/null || { echo "get-xenalyze: $tool is needed and not found" >&2; exit 1; }
done

T=$(mktemp -d "${TMPDIR:-/tmp}/get-xenalyze.XXXXXX")
trap 'rm -rf "$T"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mkdir -p "$T/lists/partial"
echo "deb-src $MIRROR $SUITE main" > "$T/sources.list"   # the release's own (the trace format is stable)
APT="apt-get -q -o Dir::Etc::SourceList=$T/sources.list -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists=$T/lists -o Dir::Cache=$T/cache"
$APT update > "$T/update.log" 2>&1 || { cat "$T/update.log" >&2; echo "get-xenalyze: apt-get update of the source lists failed" >&2; exit 1; }

# 'URL' FILE SIZE SHA256:HASH, one line per file of the newest xen source package
line=$($APT source --print-uris xen 2>/dev/null | grep "\.orig\.tar\.xz' " | head -n 1)
[ -n "$line" ] || { echo "get-xenalyze: the mirror lists no xen source package for $SUITE" >&2; exit 1; }
url=$(echo "$line" | cut -d"'" -f2)
file=$(echo "$line" | cut -d' ' -f2)
sum=$(echo "$line" | sed -n 's/.*SHA256:\([0-9a-f]*\).*/\1/p')
echo "get-xenalyze: $file"
curl -fsS -o "$T/$file" "$url" || { echo "get-xenalyze: cannot download $url" >&2; exit 1; }
echo "$sum  $T/$file" | sha256sum -c --quiet - || { echo "get-xenalyze: $file: checksum differs" >&2; exit 1; }

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
