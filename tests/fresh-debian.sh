#!/bin/sh
# The first-day test: bootstraps a minimal Debian 12 (bookworm) root with debootstrap (no
# make, no git: what `debootstrap --variant=minbase` gives) and starts there (chroot) as the
# README says people do: `apt-get install make git` as root, then a clone of this repository
# (its committed HEAD, through a git bundle) and the README's two commands, `make demo` (as
# root it installs the Debian packages it needs) and `make check`: first as root in a clone
# under /root (mode 0700, as Debian makes it), then as an ordinary user in a clone in that
# user's home (0700 too), once root has installed the packages.  Prints each step's time and
# exits 0 when every command succeeds.  Run it by hand, as root; it is not part of `make
# check` (it downloads a few hundred MB of packages).
#
# usage: tests/fresh-debian.sh [--keep] [--mirror URL] [DIR]
#   DIR            where the root goes (default: a new directory under /var/tmp; removed at
#                  the end unless --keep)
#   --mirror URL   the Debian mirror (default: the first deb.debian.org-style URI of this
#                  machine's /etc/apt/sources.list*, else http://deb.debian.org/debian)
#   --keep         keep the root afterwards (chroot DIR to look around)
# needs: root, debootstrap (apt-get install debootstrap), git, the mirror reachable.
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
keep=0 mirror="" root=""
while [ $# -gt 0 ]; do
  case $1 in
    --keep) keep=1 ;;
    --mirror) mirror=${2:?--mirror needs a URL}; shift ;;
    -h|--help) sed -n '2,19s/^# \{0,1\}//p' "$0"; exit 0 ;;
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
chmod 755 "$root"   # it is the new system's /: mktemp's 0700 would shut the ordinary user out
mounted=""
cleanup() {
  for m in $mounted; do umount -l "$root$m" 2>/dev/null || true; done
  if [ "$keep" = 0 ] && [ "$made_root" = 1 ]; then rm -rf "$root"; fi
}
trap cleanup EXIT INT TERM

now() { date +%s; }
step() { echo "== $*"; }
t0=$(now)

step "debootstrap bookworm (minbase: no make, no git) from $mirror into $root"
debootstrap --variant=minbase bookworm "$root" "$mirror" > "$root.debootstrap.log" 2>&1 ||
  { tail -20 "$root.debootstrap.log" >&2; rm -f "$root.debootstrap.log"; exit 1; }
rm -f "$root.debootstrap.log"
t1=$(now)
echo "   $((t1 - t0)) s"

step "the repository's committed HEAD as a bundle: /tmp/vmxsim.bundle"
git -C "$here" bundle create "$root/tmp/vmxsim.bundle" HEAD > /dev/null 2>&1 ||
  { echo "fresh-debian: cannot bundle $here (a git clone?)" >&2; exit 1; }
chmod 644 "$root/tmp/vmxsim.bundle"

# /proc, /sys and /dev for the compiler, the tests and the REPL's pseudo-terminal test
for m in /proc /sys /dev /dev/pts; do
  mkdir -p "$root$m"
  mount --bind "$m" "$root$m"
  mounted="$m $mounted"
done
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true

# as_root CMD / as_user CMD: a login-like shell in the root, in that account's home
as_root() { chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
              /bin/sh -c "cd && $1"; }
as_user() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
              runuser -u newuser -- /bin/sh -c "export HOME=/home/newuser USER=newuser; cd && $1"; }

# timed LABEL WHO CMD: runs CMD as WHO (as_root or as_user), prints its time; the first failure stops
rc=0
timed() {
  [ "$rc" = 0 ] || return 0
  step "$1"
  _t=$(now)
  "$2" "$3" || rc=$?
  echo "   $1: exit $rc, $(( $(now) - _t )) s"
}

README_FIRST="apt-get update -q > /dev/null && apt-get install -y -q make git > /dev/null"
timed "as root: apt-get install make git (README: a minimal system has neither)" as_root "$README_FIRST"
timed "as root: git clone into /root/vmxsim" as_root "chmod 700 /root && git clone -q /tmp/vmxsim.bundle vmxsim"
timed "as root in /root/vmxsim: make demo" as_root "cd vmxsim && make demo"
timed "as root in /root/vmxsim: make check" as_root "cd vmxsim && make check"
timed "an ordinary user, newuser, with a 0700 home" as_root "useradd -m -s /bin/sh newuser && chmod 700 /home/newuser"
timed "as newuser: git clone into ~/vmxsim" as_user "git clone -q /tmp/vmxsim.bundle vmxsim"
timed "as newuser in ~/vmxsim: make demo" as_user "cd vmxsim && make demo"
timed "as newuser in ~/vmxsim: make check" as_user "cd vmxsim && make check"

pkgs=$(chroot "$root" dpkg-query -W -f '${Package}\n' | wc -l)
echo "== fresh Debian 12: $( [ "$rc" = 0 ] && echo passed || echo FAILED ) in $(( $(now) - t0 )) s" \
     "(debootstrap $((t1 - t0)) s; $pkgs packages in the root)"
[ "$keep" = 1 ] && echo "   the root stays in $root"
exit "$rc"
