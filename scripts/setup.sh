#!/bin/sh
# What vmxsim needs, by purpose, and how to get it on Debian.
#
#   scripts/setup.sh [GROUP...]          install what the GROUPs need (Debian, as root, apt-get)
#   scripts/setup.sh --check GROUP...    only look; if something is missing, print the exact
#                                        apt-get line and fail (`make` does this, never installs)
#
# GROUPs:
#   build   C compiler, SQLite, cJSON, GNU Readline, zlib, liblzma, libzstd: all that `make` needs
#   unit    cmocka: the unit tests
#   test    unit, plus the sqlite3 and gnuplot tools the CLI tests use: `make check`
#   plot    sqlite3 and gnuplot tools, fonts: `make plots`, `vmxsim reproduce --plots`
#   bench   GNU time (CPU seconds in `make bench`; optional)
#   clang   clang and llvm-ar: the second compiler CI builds with
#   fuzz    clang with its sanitizer and libFuzzer runtimes: `make fuzz` (tests/fuzz/)
#   measure valgrind, perf, python3 and gcc-multilib (32-bit builds): the measurement
#           recipes of workloads/record/measure (never installed unless asked for)
#   kbuild  Debian's kernel source, flex, bison, bc, perf and xz: the `kbuild` recipe of
#           workloads/record/record.sh (an allnoconfig i386 kernel build; never installed
#           unless asked for)
#   slurm   Slurm's controller, node daemon and commands, and munge: the Slurm test
#           (tests/slurm/run.sh, which starts a private one-node cluster as root)
# Without GROUPs: build test plot bench (what `make deps` installs; `make demo` installs
# build, `make check` test).
#
# The checks work on any system: a library counts as present when pkg-config knows it or,
# failing that, when a tiny program including its header compiles and links with
# $CC $CPPFLAGS $CFLAGS $LDFLAGS; a tool when it is on $PATH. Installing needs Debian's
# dpkg and apt-get; elsewhere this script only checks.
set -e

CC=${CC:-cc}
PKG_CONFIG=${PKG_CONFIG:-pkg-config}

# One item per line: group, Debian package, probe, what it is.
# probe: "lib MODULE HEADERS FLAGS" (HEADERS and FLAGS comma-separated; FLAGS are what the
#        Makefile uses when pkg-config does not know MODULE), "cmd NAME", "cc",
#        or "-" (installed by this script when missing, but never required).
items() {
  cat <<'EOF'
build|gcc|cc|a working C compiler
build|make|cmd make|make
build|pkg-config|-|pkg-config
build|libsqlite3-dev|lib sqlite3 sqlite3.h -lsqlite3|SQLite 3 (sqlite3.h, -lsqlite3)
build|libcjson-dev|lib libcjson cJSON.h -I/usr/include/cjson,-lcjson|cJSON (cJSON.h, -lcjson)
build|libreadline-dev|lib readline stdio.h,readline/readline.h -lreadline|GNU Readline (readline/readline.h, -lreadline)
build|zlib1g-dev|lib zlib zlib.h -lz|zlib (zlib.h, -lz: gzip input)
build|liblzma-dev|lib liblzma lzma.h -llzma|liblzma (lzma.h, -llzma: xz input)
build|libzstd-dev|lib libzstd zstd.h -lzstd|libzstd (zstd.h, -lzstd: zstd input)
build|libtracecmd-dev|-|libtracecmd (optional: trace.dat input; the build says when it is missing)
build|libtraceevent-dev|-|libtraceevent (optional, with libtracecmd)
build|libtracefs-dev|-|libtracefs (optional: libtracecmd's pkg-config file requires it)
unit|libcmocka-dev|lib cmocka stdarg.h,stddef.h,setjmp.h,stdint.h,cmocka.h -lcmocka|cmocka (cmocka.h, -lcmocka)
test|libcmocka-dev|lib cmocka stdarg.h,stddef.h,setjmp.h,stdint.h,cmocka.h -lcmocka|cmocka (cmocka.h, -lcmocka)
test|sqlite3|cmd sqlite3|the sqlite3 tool
test|gnuplot-nox|cmd gnuplot|gnuplot
test|fonts-dejavu-core|-|DejaVu fonts
test|python3|-|python3 (drives the REPL terminal test, which is skipped without it)
test|xz-utils|-|xz (compressed-input tests; skipped without it)
test|zstd|-|zstd (compressed-input tests; skipped without it)
test|trace-cmd|-|trace-cmd (cross-checks the trace.dat import; skipped without it)
test|strace|-|strace (counts a FIFO's opens; skipped without it)
plot|sqlite3|cmd sqlite3|the sqlite3 tool
plot|gnuplot-nox|cmd gnuplot|gnuplot
plot|fonts-dejavu-core|-|DejaVu fonts
bench|time|-|GNU time
clang|clang|cmd clang|clang
clang|llvm|-|llvm-ar (LTO archives for clang)
fuzz|clang|cmd clang|clang
fuzz|libclang-rt-dev|-|clang's libFuzzer and sanitizer runtimes
measure|valgrind|cmd valgrind|valgrind
measure|linux-perf|cmd perf|perf
measure|python3|cmd python3|python3
measure|gcc-multilib|-|gcc-multilib (32-bit builds; the 32-bit measurement is skipped without it)
kbuild|linux-source|-|Debian's kernel source (a tarball under /usr/src)
kbuild|flex|cmd flex|flex (the kernel's Kconfig parser)
kbuild|bison|cmd bison|bison (the kernel's Kconfig parser)
kbuild|bc|cmd bc|bc (the kernel's timeconst.h)
kbuild|linux-perf|cmd perf|perf
kbuild|xz-utils|cmd xz|xz (the kernel source tarball)
slurm|slurmctld|cmd slurmctld|the Slurm controller (slurmctld)
slurm|slurmd|cmd slurmd|the Slurm node daemon (slurmd)
slurm|slurm-client|cmd sbatch|the Slurm commands (sbatch, scontrol, squeue, sinfo)
slurm|munge|cmd munged|munge (Slurm's authentication)
EOF
}

# The compiler's Debian package: clang for clang, gcc for anything else.
compiler_package() {
  case $CC in
    *clang*) echo clang ;;
    *) echo gcc ;;
  esac
}

TMP=""
cleanup() { [ -z "$TMP" ] || rm -rf "$TMP"; }
trap cleanup EXIT

# compiles: does a program including HEADERS (comma-separated) compile and link with FLAGS?
compiles() {
  [ -n "$TMP" ] || TMP=$(mktemp -d)
  printf '%s\n' "$1" | tr ',' '\n' | sed '/^$/d; s/.*/#include <&>/' > "$TMP/probe.c"
  echo 'int main(void) { return 0; }' >> "$TMP/probe.c"
  # shellcheck disable=SC2086  # the flag variables are lists of words
  $CC $CPPFLAGS $CFLAGS $(printf '%s' "$2" | tr ',' ' ') "$TMP/probe.c" -o "$TMP/probe" $LDFLAGS \
    >/dev/null 2>&1
}

# present PROBE...: is the item there? ("-" items always count as present)
present() {
  case $1 in
    -) return 0 ;;
    cc) compiles "" "" ;;
    cmd) command -v "$2" >/dev/null 2>&1 ;;
    lib) "$PKG_CONFIG" --exists "$2" 2>/dev/null || compiles "$3" "$4" ;;
  esac
}

# selected GROUP...: the items of those groups, each line once
selected() {
  items | awk -F'|' -v groups=" $* " 'index(groups, " " $1 " ") && !seen[$2 "|" $3]++'
}

# compiler_works: cached, since every library test needs it
compiler_works() {
  if [ -z "$COMPILER_OK" ]; then
    if present cc; then COMPILER_OK=yes; else COMPILER_OK=no; fi
  fi
  [ "$COMPILER_OK" = yes ]
}
COMPILER_OK=""

do_check() {
  need=""; pkgs=""
  tab=$(selected "$@")
  while IFS='|' read -r group pkg probe what; do
    [ "$pkg" = gcc ] && pkg=$(compiler_package)
    if [ "$probe" = cc ]; then
      compiler_works && continue
      what="a working C compiler ('$CC')"
    elif [ "${probe%% *}" = lib ] && ! compiler_works; then
      continue                          # reported once, as the compiler
    else
      # shellcheck disable=SC2086
      present $probe && continue
    fi
    case " $pkgs " in *" $pkg "*) continue ;; esac
    need="$need${need:+, }$what"; pkgs="$pkgs $pkg"
  done <<EOF
$tab
EOF
  [ -z "$pkgs" ] && return 0
  {
    echo "vmxsim: $(purpose "$@") needs these, not found: $need"
    echo "  On Debian or Ubuntu, as root:  apt-get install -y$pkgs"
    echo "  (\`make deps\` runs that; on other systems install them so that pkg-config or the compiler finds them: docs/building.md)"
  } >&2
  return 1
}

purpose() {
  case " $* " in
    *" build "*) echo "building" ;;
    *" test "*) echo "make check" ;;
    *" unit "*) echo "the unit tests" ;;
    *" plot "*) echo "plotting" ;;
    *) echo "$*" ;;
  esac
}

debian_missing() {
  selected "$@" | while IFS='|' read -r group pkg probe what; do
    [ "$pkg" = gcc ] && pkg=$(compiler_package)
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || echo "$pkg"
  done | awk '!seen[$0]++' | tr '\n' ' '
}

do_install() {
  if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
    do_check "$@"                       # not Debian: say what is missing, install nothing
    return
  fi
  missing=$(debian_missing "$@")
  [ -z "$missing" ] && return 0
  if [ "$(id -u)" != 0 ]; then
    echo "vmxsim setup: missing Debian packages. Run as root:" >&2
    echo "  apt-get install -y ${missing% }" >&2
    return 1
  fi
  # One line, not apt's hundreds: its output goes to a log, shown only when it fails.
  echo "vmxsim setup: apt-get install ${missing% }" >&2
  export DEBIAN_FRONTEND=noninteractive
  log=$(mktemp "${TMPDIR:-/tmp}/vmxsim-setup.XXXXXX")
  # shellcheck disable=SC2086
  if apt-get install -y -q --no-install-recommends $missing > "$log" 2>&1 ||
     { apt-get update -q >> "$log" 2>&1 && apt-get install -y -q --no-install-recommends $missing >> "$log" 2>&1; }; then
    rm -f "$log"
    return 0
  fi
  echo "vmxsim setup: apt-get failed; the end of its output (all of it in $log):" >&2
  tail -n 20 "$log" >&2
  return 1
}

mode=do_install
if [ "$1" = --check ]; then mode=do_check; shift; fi
[ $# -gt 0 ] || set -- build test plot bench
for g in "$@"; do
  case $g in
    build|unit|test|plot|bench|clang|fuzz|measure|kbuild|slurm) ;;
    *) echo "vmxsim setup: unknown group '$g' (build, unit, test, plot, bench, clang, fuzz, measure, kbuild, slurm)" >&2; exit 2 ;;
  esac
done
$mode "$@"
