#!/bin/sh
# Checks that the Debian packages vmxsim builds and tests with are present.
# As root it installs the missing ones; otherwise it prints the exact
# apt-get line to run and fails.
set -e
PKGS="gcc make pkg-config libsqlite3-dev libcjson-dev libreadline-dev libcmocka-dev sqlite3 gnuplot-nox fonts-dejavu-core time"

missing=""
for p in $PKGS; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done
[ -z "$missing" ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
  echo "vmxsim setup: missing packages:$missing (this script knows only Debian's apt-get)" >&2
  exit 1
fi
if [ "$(id -u)" != 0 ]; then
  echo "vmxsim setup: missing packages. Run as root:" >&2
  echo "  apt-get install -y$missing" >&2
  exit 1
fi
echo "vmxsim setup: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get install -y --no-install-recommends $missing >&2 || {
  apt-get update >&2 && apt-get install -y --no-install-recommends $missing >&2
}
