#!/bin/sh
# The first-day test: bootstraps a minimal Debian 12 (bookworm) root with debootstrap, copies
# this tree into it and runs the README's two commands there (chroot), as a new user would on
# a fresh machine: `make demo`, which installs the Debian packages it needs, then `make check`.
# Prints each step's time and exits 0 when both commands succeed.  Run it by hand, as root;
# it is not part of `make check` (it downloads about 100 MB of packages).
#
# usage: tests/fresh-debian.sh [--keep] [--mirror URL] [DIR]
#   DIR            where the root goes (default: a new directory under /var/tmp; removed at
#                  the end unless --keep)
#   --mirror URL   the Debian mirror (default: the first deb.debian.org-style URI of this
#                  machine's /etc/apt/sources.list*, else http://deb.debian.org/debian)
#   --keep         keep the root afterwards (chroot DIR to look around)
# needs: root, debootstrap (apt-get install debootstrap), the mirror reachable.
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
keep=0 mirror="" root=""
while [ $# -gt 0 ]; do
  case $1 in
    --keep) keep=1 ;;
    --mirror) mirror=${2:?--mirror needs a URL}; shift ;;
    -h|--help) sed -n '2,15s/^# \{0,1\}//p' "$0"; exit 0 ;;
    -*) echo "fresh-debian: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) root=$1 ;;
  esac
  shift
done

[ "$(id -u)" = 0 ] || { echo "fresh-debian: needs root (debootstrap and chroot)" >&2; exit 2; }
command -v debootstrap >/dev/null 2>&1 ||
  { echo "fresh-debian: debootstrap not found (apt-get install debootstrap)" >&2; exit 2; }

# The mirror this machine's apt uses: a Debian archive URI (not the security one).
find_mirror() {
  cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
    sed -n 's/^deb \(\[[^]]*\] \)\{0,1\}\(https\{0,1\}:[^ ]*\) .*/\2/p; s/^URIs: *\(https\{0,1\}:[^ ]*\).*/\1/p' |
    grep -v security | head -1
}
[ -n "$mirror" ] || mirror=$(find_mirror)
[ -n "$mirror" ] || mirror=http://deb.debian.org/debian

made_root=0
if [ -z "$root" ]; then root=$(mktemp -d /var/tmp/vmxsim-debian.XXXXXX); made_root=1; fi
mounted=""
cleanup() {
  for m in $mounted; do umount -l "$root$m" 2>/dev/null || true; done
  if [ "$keep" = 0 ] && [ "$made_root" = 1 ]; then rm -rf "$root"; fi
}
trap cleanup EXIT INT TERM

now() { date +%s; }
step() { echo "== $*"; }
t0=$(now)

step "debootstrap bookworm (minbase, with make) from $mirror into $root"
debootstrap --variant=minbase --include=make bookworm "$root" "$mirror" > "$root.debootstrap.log" 2>&1 ||
  { tail -20 "$root.debootstrap.log" >&2; rm -f "$root.debootstrap.log"; exit 1; }
rm -f "$root.debootstrap.log"
t1=$(now)
echo "   $((t1 - t0)) s"

step "copy the tree (its files as they are now, without build directories) to /src"
mkdir -p "$root/src"
(cd "$here" && tar --exclude='./build' --exclude='./build-*' --exclude='./vmxsim' --exclude='./.git' \
   --exclude='*.db' -cf - .) | tar -xf - -C "$root/src"

# /proc, /sys and /dev for the compiler, the tests and the REPL's pseudo-terminal test
for m in /proc /sys /dev /dev/pts; do
  mkdir -p "$root$m"
  mount --bind "$m" "$root$m"
  mounted="$m $mounted"
done
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true

run_in_root() { chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
                  /bin/sh -c "cd /src && $1"; }

rc=0
step "make demo (installs what it needs, builds, replays a trace under several policies)"
t2=$(now)
run_in_root "make demo" || rc=$?
t3=$(now)
echo "   make demo: exit $rc, $((t3 - t2)) s"
if [ "$rc" = 0 ]; then
  step "make check"
  run_in_root "make check" || rc=$?
  t4=$(now)
  echo "   make check: exit $rc, $((t4 - t3)) s"
fi
pkgs=$(chroot "$root" dpkg-query -W -f '${Package}\n' | wc -l)
echo "== fresh Debian 12: $( [ "$rc" = 0 ] && echo passed || echo FAILED ) in $(( $(now) - t0 )) s" \
     "(debootstrap $((t1 - t0)) s; $pkgs packages in the root)"
[ "$keep" = 1 ] && echo "   the root stays in $root"
exit "$rc"
