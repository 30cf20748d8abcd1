#!/bin/sh
# Writes host.xentrace, a synthetic recording of a Xen host (two guest domains of four vCPUs,
# a PVH dom0 of two, the idle domain, on four pCPUs; the vCPUs migrate; two lost-record
# markers), and xenalyze-summary.txt, xenalyze's --summary of it: the fixture of
# tests/cli/t_xen_domains.sh.
#
#   tests/data/xentrace-host/make-fixture.sh [GEN_XENTRACE [XENALYZE]]
#
# GEN_XENTRACE defaults to build/gen-xentrace ('make build/gen-xentrace'), XENALYZE to
# build/xenalyze ('make xenalyze' builds it from Debian's source package of Xen).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
gen=${1:-$root/build/gen-xentrace}
xenalyze=${2:-$root/build/xenalyze}
for tool in "$gen" "$xenalyze"; do
  [ -x "$tool" ] || { echo "make-fixture: $tool is not there (make build/gen-xentrace; make xenalyze)" >&2; exit 1; }
done
# the arguments t_xen_domains.sh checks the committed file against
"$gen" -d 2 -v 4 -0 2 -c 4 -n 800 -l 2 -w 2048 -s 1 -o "$here/host.xentrace"
"$xenalyze" --summary "$here/host.xentrace" > "$here/xenalyze-summary.txt" 2> /dev/null
