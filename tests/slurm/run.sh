#!/bin/sh
# The Slurm test: a sweep submitted with `vmxsim sweep --slurm --submit` to a real one-node
# cluster (a 4-task job array and a merge job that depends on it) gives the same runs and
# numbers as the same sweep run here with -j; a task resubmitted alone runs again and
# merging again changes nothing.  The plan's name and an --sbatch-option hold a space, a
# quote, a backslash, a '#' and a $(...): sbatch reads the quoted #SBATCH lines back as
# they were given, and no task runs what they hold.
#
#   tests/slurm/run.sh PATH/TO/vmxsim       (`make slurm`; CI runs it)
#
# As root it installs Debian's slurmctld, slurmd, slurm-client and munge when missing
# (scripts/setup.sh slurm), starts a private cluster in a scratch directory
# (tests/slurm/up.sh) and stops it at the end (tests/slurm/down.sh), whatever happened.
# Not as root, it skips.  Ends with "slurm: N passed, M failed, K skipped".
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
VMXSIM=${1:-$root/build/vmxsim}
case $VMXSIM in /*) ;; *) VMXSIM=$PWD/$VMXSIM ;; esac
TIMEOUT=${SLURM_TEST_TIMEOUT:-120}
PASSED=0 FAILED=0

pass() { PASSED=$((PASSED + 1)); [ -n "${VERBOSE:-}" ] && echo "  ok    $1"; return 0; }
fail() {
  FAILED=$((FAILED + 1))
  echo "  FAIL  $1"
  shift
  for l in "$@"; do printf '          %s\n' "$l" | head -20; done
  return 0
}
check_eq() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "expected: $2" "actual:   $3"; fi; }
finish() {
  echo "slurm: $PASSED passed, $FAILED failed, ${1:-0} skipped"
  [ "$FAILED" = 0 ]
  exit
}
skip_all() {
  echo "  skip  slurm ($1)"
  finish 1
}

[ "$(id -u)" = 0 ] || skip_all "needs root: installs slurm and munge, starts daemons"
[ -x "$VMXSIM" ] || { fail "vmxsim" "no program at $VMXSIM (make first)"; finish; }
if ! "$root/scripts/setup.sh" slurm >/dev/null 2>"${TMPDIR:-/tmp}/vmxsim-slurm-setup.$$"; then
  fail "installing slurm and munge" "$(tail -5 "${TMPDIR:-/tmp}/vmxsim-slurm-setup.$$")"
  rm -f "${TMPDIR:-/tmp}/vmxsim-slurm-setup.$$"
  finish
fi
rm -f "${TMPDIR:-/tmp}/vmxsim-slurm-setup.$$"

DIR=$(mktemp -d "${TMPDIR:-/tmp}/vmxsim-slurm.XXXXXX")
trap 'sh "$here/down.sh" "$DIR"; [ -n "${KEEP:-}" ] || rm -rf "$DIR"' EXIT
sh "$here/up.sh" "$DIR" > "$DIR/up.out" 2>&1
case $? in
  0) pass "a one-node cluster is up" ;;
  77) skip_all "$(tail -1 "$DIR/up.out")" ;;
  *) fail "a one-node cluster is up" "$(cat "$DIR/up.out")"; finish ;;
esac
export SLURM_CONF="$DIR/slurm.conf"

# ---- jobs, followed without accounting: finished jobs stay listed by scontrol
field() { scontrol -o show job "$1" 2>/dev/null | head -n 1 | tr ' ' '\n' | sed -n "s/^$2=//p"; }
# squeue_field ID FORMAT: a job's field that may hold spaces (scontrol -o splits at them)
squeue_field() { squeue -t all -h -j "$1" -o "$2" 2>/dev/null | head -n 1; }
# states ID: "COMPLETED x4": the states of the job's records (one per array task), counted
states() {
  scontrol -o show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | sort | uniq -c |
    awk '{ printf "%s%s x%s", sep, $2, $1; sep = ", " }'
}
finished() {
  for s in $(scontrol -o show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'); do
    case $s in PENDING|RUNNING|CONFIGURING|COMPLETING|REQUEUED|RESIZING|SUSPENDED) return 1 ;; esac
  done
}
wait_job() {
  deadline=$(($(date +%s) + TIMEOUT))
  until finished "$1"; do
    [ "$(date +%s)" -lt "$deadline" ] || { fail "job $1 finishes within ${TIMEOUT}s" "$(states "$1")"; return 1; }
    sleep 0.3
  done
}

# Every number of every run, by run key: what the two databases must agree on.
DUMP="SELECT r.run_key, t.hash, r.policy, r.cpu, r.events, r.total_exits, r.marks, r.guest_cycles, r.vmm_cycles,
  r.elapsed_cycles, (SELECT group_concat(e.name || ':' || e.count || ':' || e.cycles || ':' || e.p5 || ':' || e.p95, ',')
  FROM exits e WHERE e.run_id = r.id), (SELECT group_concat(c.name || '=' || c.value, ',') FROM counters c
  WHERE c.run_id = r.id) FROM runs r JOIN traces t ON t.id = r.trace_id ORDER BY r.run_key"
q() { sqlite3 "$1" "$2"; }

work=$DIR/work
mkdir -p "$work"
cd "$work" || finish
"$VMXSIM" trace asm "$root/traces/examples/basic.txt" -o basic.bin
cat > plan.json <<'EOF'
{
  "name": "slurm test's $(touch PWNED) \\ #x",
  "traces": [{"generator": "lat_ctx", "params": {"procs": [2, 4, 8], "iters": 30}}, "basic.bin"],
  "policies": ["nocache", "shadowcache", {"policy": "cr3cache", "knobs": {"cr3_target_count": [1, 4]}}, "ept"],
  "cpus": ["core2-2007", "nehalem-2009"],
  "exclude": [{"policy": "ept", "cpu": "core2-2007"}]
}
EOF
RUNS=36   # 4 traces x 5 policies x 2 CPUs, less EPT on the Core 2 (no EPT there)
NAME='slurm test'\''s $(touch PWNED) \ #x'
COMMENT='a b'\''c $(touch PWNED) #y'
t0=$(date +%s)

# ---- the sweep as a job array plus a merge job
out=$("$VMXSIM" sweep plan.json --slurm --submit --shards 4 --dir "$work/shared" --partition debug \
      --time 00:05:00 --cpus-per-task 1 --sbatch-option "--comment=$COMMENT" --format json 2>&1)
array=$(printf '%s\n' "$out" | sed -n 's/.*"array_job": *"\([0-9]*\)".*/\1/p')
merge=$(printf '%s\n' "$out" | sed -n 's/.*"merge_job": *"\([0-9]*\)".*/\1/p')
if [ -z "$array" ] || [ -z "$merge" ]; then fail "--slurm --submit submits two jobs" "$out"; finish; fi
pass "--slurm --submit submits two jobs"
check_eq "the merge job depends on the array" "afterok:${array}_*(unfulfilled)" "$(field "$merge" Dependency)"
check_eq "--partition reaches the array" "debug" "$(field "$array" Partition)"
check_eq "--time reaches the array" "00:05:00" "$(field "$array" TimeLimit)"
check_eq "the array's name is the plan's, as it was written" "vmxsim-$NAME" "$(squeue_field "$array" %j)"
check_eq "the merge job's name too" "vmxsim-$NAME-merge" "$(squeue_field "$merge" %j)"
check_eq "--sbatch-option reaches the jobs as one word" "$COMMENT|$COMMENT" \
  "$(squeue_field "$array" %k)|$(squeue_field "$merge" %k)"
wait_job "$merge"
check_eq "4 array tasks completed" "COMPLETED x4" "$(states "$array")"
check_eq "the merge job completed" "COMPLETED" "$(field "$merge" JobState)"
check_eq "no task ran what the name or the options hold" "" "$(find "$DIR" -name 'PWNED*')"
merged=$work/shared/merged.db
check_eq "every shard database uses a rollback journal" "delete delete delete delete" \
  "$(for i in 0 1 2 3; do q "shared/shard-$i.db" 'PRAGMA journal_mode'; done | paste -sd' ')"
check_eq "the merged database: every run once" "$RUNS|$RUNS" "$(q "$merged" 'SELECT count(*), count(DISTINCT run_key) FROM runs')"
check_eq "the merged database: integrity" "ok" "$(q "$merged" 'PRAGMA integrity_check')"
check_eq "the merged database: 4 finished parts" "4|$RUNS" \
  "$(q "$merged" 'SELECT count(*), sum(done) FROM sweeps WHERE nshards = 4 AND finished_at IS NOT NULL AND failed = 0')"

# ---- the same sweep here, with -j: the same runs, the same numbers
"$VMXSIM" sweep plan.json -j 2 --db local.db --cache local-cache -q > local.out 2>&1 ||
  fail "the local sweep succeeds" "$(cat local.out)"
check_eq "the cluster's runs equal the local ones, number for number" "$(q local.db "$DUMP")" "$(q "$merged" "$DUMP")"

# ---- a task resubmitted alone, then the merge again: nothing changes
before=$(q "$merged" "$DUMP")
mv shared/shard-2.db shard-2.first.db
again=$(sbatch --parsable --array=2 shared/sweep.sbatch 2>&1)
again=${again%%;*}
merge2=$(sbatch --parsable --dependency=afterok:"$again" --kill-on-invalid-dep=yes shared/merge.sbatch 2>&1)
merge2=${merge2%%;*}
wait_job "$merge2"
check_eq "a task resubmitted alone completes" "COMPLETED x1" "$(states "$again")"
check_eq "it makes its shard again, the same" "$(q shard-2.first.db "$DUMP")" "$(q shared/shard-2.db "$DUMP")"
check_eq "the merge job after it completes" "COMPLETED" "$(field "$merge2" JobState)"
check_eq "merging again changes nothing" "$before" "$(q "$merged" "$DUMP")"
if grep -q "0 runs added from 4 files" shared/logs/merge.out; then pass "the second merge added nothing"
else fail "the second merge added nothing" "$(cat shared/logs/merge.out)"; fi

echo "  slurm test: $(($(date +%s) - t0)) s from submission to the last check"
finish
