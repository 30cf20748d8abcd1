#!/bin/sh
# Tests of the test harness and the build: the CLI and unit runners count passes, failures
# and skips right (on the fixtures in tests/harness/cli and tests/harness/unit), and the
# Makefile keeps its promises (`make help` lists every target, user flags add to the
# project's, a wrong SANITIZER is refused, `make clean` removes every build directory).
# Ends with "harness: N passed, M failed". Usage: tests/harness/run.sh (from anywhere).
here=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$here/../.." && pwd)
PASSED=0
FAILED=0
SKIPPED=0
. "$ROOT/tests/cli/lib.sh"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# a make of its own: not the -j, the variables or the jobserver of a `make check` above
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -C "$ROOT" "$@"; }

# ---- tests/cli/run.sh on fixtures that pass, fail, skip, assert nothing and abort
CASE=cli-runner
run env VMXSIM=/bin/true "$ROOT/tests/cli/run.sh" "$here"/cli/t_*.sh
check_rc "a failing file makes the runner fail" 1
check_eq "every file reported, skips as skips" "  FAIL  t_abort: aborted (the file exited before its end)
  FAIL  t_fail: equal
          expected: 1
          actual:   2
  FAIL  t_fail
  FAIL  t_nothing: ran no check
  skip  t_partskip (the other half)
  ok    t_partskip
  ok    t_pass
  skip  t_skipall (tool missing)
cli: 4 passed, 3 failed, 2 skipped" "$out"
run env VMXSIM=/bin/true "$ROOT/tests/cli/run.sh" "$here/cli/t_pass.sh" "$here/cli/t_skipall.sh"
check_rc "passes and skips alone succeed" 0
check_eq "their summary" "cli: 2 passed, 0 failed, 1 skipped" "$(printf '%s\n' "$out" | tail -1)"

# ---- tests/run-unit.sh on programs that print what cmocka prints
CASE=unit-runner
u=$here/unit
run "$ROOT/tests/run-unit.sh" "$u/ok" "$u/skip" "$u/fail" "$u/crash"
check_rc "a failing program makes the runner fail" 1
check_contains "a passing program" "$out" "  ok    ok (2 tests)"
check_contains "a skipped test is named" "$out" "  skip  skip (1 skipped: needs_feature)"
check_contains "a failing program" "$out" "  FAIL  fail (exit 2)"
check_contains "a crash with no summary" "$out" "  FAIL  crash (exit 139)"
check_eq "the summary: a crash counts as one failure" "unit: 4 passed, 3 failed, 1 skipped" \
  "$(printf '%s\n' "$out" | tail -1)"

# ---- tests/layers/check.sh on a small tree: every way of naming a higher layer's header
CASE=layers
mkdir -p "$T/tree/models/mmu" "$T/tree/sim/replay"
: > "$T/tree/sim/replay/stats.h"
: > "$T/tree/models/mmu/tlb.h"
for inc in '"sim/replay/stats.h"' '"../../sim/replay/stats.h"' '"./../../sim/replay/stats.h"' '<sim/replay/stats.h>'; do
  printf '#include %s\n' "$inc" > "$T/tree/models/mmu/tlb.c"
  run "$ROOT/tests/layers/check.sh" "$T/tree"
  check_rc "models/ including $inc fails" 1
  check_contains "and names it" "$out" "models/mmu/tlb.c:1 includes sim/replay/stats.h"
done
printf '#include "tlb.h"\n#include "./tlb.h"\n#include <stdio.h>\n' > "$T/tree/models/mmu/tlb.c"
run "$ROOT/tests/layers/check.sh" "$T/tree"
check_rc "its own folder and system headers pass" 0
check_eq "counted" "layers: 2 passed, 0 failed (includes between layers, include cycles)" "$out"
printf '#include "vcpu.h"\n' > "$T/tree/models/mmu/tlb.h"
printf '#include "tlb.h"\n' > "$T/tree/models/mmu/vcpu.h"
run "$ROOT/tests/layers/check.sh" "$T/tree"
check_rc "two headers of one folder including each other fail" 1
check_contains "and the circle is named" "$out" "include cycle among: models/mmu/"
check_contains "with both files" "$out" "mmu/vcpu.h"

# ---- the Makefile
CASE=makefile
run mk help
check_rc "make help runs" 0
phony=$(sed -n 's/^\.PHONY: *//p' "$ROOT/Makefile" | tr ' ' '\n' | grep -v '^FORCE$' | sed '/^$/d')
for t in $phony; do
  case $out in
    *"
  $t "*) pass "make help lists $t" ;;
    *) fail "make help lists $t" "expected a line '  $t  ...' in:" "$out" ;;
  esac
done
for o in SANITIZER= WERROR= V= PREFIX= CC= OPT= LTO= CFLAGS=; do
  check_contains "make help lists the option $o" "$out" " $o"
done

run mk SANITIZER=addres help
check_rc "a wrong SANITIZER is an error" 2
check_contains "the error names the valid sanitizers" "$err" \
  "SANITIZER=addres: unknown sanitizer 'addres'; valid: address, undefined, or several comma-separated"

# what `make` would run, with the user's flags, in a scratch build directory
run mk -n BUILD="$T/b" CPPFLAGS=-DUSER_CPP CFLAGS=-O0 LDFLAGS=-L/user/lib LDLIBS=-luser "$T/b/vmxsim"
check_rc "make -n with user flags" 0
cc_line=$(printf '%s\n' "$out" | grep -e ' -c sim/cli/main.c' | head -1)
for f in -I. -std=c11 -Wall -Wextra -DUSER_CPP -O0; do
  check_contains "CFLAGS=-O0 keeps $f" " $cc_line " " $f "
done
after=${cc_line#*-Wmissing-prototypes}
check_contains "the user's CFLAGS come after the project's" "$after" "-O0"
ld_line=$(printf '%s\n' "$out" | grep -e "-o $T/b/vmxsim " | head -1)
check_contains "LDFLAGS added" "$ld_line" "-L/user/lib"
check_contains "LDLIBS added after the project's libraries" "$ld_line" "-lm -luser"
for l in sqlite3 cjson readline z lzma zstd; do   # shared, or from Debian's archive (STATIC_LIBS)
  case " $ld_line " in
    *" -l$l "*|*"/lib$l.a "*) pass "the link keeps lib$l (-l$l or lib$l.a)" ;;
    *) fail "the link keeps lib$l (-l$l or lib$l.a)" "expected -l$l or lib$l.a" "actual: $ld_line" ;;
  esac
done
run mk -n BUILD="$T/b" STATIC_LIBS=0 "$T/b/vmxsim"
ld_line=$(printf '%s
' "$out" | grep -e "-o $T/b/vmxsim " | head -1)
for l in sqlite3 cjson readline z lzma zstd; do
  check_contains "STATIC_LIBS=0: the link has -l$l" "$ld_line" "-l$l"
done
check_not_contains "STATIC_LIBS=0: no archive but the project's" "${ld_line#*libvmxsim.a}" ".a "

# `make clean` in a copy of the Makefile: every build directory and the link, nothing else
mkdir -p "$T/c/build/x" "$T/c/build-address,undefined" "$T/c/build-clang" "$T/c/src"
cp "$ROOT/Makefile" "$T/c/"
ln -s build/vmxsim "$T/c/vmxsim"
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$T/c" clean >/dev/null 2>&1
check_eq "make clean removes build, build-* and ./vmxsim" "Makefile src" "$(ls "$T/c" | tr '\n' ' ' | sed 's/ $//')"

# ---- `make install` into a DESTDIR, and `make uninstall`
# The variables `make check` was given (VMXSIM_MAKE_VARS, its MAKEOVERRIDES) select the same
# build, so that installing builds nothing; run by hand, the default build is installed.
CASE=install
eval "set -- ${VMXSIM_MAKE_VARS:-}"
d=$T/dest
run mk install DESTDIR="$d" PREFIX=/usr "$@"
check_rc "make install DESTDIR=... PREFIX=/usr" 0
share=$d/usr/share/vmxsim
for f in usr/bin/vmxsim usr/share/man/man1/vmxsim.1 usr/share/vmxsim/plot/plot.sh usr/share/vmxsim/plot/bars.gp \
         usr/share/vmxsim/plot/common.gp usr/share/vmxsim/record/record.sh usr/share/vmxsim/doc/FORMAT.md \
         usr/share/vmxsim/doc/schema.md usr/share/vmxsim/doc/experiments.md usr/share/vmxsim/doc/recording.md; do
  [ -f "$d/$f" ] && pass "installed $f" || fail "installed $f" "$(find "$d" -type f | sort)"
done
[ -x "$share/plot/plot.sh" ] && [ -x "$share/record/record.sh" ] && pass "the scripts are executable" ||
  fail "the scripts are executable" "$(ls -l "$share/plot/plot.sh" "$share/record/record.sh")"
# every document the man page names under FILES is installed
for doc in $(sed -n '/^\.I PREFIX\/share\/vmxsim\/doc\//,/^\.SH/p' "$ROOT/docs/vmxsim.1" | sed -n 's/^\.I \([A-Za-z\\-]*\.[a-z]*\)$/\1/p' | sed 's/\\-/-/g'); do
  [ -f "$share/doc/$doc" ] && pass "the man page's $doc is installed" || fail "the man page's $doc is installed" "$(ls "$share/doc")"
done
run "$d/usr/bin/vmxsim" --version
check_rc "the installed program runs" 0
# it finds its chart scripts beside it, not in the source tree
run env -u VMXSIM_DATADIR "$d/usr/bin/vmxsim" reproduce --quick --no-db --only debugreg-2009 --plots "$T/figs"
check_rc "the installed reproduce --plots" 0
check_contains "... draws with the installed bars.gp" "$err" "wrote $T/figs/debugreg-2009.png, .svg and .pdf"
run "$share/plot/plot.sh" --help
check_rc "the installed plot.sh runs" 0
run mk uninstall DESTDIR="$d" PREFIX=/usr "$@"
check_rc "make uninstall" 0
check_eq "make uninstall leaves no file" "" "$(find "$d" -type f)"

echo "harness: $PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
