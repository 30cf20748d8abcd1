# Helpers for CLI tests: each check prints "ok"/"FAIL" with actual beside expected.
# Sourced by tests/cli/run.sh; every test file runs in its own scratch directory ($T).
# A check that cannot run here (a tool missing) calls `skip REASON` instead of pass or fail,
# so that it is counted and reported as skipped; before `return 0` it skips the rest of a file.

check_eq() { # name expected actual
  if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "expected: $2" "actual:   $3"; fi
}

# run CMD...: runs it, capturing $out, $err and $rc
run() {
  "$@" >"$T/.out" 2>"$T/.err"
  rc=$?
  out=$(cat "$T/.out")
  err=$(cat "$T/.err")
  return 0
}

check_rc() { # name expected-rc   (uses $rc from the last run)
  if [ "$rc" = "$2" ]; then pass "$1"; else fail "$1" "expected exit code: $2" "actual exit code:   $rc" "stderr: $err"; fi
}

check_contains() { # name haystack needle
  case "$2" in
    *"$3"*) pass "$1" ;;
    *) fail "$1" "expected to contain: $3" "actual: $2" ;;
  esac
}

check_not_contains() { # name haystack needle
  case "$2" in
    *"$3"*) fail "$1" "expected not to contain: $3" "actual: $2" ;;
    *) pass "$1" ;;
  esac
}

skip() { # reason
  SKIPPED=$((SKIPPED + 1))
  echo "  skip  $CASE ($1)"
  return 0
}

pass() { PASSED=$((PASSED + 1)); [ -n "$VERBOSE" ] && echo "  ok    $1"; return 0; }
fail() {
  FAILED=$((FAILED + 1))
  echo "  FAIL  $CASE: $1"
  shift
  for l in "$@"; do printf '          %s\n' "$l" | head -20; done
  return 0
}

child_of() { # PID: a child process of PID, from /proc (no procps on a minimal system)
  _parent=$1
  # The kernel's list of the children, where it keeps one: scanning every process
  # below forks a sed per process, which on a busy machine took longer than a test's
  # child lived.
  if [ -r "/proc/$_parent/task/$_parent/children" ]; then
    _child=""
    read -r _child _ < "/proc/$_parent/task/$_parent/children" || true
    [ -n "$_child" ] || return 1
    echo "$_child"
    return 0
  fi
  for _stat in /proc/[0-9]*/stat; do
    _fields=$(sed 's/^.*) //' "$_stat" 2>/dev/null) || continue
    # shellcheck disable=SC2086  # the fields of the stat line: state, ppid, ...
    set -- $_fields
    if [ "${2:-}" = "$_parent" ]; then
      _child=${_stat#/proc/}; echo "${_child%/stat}"; return 0
    fi
  done
  return 1
}

# A recording as `trace-cmd report` prints it, for one vCPU: an exit and its entry per
# line of EXITS ("REASON INFO1"), 10 us apart.  kvm_text_of_exits EXITS OUT
kvm_text_of_exits() {
  awk 'BEGIN { print "cpus=1" }
    { t = 1000 + NR * 0.00001
      printf "qemu-system-x86-1 [001] d....  %.6f: kvm_exit: vcpu 0 reason %s rip 0xffffffff81000000 info1 %s info2 0x0 intr_info 0x00000000 error_code 0x00000000\n", t, $1, $2
      printf "qemu-system-x86-1 [001] d....  %.6f: kvm_entry: vcpu 0, rip 0xffffffff81000000 intr_info 0x00000000 error_code 0x00000000\n", t + 0.000002 }' \
    "$1" > "$2"
}
# The exits of REASON in an EXITS file, counted independently of vmxsim.  reason_count REASON [EXITS]
reason_count() { awk -v r="$1" '$1 == r { n++ } END { print n + 0 }' "${2:-exits.txt}"; }
# The measured-beside-simulated table of a replay's text output.  replay_table TEXT
replay_table() { printf '%s\n' "$1" | awk '/^measured \(the recording\)/ { on = 1; next } /^ by address space/ { on = 0 } on'; }
