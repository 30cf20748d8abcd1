# CLI tests for vmxsim sweep and vmxsim merge: plans, the trace cache, resuming after
# kill -9, shards and merging (lossless, idempotent), failures, the Slurm scripts.
# Sourced by tests/cli/run.sh in a scratch directory; $VMXSIM is the program, $ROOT the repo.

q() { sqlite3 "$1" "$2"; }
# Every number of every run, by run key: what two databases must agree on.
DUMP="SELECT r.run_key, t.hash, r.policy, r.cpu, r.events, r.total_exits, r.marks, r.guest_cycles, r.vmm_cycles,
  r.elapsed_cycles, (SELECT group_concat(e.name || ':' || e.count || ':' || e.cycles || ':' || e.p50, ',')
  FROM exits e WHERE e.run_id = r.id), (SELECT group_concat(c.name || '=' || c.value, ',') FROM counters c
  WHERE c.run_id = r.id) FROM runs r JOIN traces t ON t.id = r.trace_id ORDER BY r.run_key"

"$VMXSIM" trace asm "$ROOT/traces/examples/basic.txt" -o basic.bin
cat > plan.json <<'EOF'
{
  "name": "small",
  "traces": [
    {"generator": "lat_ctx", "params": {"procs": [2, 4], "iters": 20}},
    "basic.bin"
  ],
  "policies": ["nocache", {"policy": "cr3cache", "knobs": {"cr3_target_count": [1, 4]}}],
  "cpus": ["core2-2007", "nehalem-2009"],
  "exclude": [{"trace": "basic.bin", "cpu": "nehalem-2009"}],
  "cache": "cache"
}
EOF
RUNS=15   # 3 traces x 3 policies x 2 cpus, less basic.bin on nehalem (3)

# ---- dry run: the run set, nothing run or made ----
run "$VMXSIM" sweep plan.json --dry-run
check_rc "dry run succeeds" 0
check_contains "dry run: the summary" "$out" "sweep small: $RUNS runs (3 excluded); 0 stored in vmxsim.db, $RUNS to run"
check_contains "dry run: a generated run" "$out" "to generate  lat_ctx procs=4 iters=20"
check_contains "dry run: a knob combination" "$out" "cr3cache,cr3_target_count=4"
check_eq "dry run: one line per run" "$RUNS" "$(printf '%s\n' "$out" | grep -c 'core2-2007\|nehalem-2009')"
[ ! -e vmxsim.db ] && [ ! -e cache ] && pass "dry run: no database, no trace made" || fail "dry run made files" "$(ls)"

# ---- a local sweep ----
run "$VMXSIM" sweep plan.json -j 2 --format json
check_rc "sweep -j 2 succeeds" 0
check_eq "every run stored once" "$RUNS|$RUNS" "$(q vmxsim.db 'SELECT count(*), count(DISTINCT run_key) FROM runs')"
check_contains "json: counts" "$out" "\"ran\":	$RUNS"
ids=$(printf '%s\n' "$out" | tr -d '\n\t ' | sed -n 's/.*"ids":\[\([0-9,]*\)\].*/\1/p')
check_eq "json: the run ids, one per run" "$(q vmxsim.db 'SELECT group_concat(id) FROM (SELECT id FROM runs ORDER BY id)')" \
  "$(printf '%s\n' "$ids" | tr ',' '\n' | sort -n | paste -sd, -)"
check_eq "two generated traces in the cache" "2" "$(ls cache | grep -c '^lat_ctx-.*\.bin$')"
check_eq "integrity" "ok" "$(q vmxsim.db 'PRAGMA integrity_check')"
check_eq "the sweep is recorded, finished" "small|0|1|$RUNS|$RUNS|0|1" \
  "$(q vmxsim.db 'SELECT name, shard, nshards, runs, done, failed, finished_at IS NOT NULL FROM sweeps')"

# A run of the sweep equals the same run by hand.
id=$(q vmxsim.db "SELECT id FROM runs WHERE policy = 'cr3cache,cr3_target_count=1' AND cpu = 'nehalem-2009' AND trace_name LIKE '%lat_ctx%' LIMIT 1")
trace=$(q vmxsim.db "SELECT trace_name FROM runs WHERE id = $id")
"$VMXSIM" report "$id" --format json > from-sweep.json
"$VMXSIM" --policy cr3cache --set cr3_target_count=1 --cpu nehalem-2009 --no-db --format json "$trace" > by-hand.json
check_eq "a sweep's run reports what the same run by hand does" "" "$(diff from-sweep.json by-hand.json)"

# Again: nothing to do.  The trace cache is reused.
stamp=$(ls -l --time-style=+%s.%N cache)
run "$VMXSIM" sweep plan.json -j 2
check_rc "a finished sweep runs again" 0
check_contains "nothing run twice" "$out" "0 run now, $RUNS stored before, 0 failed"
check_eq "still $RUNS runs" "$RUNS" "$(q vmxsim.db 'SELECT count(*) FROM runs')"
check_eq "the cached traces were not made again" "$stamp" "$(ls -l --time-style=+%s.%N cache)"

# ---- kill -9 in the middle, then resume ----
cat > big.json <<'EOF'
{"traces": [{"generator": "lat_ctx", "params": {"procs": [2, 3, 4, 5], "iters": 20}}],
 "policies": ["nocache", "shadowcache", "cr3cache", "prevroots", "ept"], "cpus": ["nehalem-2009"], "cache": "cache"}
EOF
VMXSIM_TEST_STORE_DELAY_MS=3 "$VMXSIM" sweep big.json -j 2 --db resume.db >killed.out 2>&1 &
pid=$!
n=0
for _ in $(seq 100); do
  n=$(q resume.db 'SELECT count(*) FROM runs' 2>/dev/null || echo 0)
  [ "${n:-0}" -ge 4 ] && break
  sleep 0.1
done
kill -9 "$pid" 2>/dev/null && pass "killed with -9 in the middle" || fail "the sweep ended before the kill" "$(cat killed.out)"
wait "$pid" 2>/dev/null
sleep 0.3   # the workers see their parent gone and exit
stored=$(q resume.db 'SELECT count(*) FROM runs')
[ "$stored" -ge 4 ] && [ "$stored" -lt 20 ] && pass "part of the runs stored ($stored of 20)" ||
  fail "part of the runs stored" "expected: 4..19" "actual:   $stored"
check_eq "after kill -9: integrity" "ok" "$(q resume.db 'PRAGMA integrity_check')"
check_eq "after kill -9: the sweep is unfinished" "" "$(q resume.db 'SELECT finished_at FROM sweeps')"
run "$VMXSIM" sweep big.json -j 2 --db resume.db
check_rc "the sweep resumes" 0
check_contains "stored runs are not run again" "$out" "$((20 - stored)) run now, $stored stored before, 0 failed"
check_eq "after resuming: 20 runs, each once" "20|20" "$(q resume.db 'SELECT count(*), count(DISTINCT run_key) FROM runs')"
check_eq "after resuming: integrity" "ok" "$(q resume.db 'PRAGMA integrity_check')"
"$VMXSIM" sweep big.json -j 1 --db straight.db -q > /dev/null
check_eq "a resumed sweep has the numbers of one that ran straight through" "$(q straight.db "$DUMP")" "$(q resume.db "$DUMP")"

# A given trace changed during the sweep: its hash was taken at the start, so the runs
# stored after the change would name content they may not have replayed; they are refused.
"$VMXSIM" gen lat_ctx --procs 2 --iters 20 -o given.bin > /dev/null
touch -d '1 minute ago' given.bin
cat > given.json <<'EOF'
{"traces": ["given.bin"], "policies": ["nocache", "shadowcache", "cr3cache", "prevroots", "ept"], "cpus": ["nehalem-2009"]}
EOF
VMXSIM_TEST_STORE_DELAY_MS=150 "$VMXSIM" sweep given.json -j 1 --db changed.db >changed.out 2>&1 &
pid=$!
for _ in $(seq 100); do [ "$(q changed.db 'SELECT count(*) FROM runs' 2>/dev/null || echo 0)" -ge 1 ] && break; sleep 0.05; done
touch given.bin                     # a new modification time: the file is not as it was hashed
wait "$pid"
rc=$?
stored=$(q changed.db 'SELECT count(*) FROM runs')
[ "$stored" -ge 1 ] && [ "$stored" -lt 5 ] && pass "a trace changed mid-sweep: the runs stored before the change stay ($stored of 5)" ||
  fail "a trace changed mid-sweep: runs stored before the change" "expected: 1..4" "actual:   $stored" "$(cat changed.out)"
check_eq "a trace changed mid-sweep: exit 3" "3" "$rc"
check_contains "a trace changed mid-sweep: the file and what to do" "$(cat changed.out)" \
  "given.bin: changed during the sweep (its hash was taken at the start); this run is not stored: run the sweep again"
run "$VMXSIM" sweep given.json -j 1 --db changed.db
check_rc "a trace changed mid-sweep: the sweep again stores the rest" 0
check_eq "a trace changed mid-sweep: then every run once" "5|5" "$(q changed.db 'SELECT count(*), count(DISTINCT run_key) FROM runs')"

# Ctrl-C (SIGINT) stops it cleanly.
VMXSIM_TEST_STORE_DELAY_MS=3 "$VMXSIM" sweep big.json -j 1 --db int.db >int.out 2>&1 &
pid=$!
for _ in $(seq 100); do [ "$(q int.db 'SELECT count(*) FROM runs' 2>/dev/null || echo 0)" -ge 2 ] && break; sleep 0.1; done
kill -INT "$pid"
wait "$pid"
rc=$?
check_eq "SIGINT: exit 130" "130" "$rc"
check_contains "SIGINT: says how to resume" "$(cat int.out)" "interrupted: "
check_contains "SIGINT: says how to resume" "$(cat int.out)" "the same command resumes"

# A worker killed: its run fails, named; the others go on (its queued run too).
printf '{"traces": [{"generator": "lat_ctx", "params": {"procs": 16, "iters": 5000}}], "cache": "cache",
  "policies": ["nocache", "shadowcache", "cr3cache", "prevroots", "shadowcache+lazydr", "nocache+lazydr"]}\n' > slow.json
"$VMXSIM" sweep slow.json -j 1 --db slow-warm.db --shard 0/6 -q > /dev/null   # the trace, made beforehand
"$VMXSIM" sweep slow.json -j 2 --db workers.db > workers.out 2>&1 &
pid=$!
# Workers live for the whole sweep: one is found first, and killed once a run is stored
# (a run of this sweep takes a fraction of a second, so looking for it only then could
# find none left).
worker=""
for _ in $(seq 200); do worker=$(child_of "$pid") && break; sleep 0.02; done
for _ in $(seq 100); do [ "$(q workers.db 'SELECT count(*) FROM runs' 2>/dev/null || echo 0)" -ge 1 ] && break; sleep 0.05; done
[ -n "$worker" ] || fail "a worker killed: a worker process found" "none of the sweep's children was found"
kill -9 "$worker"
wait "$pid"
rc=$?
check_eq "a worker killed: exit 70" "70" "$rc"
check_contains "a worker killed: its run is named" "$(cat workers.out)" "the worker process died of signal 9"
check_contains "a worker killed: the others ran" "$(cat workers.out)" "5 run now, 0 stored before, 1 failed"
run "$VMXSIM" sweep slow.json -j 2 --db workers.db
check_contains "the failed run runs again" "$out" "1 run now, 5 stored before, 0 failed"

# ---- shards and merge ----
for i in 0 1 2; do
  run "$VMXSIM" sweep plan.json --shard $i/3 -j 1
  check_rc "shard $i/3 succeeds" 0
done
check_contains "a shard goes to its own database by default" "$out" "part 2 of 3: 5 runs"
check_eq "shards use a rollback journal" "delete" "$(q shard-0.db 'PRAGMA journal_mode')"
check_eq "shards hold disjoint parts" "$RUNS" \
  "$(for i in 0 1 2; do q shard-$i.db 'SELECT count(*) FROM runs'; done | awk '{ s += $1 } END { print s }')"
run "$VMXSIM" merge merged.db shard-0.db shard-1.db shard-2.db
check_rc "merge succeeds" 0
check_contains "merge: per shard" "$out" "shard-1.db: 5 runs: 5 added, 0 already in merged.db"
check_eq "the merged shards equal the local sweep" "$(q vmxsim.db "$DUMP")" "$(q merged.db "$DUMP")"
before=$(q merged.db 'SELECT * FROM runs ORDER BY id'; q merged.db 'SELECT * FROM exits ORDER BY run_id, seq'; q merged.db 'SELECT * FROM counters ORDER BY run_id, seq')
run "$VMXSIM" merge merged.db shard-2.db shard-0.db shard-1.db
check_rc "merging again succeeds" 0
check_contains "merging again adds nothing" "$out" "merged.db: 0 runs added from 3 files"
after=$(q merged.db 'SELECT * FROM runs ORDER BY id'; q merged.db 'SELECT * FROM exits ORDER BY run_id, seq'; q merged.db 'SELECT * FROM counters ORDER BY run_id, seq')
check_eq "merge is idempotent: the database is unchanged" "$before" "$after"
run "$VMXSIM" merge all.db vmxsim.db merged.db
check_contains "overlapping databases: each run once" "$out" "merged.db: $RUNS runs: 0 added, $RUNS already in all.db"

# A missing shard is named, the others merged, and the gap reported.
run "$VMXSIM" merge partial.db shard-0.db shard-2.db
check_rc "a missing part: exit 3" 3
check_contains "a missing part is reported" "$err" "partial.db: part 1 of 3 of sweep small"
check_eq "the others are merged" "10" "$(q partial.db 'SELECT count(*) FROM runs')"
run "$VMXSIM" merge partial.db shard-1.db nosuch.db
check_rc "a missing file: exit 3" 3
check_contains "a missing file is named" "$err" "nosuch.db: missing (no such file)"
check_contains "and not counted as merged" "$out" "added from 1 file (1 of 2 could not be merged)"
check_not_contains "no gap once every part is in" "$err" "part 1 of 3"
run "$VMXSIM" merge
check_rc "merge without files: usage" 2

# ---- failures: the others still run, and are named ----
cat > fails.json <<'EOF'
{"traces": ["basic.bin"], "policies": [{"policy": "cr3cache", "knobs": {"cr3_target_count": [4, 5]}}]}
EOF
run "$VMXSIM" sweep fails.json --db fails.db -j 1
check_rc "a run failing VM entry: its exit code" 4
check_contains "the failed run is named" "$err" "run 1 (basic.bin | cr3cache,cr3_target_count=5 | core2-2007):"
check_eq "the other run is stored" "1" "$(q fails.db 'SELECT count(*) FROM runs')"
check_eq "the failure is recorded" "1|1" "$(q fails.db 'SELECT done, failed FROM sweeps')"

# ---- a recording's measured exits: its views are stored as by vmxsim run ----
"$VMXSIM" import xentrace "$ROOT/tests/data/xentrace-sample/sample.xentrace" -o xen.trace > /dev/null
printf '{"traces": ["xen.trace"], "policies": ["ept", "shadowcache"], "cpus": ["skylake-xen-2018"]}\n' > xen.json
run "$VMXSIM" sweep xen.json --db xen.db -j 2
check_rc "a sweep of a recording" 0
"$VMXSIM" --policy ept --cpu skylake-xen-2018 --db xen-run.db xen.trace > /dev/null
VIEWS="SELECT v.source, v.view, v.name, v.count, v.cycles, v.avg, v.p50, v.stddev FROM views v JOIN runs r ON r.id = v.run_id
  WHERE r.policy = 'ept' ORDER BY v.seq"
check_eq "its runs carry the views vmxsim run stores" "$(q xen-run.db "$VIEWS")" "$(q xen.db "$VIEWS")"
[ -n "$(q xen.db "$VIEWS")" ] && pass "the views are there" || fail "the views are there"

# ---- one run named twice by the plan: run once ----
cat > twice.json <<'EOF'
{"traces": [{"generator": "lat_ctx", "params": {"procs": 2, "iters": 20}},
            {"generator": "lat_ctx", "params": {"iters": 20, "procs": 2, "size": 0}}],
 "policies": ["nocache", "nocache"], "cache": "cache"}
EOF
run "$VMXSIM" sweep twice.json --db twice.db
check_rc "a plan naming one run four times" 0
check_contains "it runs once" "$out" "1 run now, 0 stored before, 3 repeats of other runs of the plan, 0 failed"
check_eq "one run stored" "1" "$(q twice.db 'SELECT count(*) FROM runs')"
check_eq "the part counts every run done" "4|4" "$(q twice.db 'SELECT runs, done FROM sweeps')"
run "$VMXSIM" sweep twice.json --db twice.db --format json
check_eq "every repeat has the run's id" "1,1,1,1" \
  "$(printf '%s\n' "$out" | tr -d '\n\t ' | sed -n 's/.*"ids":\[\([0-9,]*\)\].*/\1/p')"

# ---- plan and option errors ----
printf '{"traces": ["basic.bin"], "policies": ["shadowcache+lazdr"]}\n' > bad.json
run "$VMXSIM" sweep bad.json
check_rc "an unknown policy: exit 2" 2
check_contains "an unknown policy: file and path" "$err" "bad.json: \$.policies[0]: unknown policy 'lazdr'"
printf '{"traces": ["basic.bin"], "policies": ["ept"], "exclude": [{"cpu": "core2-2007"}]}\n' > empty.json
run "$VMXSIM" sweep empty.json
check_rc "an empty product: exit 2" 2
check_contains "an empty product is named" "$err" "empty.json: \$.exclude: the plan's one run is excluded"
printf '{"traces": ["basic.bin"],\n "policies": ["ept"]\n' > broken.json
run "$VMXSIM" sweep broken.json
check_rc "malformed JSON: exit 3" 3
check_contains "malformed JSON: line" "$err" "broken.json:2: malformed JSON"
printf '{"traces": ["nosuch.bin"], "policies": ["ept"]}\n' > missing.json
run "$VMXSIM" sweep missing.json --db missing.db
check_rc "a missing trace file: exit 3" 3
check_contains "a missing trace file: where" "$err" "\$.traces[0]: nosuch.bin: No such file or directory"
run "$VMXSIM" sweep plan.json --shard 3/3
check_rc "--shard 3/3: usage" 2
check_contains "--shard 3/3: explained" "$err" "expected I/N with 0 <= I < N"
run "$VMXSIM" sweep plan.json --time 1:00
check_rc "--time without --slurm: usage" 2

# ---- Slurm: the scripts, and their submission (sbatch stood in for) ----
run "$VMXSIM" sweep plan.json --slurm --shards 2 --dir shared --cpus-per-task 2 --time 00:05:00 --partition debug \
  --sbatch-option=--account=lab
check_rc "--slurm writes the scripts" 0
s=shared/sweep.sbatch
[ -x "$s" ] && [ -x shared/merge.sbatch ] && pass "both scripts are executable" || fail "both scripts are executable" "$(ls -l shared)"
check_contains "array of 2" "$(cat $s)" "#SBATCH --array=0-1"
check_contains "cpus per task" "$(cat $s)" "#SBATCH --cpus-per-task=2"
check_contains "time" "$(cat $s)" "#SBATCH --time='00:05:00'"
check_contains "partition" "$(cat $s)" "#SBATCH --partition='debug'"
check_contains "extra option" "$(cat $s)" "#SBATCH '--account=lab'"
check_contains "each task runs its shard" "$(cat $s)" "--shard \"\$SLURM_ARRAY_TASK_ID/2\" -j 2"
check_contains "into its own database" "$(cat $s)" "$PWD/shared'/shard-\"\$SLURM_ARRAY_TASK_ID\".db"
check_contains "absolute paths" "$(cat $s)" "exec '$(cd "$(dirname "$VMXSIM")" && pwd -P)/"
check_contains "merge script merges every shard" "$(cat shared/merge.sbatch)" "merge '$PWD/shared/merged.db'"
check_contains "merge script names shard 1" "$(cat shared/merge.sbatch)" "'$PWD/shared/shard-1.db'"
# a task's command, run by hand as Slurm would, makes shard 1
SLURM_ARRAY_TASK_ID=1 sh "$s" > /dev/null 2>&1
check_eq "the task script runs its shard" "7" "$(q shared/shard-1.db 'SELECT count(*) FROM runs')"

cat > sbatch <<'EOF'
#!/bin/sh
echo "$*" >> sbatch.log
case $* in *merge.sbatch) echo 42 ;; *) echo "41;cluster" ;; esac
EOF
chmod +x sbatch
run env SBATCH="$PWD/sbatch" "$VMXSIM" sweep plan.json --slurm --submit --shards 2 --dir shared
check_rc "--submit succeeds" 0
check_contains "--submit names both jobs" "$out" "submitted array job 41 (2 tasks) and merge job 42"
check_contains "the array is submitted" "$(sed -n 1p sbatch.log)" "--parsable $PWD/shared/sweep.sbatch"
check_contains "the merge job waits for the array" "$(sed -n 2p sbatch.log)" \
  "--parsable --dependency=afterok:41 --kill-on-invalid-dep=yes $PWD/shared/merge.sbatch"
printf '#!/bin/sh\necho "sbatch: error: invalid partition specified" >&2\nexit 1\n' > sbatch
run env SBATCH="$PWD/sbatch" "$VMXSIM" sweep plan.json --slurm --submit --shards 2 --dir shared
check_rc "a refused submission: exit 2" 2
check_contains "a refused submission: sbatch's reason" "$err" "invalid partition specified"
check_contains "a refused submission: named" "$err" "refused $PWD/shared/sweep.sbatch"

# ---- Slurm: hostile values.  Every value is quoted in the scripts, and what would start a
# line of its own there (a control character) is refused ----
# sbatch_words FILE: the words of each #SBATCH line, one a line, as sh reads them (sbatch
# reads the quotes vmxsim writes alike: tests/slurm/run.sh checks a job's name there).
sbatch_words() {
  grep '^#SBATCH ' "$1" | while IFS= read -r l; do eval "set -- ${l#'#SBATCH '}"; printf '%s\n' "$@"; done
}
# words TEXT: the words of TEXT as sh reads them, joined by '|' (nothing after a syntax error)
words() { (eval "set -- $1" && IFS='|' && printf '%s\n' "$*") 2>/dev/null; }
no_pwned() { # WHAT: no command of a value ran
  check_eq "$1: no command in a value ran" "" "$(find . -name 'PWNED*')"
}
# A name, a plan path, a --dir and options with legal shell metacharacters.
cat > "evil \$(touch PWNED) ;'.json" <<'EOF'
{"name": "it's $(touch PWNED); `touch PWNED` \\ \"q\" #c", "traces": ["basic.bin"], "policies": ["nocache", "shadowcache"]}
EOF
NAME='it'\''s $(touch PWNED); `touch PWNED` \ "q" #c'
PLAN="evil \$(touch PWNED) ;'.json"
D='d$(touch${IFS}PWNED);`touch${IFS}PWNED`'
PART='p $(touch PWNED) `touch PWNED`'
TIME='1:00;$(touch PWNED)'
OPT='--comment=a b'\''c $(touch PWNED) \ #x'
run "$VMXSIM" sweep "$PLAN" --slurm --dir "$D" --partition "$PART" --time "$TIME" --sbatch-option "$OPT"
check_rc "hostile values: the scripts are written" 0
for f in sweep merge; do
  if sh -n "$D/$f.sbatch" 2>/dev/null; then pass "hostile values: sh reads $f.sbatch"
  else fail "hostile values: sh reads $f.sbatch" "$(sh -n "$D/$f.sbatch" 2>&1)"; fi
done
check_eq "hostile values: each #SBATCH line of sweep.sbatch is one word, the value" "--job-name=vmxsim-$NAME
--array=0-0
--cpus-per-task=1
--output=$PWD/$D/logs/shard-%a.out
--time=$TIME
--partition=$PART
$OPT" "$(sbatch_words "$D/sweep.sbatch")"
check_eq "hostile values: each #SBATCH line of merge.sbatch is one word, the value" "--job-name=vmxsim-$NAME-merge
--cpus-per-task=1
--output=$PWD/$D/logs/merge.out
--time=$TIME
--partition=$PART
$OPT" "$(sbatch_words "$D/merge.sbatch")"
# A backslash goes outside the quotes: sbatch takes it as an escape even inside them.
check_contains "hostile values: the job name's quoting" "$(cat "$D/sweep.sbatch")" \
  "#SBATCH --job-name='vmxsim-it'\\''s \$(touch PWNED); \`touch PWNED\` '\\\\' \"q\" #c'"
SLURM_ARRAY_TASK_ID=0 sh "$D/sweep.sbatch" > task.out 2>&1
check_eq "hostile values: the task runs" "0" "$?"
check_eq "hostile values: the task's shard holds the runs" "2" "$(q "$D/shard-0.db" 'SELECT count(*) FROM runs')"
check_eq "hostile values: the sweep has the plan's name" "$NAME" "$(q "$D/shard-0.db" 'SELECT name FROM sweeps')"
sh "$D/merge.sbatch" > merge.out 2>&1
check_eq "hostile values: the merge job merges" "2" "$(q "$D/merged.db" 'SELECT count(*) FROM runs')"
no_pwned "hostile values, the scripts run"

# The printed commands are quoted: pasted, they run with the paths as they are.
mkdir -p stub
printf '#!/bin/sh\nfor a in "$@"; do printf "%%s\\n" "$a"; done >> "$STUB_LOG"\necho "41;cluster"\n' > stub/sbatch
chmod +x stub/sbatch
cmd=$(printf '%s\n' "$out" | sed -n 's/^submit them with: \(.*\) (the same options), or:$/\1/p')
check_eq "the printed sweep command names the plan as one word" "vmxsim|sweep|$PLAN|--slurm|--submit" "$(words "$cmd")"
printf '%s\n' "$out" | sed -n '3,4p' > pasted.sh
STUB_LOG=$PWD/stub.log PATH="$PWD/stub:$PATH" sh pasted.sh > /dev/null
check_eq "the printed sbatch commands, pasted, submit the scripts" "--parsable
$PWD/$D/sweep.sbatch
--dependency=afterok:41
--kill-on-invalid-dep=yes
$PWD/$D/merge.sbatch" "$(cat stub.log 2>/dev/null)"
run env SBATCH="$PWD/stub/sbatch" STUB_LOG="$PWD/stub-submit.log" "$VMXSIM" sweep "$PLAN" --slurm --submit --dir "$D"
check_rc "hostile values: --submit" 0
cmd=$(printf '%s\n' "$out" | sed -n 's/^a failed task runs again alone with: \(.*\), then: \(.*\)$/\1 \2/p')
check_eq "the printed commands after --submit: each script one word" \
  "sbatch|--array=I|$PWD/$D/sweep.sbatch|sbatch|$PWD/$D/merge.sbatch" "$(words "$cmd")"
no_pwned "hostile values, the printed commands pasted"

# A control character in any value is refused, named, and nothing is written.
nl=$(printf 'x\nid>PWNED')
printf '{"name": "x\\nid>PWNED\\n#", "traces": ["basic.bin"], "policies": ["nocache"]}\n' > nl-name.json
run "$VMXSIM" sweep nl-name.json --slurm --dir nl-dir
check_rc "a newline in the plan's name: usage" 2
check_contains "a newline in the plan's name: named" "$err" \
  "nl-name.json: \$.name: a name with a control character (byte 0x0a at offset 1)"
run "$VMXSIM" sweep nl-name.json --dry-run
check_rc "a newline in the plan's name: refused for any sweep" 2
for opt in --partition --time --sbatch-option; do
  run "$VMXSIM" sweep plan.json --slurm --dir nl-dir "$opt" "$nl"
  check_rc "a newline in $opt: usage" 2
  check_contains "a newline in $opt: named" "$err" "$opt: a control character (byte 0x0a at offset 1) cannot go into a job script"
done
for opt in --cache --db --dir; do   # made absolute: the offset counts the working directory's path
  run "$VMXSIM" sweep plan.json --slurm --dir nl-dir "$opt" "$nl"
  check_rc "a newline in $opt: usage" 2
  check_contains "a newline in $opt: named" "$err" "$opt: a control character (byte 0x0a at offset $((${#PWD} + 2)))"
done
run "$VMXSIM" sweep plan.json --slurm --dir nl-dir --time "$(printf '1:00\r')"
check_contains "a carriage return in --time: named" "$err" "--time: a control character (byte 0x0d at offset 4)"
run "$VMXSIM" sweep plan.json --slurm --dir nl-dir --sbatch-option "$(printf -- '--comment=\033[2J')"
check_contains "an escape in --sbatch-option: named" "$err" "--sbatch-option: a control character (byte 0x1b at offset 10)"
sed 's/"small"/"nl-path"/' plan.json > "$nl.json"
run "$VMXSIM" sweep "$nl.json" --slurm --dir nl-dir
check_rc "a newline in the plan's path: usage" 2
check_contains "a newline in the plan's path: named" "$err" "the plan's path: a control character (byte 0x0a at offset"
rm -f "$nl.json"
if [ ! -e nl-dir ] && [ ! -e "$nl" ]; then pass "a control character: no script written"
else fail "a control character: no script written" "$(ls)"; fi
no_pwned "control characters"

# A name is a name: it cannot put the default --dir (sweep-NAME) elsewhere.
mkdir -p a/b/c
printf '{"name": "/../../../x", "traces": ["basic.bin"], "policies": ["nocache"]}\n' > up.json
before=$(find . ! -name 'up.*' | sort)
( cd a/b/c && "$VMXSIM" sweep ../../../up.json --slurm > ../../../up.out 2> ../../../up.err; echo $? > ../../../up.rc )
check_eq "a name with '/': usage" "2" "$(cat up.rc)"
check_contains "a name with '/': named" "$(cat up.err)" "up.json: \$.name: a name with a '/' (offset 0)"
check_eq "a name with '/': nothing written" "$before" "$(find . ! -name 'up.*' | sort)"
for n in ..x .x; do
  printf '{"name": "%s", "traces": ["basic.bin"], "policies": ["nocache"]}\n' "$n" > dot.json
  run "$VMXSIM" sweep dot.json --slurm
  check_rc "the name $n: usage" 2
  check_contains "the name $n: named" "$err" "dot.json: \$.name: a name that starts with '.'"
done
if [ ! -e sweep-..x ] && [ ! -e sweep-.x ]; then pass "a name with a leading '.': nothing written"
else fail "a name with a leading '.': nothing written" "$(ls -a)"; fi
printf '{"traces": ["basic.bin"], "policies": ["nocache"]}\n' > .hidden.json
run "$VMXSIM" sweep .hidden.json --dry-run
check_rc "a default name with a leading '.': usage" 2
check_contains "a default name with a leading '.': set \"name\"" "$err" \
  ".hidden.json: \$.name: the plan's file name gives a name that starts with '.'; set \"name\""

# ---- plots from a sweep: a swept parameter against us or exits per operation ----
if ! command -v gnuplot >/dev/null 2>&1; then
  skip "scripts/plot/sweep.sh: no gnuplot"
else
  PLOT="$ROOT/scripts/plot/sweep.sh"
  is_png() { [ "$(od -An -tx1 -N8 "$1" 2>/dev/null | tr -d ' \n')" = "89504e470d0a1a0a" ]; }
  run "$PLOT" --db merged.db --param procs --where cpu=core2-2007
  check_rc "sweep plot of a generator parameter" 0
  check_eq "sweep plot: its default files" "sweep-procs.png
sweep-procs.svg
sweep-procs.pdf
sweep-procs.caption.txt" "$out"
  is_png sweep-procs.png && pass "sweep plot: a PNG" || fail "sweep plot: a PNG" "$(od -c -N8 sweep-procs.png 2>&1)"
  check_contains "sweep plot: an SVG" "$(head -c 400 sweep-procs.svg)" "<svg"
  check_eq "sweep plot: a PDF" "%PDF" "$(head -c 4 sweep-procs.pdf)"
  check_contains "sweep plot: a human title, in the caption file" "$(cat sweep-procs.caption.txt)" "against procs"
  check_contains "sweep plot: a tick at a swept value" "$(cat sweep-procs.svg)" "<text> 4</text>"
  check_not_contains "sweep plot: no tick between the swept values" "$(cat sweep-procs.svg)" ".5</text>"
  run "$PLOT" --db merged.db --param cr3_target_count --y exits --where procs=4 -o knob.png
  check_rc "sweep plot of a knob, exits per operation" 0
  is_png knob.png && pass "sweep plot of a knob: a PNG" || fail "sweep plot of a knob: a PNG"
  [ ! -e knob.png.png ] && pass "sweep plot: -o OUT.png names the PNG" || fail "sweep plot: -o OUT.png names the PNG" "knob.png.png"
  run "$PLOT" --db resume.db --param cr3_target_count
  check_rc "a point with several results: refused" 1
  check_contains "a point with several results: the varying parameter is named" "$err" "procs; fix them with --where KEY=VALUE"
  run "$PLOT" --db merged.db --param paging
  check_rc "a name both a parameter and a knob: usage" 2
  check_contains "a name both a parameter and a knob: how to choose" "$err" "write params.paging or knobs.paging"
  run "$PLOT" --db merged.db --param nosuch
  check_rc "an unknown key" 1
  run "$PLOT" --db merged.db
  check_rc "no --param: usage" 2
fi
