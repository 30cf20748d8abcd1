# The first day: building needs only the program's libraries, nothing is installed as a side
# effect, and a test that cannot run here is counted and reported as skipped, never as passed.

mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -C "$ROOT" "$@"; }

# ---- building needs the program's libraries, and only them
items() { sed -n '/^items()/,/^EOF/p' "$ROOT/scripts/setup.sh" | grep "^$1|" | cut -d'|' -f2 | tr '\n' ' '; }
build=$(items build)
for lib in libsqlite3-dev libcjson-dev libreadline-dev zlib1g-dev liblzma-dev libzstd-dev; do
  check_contains "building needs $lib" "$build" "$lib"
done
for extra in libcmocka-dev gnuplot-nox sqlite3 python3; do
  check_not_contains "building does not need $extra" " $build" " $extra "
done
check_contains "make check needs cmocka" "$(items test)" "libcmocka-dev"
check_contains "plots need gnuplot" "$(items plot)" "gnuplot-nox"

# without gnuplot, sqlite3 and python3 on the PATH the build check passes, the plot check fails
# hide NAME...: a directory ($PWD/path) of links to every program on $PATH but these
hide() {
  mkdir -p path
  for d in $(printf '%s' "$PATH" | tr ':' ' '); do
    for p in "$d"/*; do
      n=${p##*/}
      case " $* " in *" $n "*|*" ${n%%[0-9.]*} "*) continue ;; esac
      [ -x "$p" ] && [ ! -e "path/$n" ] && ln -s "$p" "path/$n"
    done
  done
  return 0
}
hide gnuplot sqlite3 python3
run env PATH="$PWD/path" "$ROOT/scripts/setup.sh" --check build
check_rc "setup.sh --check build without gnuplot, sqlite3 or python3" 0
run env PATH="$PWD/path" "$ROOT/scripts/setup.sh" --check plot
check_rc "setup.sh --check plot without them fails" 1
check_contains "... and names what is missing" "$err" "vmxsim: plotting needs these, not found: the sqlite3 tool, gnuplot"
check_contains "... with the apt-get line" "$err" "apt-get install -y sqlite3 gnuplot-nox"

# what make runs: checks only; installing happens in `make deps`, `make demo` (the build
# group) and `make check` (the test group) alone
run mk -n -B BUILD="$PWD/b" "$PWD/b/.build-ok"
check_contains "make checks the build group only" "$out" "scripts/setup.sh --check build"
check_not_contains "make does not check the test tools" "$out" "--check test"
run mk -n -B BUILD="$PWD/b" check
check_contains "make check installs the test group" "$out" "scripts/setup.sh test"
check_not_contains "make check installs nothing else" "$(printf '%s\n' "$out" | grep 'setup.sh [a-z]' | grep -v 'setup.sh test$')" "setup.sh"
run mk -n -B BUILD="$PWD/b" demo
check_contains "make demo installs the build group" "$out" "scripts/setup.sh build"
check_not_contains "make demo installs no more (the tests' packages are make check's)" "$out" "setup.sh build test"
for goal in all install plots reproduce; do
  run mk -n BUILD="$PWD/b" "$goal"
  case $out in
    *"apt-get"*|*"setup.sh build"*|*"setup.sh "[a-z]*" "[a-z]*|*"setup.sh'"*) fail "make $goal installs nothing" "$out" ;;
    *) pass "make $goal installs nothing" ;;
  esac
done
run mk -n BUILD="$PWD/b" deps
check_contains "make deps is the one that installs" "$out" "scripts/setup.sh"
check_not_contains "make deps installs (no --check)" "$out" "--check"

# ---- a skipped check is reported and counted as skipped
run env VMXSIM="$VMXSIM" "$ROOT/tests/cli/run.sh" "$ROOT/tests/harness/cli/t_pass.sh" "$ROOT/tests/harness/cli/t_skipall.sh"
check_contains "a file that only skips says skip" "$out" "  skip  t_skipall (tool missing)"
check_not_contains "... and not ok" "$out" "  ok    t_skipall"
check_eq "the total counts it as skipped" "cli: 2 passed, 0 failed, 1 skipped" "$(printf '%s\n' "$out" | tail -1)"
# the REPL terminal test without python3: skipped with its reason, not passed
run env PATH="$PWD/path" VMXSIM="$VMXSIM" "$ROOT/tests/cli/run.sh" "$ROOT/tests/cli/t_repl_pty.sh"
check_contains "t_repl_pty without python3 is skipped with its reason" "$out" "  skip  t_repl_pty (python3 not found"
check_eq "... and counted as skipped" "cli: 0 passed, 0 failed, 1 skipped" "$(printf '%s\n' "$out" | tail -1)"
run "$ROOT/tests/run-unit.sh" "$ROOT/tests/harness/unit/ok" "$ROOT/tests/harness/unit/skip"
check_contains "a skipped unit test is named" "$out" "  skip  skip (1 skipped: needs_feature)"
check_eq "unit: the total counts it as skipped" "unit: 3 passed, 0 failed, 1 skipped" "$(printf '%s\n' "$out" | tail -1)"

# ---- the demo (the README's first command, after installing): every policy replays
run "$ROOT/scripts/demo.sh" "$VMXSIM"
check_rc "scripts/demo.sh" 0
check_contains "the demo compares every policy, ept included" "$out" "  E: run 5, policy ept"
check_not_contains "no replay failed" "$err" "vmxsim:"

# ---- scripts/get-xenalyze.sh asks the mirrors the system's apt uses, and names none itself
mkdir -p stub
cat > stub/apt-cache <<'STUB'
#!/bin/sh
cat <<'POLICY'
Package files:
 100 /var/lib/dpkg/status
 500 http://mirror.example/debian-security bookworm-security/main amd64 Packages
 500 http://mirror.example/debian bookworm/main amd64 Packages
 500 http://mirror.example/debian bookworm/contrib amd64 Packages
POLICY
STUB
cat > stub/apt-get <<'STUB'
#!/bin/sh
# records the source list it was given, then fails like an unreachable mirror
for a in "$@"; do case $a in Dir::Etc::SourceList=*) cat "${a#*=}" > "$STUB_SEEN" ;; esac; done
echo "E: mirror.example unreachable" >&2
exit 100
STUB
chmod +x stub/apt-cache stub/apt-get
run env PATH="$PWD/stub:$PATH" STUB_SEEN="$PWD/seen.list" "$ROOT/scripts/get-xenalyze.sh" "$PWD/xa"
check_rc "get-xenalyze.sh: an unreachable mirror fails" 1
check_contains "get-xenalyze.sh: says apt's update failed" "$err" "apt-get update of the source lists failed"
if grep -q '^VERSION_CODENAME=bookworm$' /etc/os-release 2>/dev/null; then
  check_eq "get-xenalyze.sh: the source list is the system's mirror, the release's suite" \
    "deb-src http://mirror.example/debian bookworm main" "$(cat seen.list 2>&1)"
else
  check_contains "get-xenalyze.sh: the source list is the system's mirror" "$(cat seen.list 2>&1)" \
    "deb-src http://mirror.example/debian bookworm main"
fi
check_eq "get-xenalyze.sh names no mirror of its own" "" "$(grep -n 'https\?://' "$ROOT/scripts/get-xenalyze.sh")"
