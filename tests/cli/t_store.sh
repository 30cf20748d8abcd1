# CLI tests for the results database: storing runs, runs/report/compare, concurrency, kills, bad paths.
# Sourced by tests/cli/run.sh in a scratch directory; $VMXSIM is the program, $ROOT the repo.

"$VMXSIM" trace asm "$ROOT/traces/examples/basic.txt" -o basic.bin
q() { sqlite3 "${DB:-vmxsim.db}" "$1"; }

# ---- a run is stored by default and reads back exactly ----

run "$VMXSIM" --policy shadowcache --format json basic.bin
check_rc "json run succeeds" 0
batch_json=$out
check_eq "stored in ./vmxsim.db by default" "1" "$(q 'SELECT count(*) FROM runs')"
run "$VMXSIM" report --last --format json
check_rc "report --last succeeds" 0
check_eq "report --last --format json equals the batch output" "$batch_json" "$out"

run "$VMXSIM" --policy nocache basic.bin
batch_table=$out
run "$VMXSIM" report 2
check_eq "report 2 equals the batch table" "$batch_table" "$out"
run "$VMXSIM" --policy nocache --format csv basic.bin
batch_csv=$out
run "$VMXSIM" report --format csv
check_eq "report (default: last) --format csv equals the batch csv" "$batch_csv" "$out"

check_eq "schema version" "4" "$(q 'PRAGMA user_version')"
check_eq "journal mode" "wal" "$(q 'PRAGMA journal_mode')"
check_eq "one trace row for three runs" "1" "$(q 'SELECT count(*) FROM traces')"
check_eq "trace hash is xxh64 of the file" "16" "$(q 'SELECT length(hash) FROM traces')"
check_eq "metadata is queryable JSON" "hand-written" "$(q "SELECT json_extract(metadata, '\$.origin') FROM traces")"
check_eq "policy stored resolved" "shadow" "$(q "SELECT json_extract(policy_json, '\$.paging') FROM runs WHERE id = 1")"
check_contains "cpu profile stored" "$(q 'SELECT cpu_json FROM runs WHERE id = 1')" "clock_ghz"
check_eq "version stored" "$("$VMXSIM" --version | cut -d' ' -f2)" "$(q 'SELECT DISTINCT vmxsim_version FROM runs')"
ncounters=$(printf '%s\n' "$batch_json" | sed -n '/"counters"/,/}/p' | grep -c ':')
check_eq "every counter stored" "$((ncounters - 1))" "$(q 'SELECT count(*) FROM counters WHERE run_id = 1')"
check_eq "breakdown rows stored with their parent" "CR_ACCESS" \
  "$(q "SELECT parent FROM exits WHERE run_id = 1 AND name = 'cr3 write'")"

run "$VMXSIM" --policy nocache --no-db basic.bin
check_rc "--no-db run succeeds" 0
check_eq "--no-db stores nothing" "3" "$(q 'SELECT count(*) FROM runs')"
run "$VMXSIM" --policy nocache --db other.db basic.bin
check_eq "--db chooses the file" "1" "$(DB=other.db q 'SELECT count(*) FROM runs')"

# ---- the hash of a trace file is remembered, and the next stored run takes it ----

cp basic.bin fresh.bin                    # changed a moment ago: it may change again unseen
run "$VMXSIM" --policy nocache --db fresh.db fresh.bin
check_eq "a file changed in the last 3 s: its hash is not remembered" "1|0" \
  "$(DB=fresh.db q 'SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM trace_files)')"
settled="$ROOT/tests/fuzz/corpus/trace/lat_ctx-2p.bin"   # as checked out: not written since
if [ $(($(date +%s) - $(stat -c %Z "$settled"))) -gt 4 ]; then
  run "$VMXSIM" --policy shadowcache --db known.db "$settled"
  check_rc "a run of a settled file is stored" 0
  check_eq "its hash is remembered under its real path" "$(realpath "$settled")|$(DB=known.db q 'SELECT hash FROM traces')" \
    "$(DB=known.db q 'SELECT path, hash FROM trace_files')"
  # Proof that the next run takes the remembered hash rather than hashing: it stores what the
  # database says, here a hash no file has.
  DB=known.db q "UPDATE trace_files SET hash = '00000000000000ff'"
  run "$VMXSIM" --policy shadowcache --db known.db "$settled"
  check_eq "the next run of the unchanged file takes the remembered hash" "00000000000000ff" \
    "$(DB=known.db q 'SELECT t.hash FROM runs r JOIN traces t ON t.id = r.trace_id WHERE r.id = 2')"
  run "$VMXSIM" --policy shadowcache --db known.db --no-db "$settled"
  check_eq "--no-db: nothing looked up or stored" "2" "$(DB=known.db q 'SELECT count(*) FROM runs')"
  chmod a-w known.db
  run "$VMXSIM" runs --db known.db --trace "$settled" --format csv
  chmod u+w known.db
  check_eq "runs --trace FILE of a read-only database takes the remembered hash too" "2" \
    "$(printf '%s\n' "$out" | sed 1d | cut -d, -f1)"
  # compare --run and sweep take the remembered hash too, and remember the one they take
  run "$VMXSIM" compare --db known.db --trace "$settled" --policy shadowcache,nocache --run
  check_rc "compare --run of the remembered file succeeds" 0
  check_eq "compare --run takes the remembered hash for the run it replays" "nocache|00000000000000ff" \
    "$(DB=known.db q 'SELECT r.policy, t.hash FROM runs r JOIN traces t ON t.id = r.trace_id WHERE r.id = 3')"
  printf '{"name": "known", "traces": ["%s"], "policies": ["prevroots"], "cpus": ["core2-2007"]}\n' "$settled" > known.json
  run "$VMXSIM" sweep known.json --db known.db
  check_rc "a sweep of the remembered file succeeds" 0
  check_eq "a sweep takes the remembered hash too" "prevroots|00000000000000ff" \
    "$(DB=known.db q 'SELECT r.policy, t.hash FROM runs r JOIN traces t ON t.id = r.trace_id WHERE r.id = 4')"
  real="$(realpath "$settled")|$(DB=known.db q "SELECT hash FROM traces WHERE hash != '00000000000000ff'")"
  DB=known.db q "DELETE FROM trace_files"
  run "$VMXSIM" compare --db known.db --trace "$settled" --policy lazydr --run
  check_eq "compare --run remembers the hash it took" "$real" "$(DB=known.db q 'SELECT path, hash FROM trace_files')"
  DB=known.db q "DELETE FROM trace_files"
  printf '{"name": "known2", "traces": ["%s"], "policies": ["lazydr"], "cpus": ["nehalem-2009"]}\n' "$settled" > known2.json
  run "$VMXSIM" sweep known2.json --db known.db
  check_rc "a sweep that hashes the file succeeds" 0
  check_eq "a sweep remembers the hash it took" "$real" "$(DB=known.db q 'SELECT path, hash FROM trace_files')"
  DB=known.db q "UPDATE trace_files SET hash = '00000000000000ff'"
  run sh -c "printf 'until 5\nsave\n' | \"$VMXSIM\" repl \"$settled\" --db known.db --policy nocache"
  check_rc "the REPL saves a run of the remembered file" 0
  check_eq "the REPL's save takes the remembered hash" "00000000000000ff" \
    "$(DB=known.db q 'SELECT t.hash FROM runs r JOIN traces t ON t.id = r.trace_id ORDER BY r.id DESC LIMIT 1')"
  DB=known.db q "DELETE FROM trace_files"
  run sh -c "printf 'until 5\nsave\n' | \"$VMXSIM\" repl \"$settled\" --db known.db --policy nocache"
  check_eq "the REPL's save remembers the hash the store took" "$real" "$(DB=known.db q 'SELECT path, hash FROM trace_files')"
else
  skip "the checked-out trace was written less than 5 s ago"
fi

# ---- runs ----

run "$VMXSIM" runs
check_rc "runs succeeds" 0
check_contains "runs has a header" "$out" "id  started (UTC)"
check_contains "runs shows us/op" "$out" "us/op"
check_eq "runs: one line per run" "4" "$(printf '%s\n' "$out" | wc -l)"
run "$VMXSIM" runs --policy shadowcache
check_eq "runs --policy filters" "2" "$(printf '%s\n' "$out" | wc -l)"
run "$VMXSIM" runs --trace basic.bin --format csv
check_eq "runs --trace FILE matches by content" "4" "$(printf '%s\n' "$out" | wc -l)"
cp basic.bin renamed.bin
run "$VMXSIM" runs --trace renamed.bin --policy nocache --format csv
check_eq "a renamed copy matches by content" "3" "$(printf '%s\n' "$out" | wc -l)"
run "$VMXSIM" runs --trace no-such.bin
check_rc "runs with no match succeeds" 0
check_contains "runs with no match says so" "$err" "no stored runs match"
run "$VMXSIM" runs --format json --workload basic
check_contains "runs --format json" "$out" '"policy":	"shadowcache"'
run "$VMXSIM" runs --help
check_rc "runs --help" 0
check_contains "runs --help teaches by example" "$out" "  vmxsim runs --prune --older-than 30d"
run "$VMXSIM" runs --bogus
check_rc "runs: bad option exits 2" 2
check_eq "runs: bad option is one line" "1" "$(printf '%s\n' "$err" | wc -l)"
run "$VMXSIM" runs --db missing.db
check_rc "runs on a missing database exits 5" 5
check_contains "runs on a missing database says so" "$err" "missing.db does not exist"
[ ! -e missing.db ] && pass "querying does not create the database" || fail "querying does not create the database"

# ---- report ----

run "$VMXSIM" report 99
check_rc "report of a missing run exits 2" 2
check_contains "report of a missing run says so" "$err" "no run 99"
run "$VMXSIM" report 1 --last
check_rc "report: RUN_ID and --last together exit 2" 2
run "$VMXSIM" report abc
check_rc "report: a bad run id exits 2" 2
run "$VMXSIM" report --help
check_contains "report --help teaches by example" "$out" "example: vmxsim report"

# ---- compare ----

"$VMXSIM" --policy cr3cache --set cr3_target_count=2 basic.bin >/dev/null
run "$VMXSIM" compare 1 2
check_rc "compare 1 2 succeeds" 0
check_contains "compare heading" "$out" "vmxsim compare: trace basic.bin (basic), cpu core2-2007, per operation (3 marks)"
check_contains "compare legend" "$out" "  A: run 1, policy shadowcache
  B: run 2, policy nocache"
check_contains "compare exits section" "$out" "VM exits/op"
check_contains "compare cycles section" "$out" "cycles/op"
# The cr3 write row of the cycles section, checked against the stored values (3 marks).
c1=$(q "SELECT cycles FROM exits WHERE run_id = 1 AND name = 'cr3 write'")
c2=$(q "SELECT cycles FROM exits WHERE run_id = 2 AND name = 'cr3 write'")
want=$(awk -v a="$c1" -v b="$c2" 'BEGIN { printf "%.0f %.0f %.3f %+.0f", a / 3, b / 3, b / a, b / 3 - a / 3 }')
got=$(printf '%s\n' "$out" | awk '/^cycles\/op/ { s = 1 } s && /^  cr3 write/ { print $3, $4, $5, $6; exit }')
check_eq "compare: cr3 write cycles per operation, ratio and difference" "$want" "$got"
check_contains "compare: us/op row" "$out" "us/op"
run "$VMXSIM" compare --trace basic.bin --policy shadowcache,cr3cache,cr3_target_count=2
check_rc "compare --trace --policy A,B succeeds" 0
check_contains "an override stays with its policy" "$out" "  B: run 4, policy cr3cache,cr3_target_count=2"
run "$VMXSIM" compare --trace basic.bin --policy 'shadowcache,cr3cache,,cr3_target_count=2,'
check_rc "compare --policy with empty parts is refused, as run refuses them" 2
check_contains "... saying so" "$err" "--policy 'shadowcache,cr3cache,,cr3_target_count=2,': an empty item"
run "$VMXSIM" compare --trace basic.bin
check_contains "compare --trace without --policy takes every policy" "$out" "  C: run 4, policy cr3cache"
run "$VMXSIM" compare 1 2 --format csv
check_contains "compare csv header" "$out" "metric,name,parent,run,policy,cpu,trace,total,per_op,ratio,diff"
check_contains "compare csv row" "$out" "cycles,cr3 write,CR_ACCESS,2,nocache,core2-2007,basic.bin,$c2,$(awk -v b="$c2" 'BEGIN { v = b / 3; for (p = 1; p <= 17; p++) { s = sprintf("%." p "g", v); if (s + 0 == v) break }; print s }'),"
run "$VMXSIM" compare 1 2 --format json
check_contains "compare json" "$out" '"per_op":	true'
run "$VMXSIM" compare --trace basic.bin --policy ept
check_rc "compare with an unstored policy exits 2" 2
check_contains "compare names the missing policy" "$err" "no stored run of trace basic.bin under policy ept"
# --run replays the missing policies in one pass, a policy with an override as preset plus override
n0=$(q "SELECT count(*) FROM runs")
run "$VMXSIM" compare --trace basic.bin --policy shadowcache,prevroots,shadowcache+lazydr,tlb_entries=64 --run
check_rc "compare --run with an override succeeds" 0
check_eq "compare --run stores only the missing runs" "$((n0 + 2))" "$(q "SELECT count(*) FROM runs")"
check_contains "compare --run compares the replayed runs, the override's too" "$out" "C: run $((n0 + 2)), policy shadowcache+lazydr,tlb_entries=64"
want=$("$VMXSIM" --policy prevroots --no-db --format csv basic.bin | grep ',total,exits,')
got=$("$VMXSIM" report $((n0 + 1)) --format csv | grep ',total,exits,')
check_eq "a replayed run is stored as a run of its own would be" "$want" "$got"
run "$VMXSIM" compare 1
check_rc "compare needs two runs" 2
run "$VMXSIM" compare 1 --trace basic.bin
check_rc "compare: ids and --trace together exit 2" 2
run "$VMXSIM" compare --help
check_contains "compare --help teaches by example" "$out" "vmxsim compare --trace lat_ctx.bin --policy nocache,cr3cache"

# ---- concurrent writers ----

for p in 1 2 3 4; do
  ( for i in 1 2 3 4 5; do
      "$VMXSIM" --policy nocache --db conc.db basic.bin >/dev/null 2>>conc.err || echo "writer $p run $i: $?" >>conc.err
    done ) &
done
wait
check_eq "4 writers x 5 runs: no errors" "" "$(cat conc.err 2>/dev/null)"
check_eq "4 writers x 5 runs: 20 runs stored" "20" "$(DB=conc.db q 'SELECT count(*) FROM runs')"
check_eq "concurrent writers: integrity" "ok" "$(DB=conc.db q 'PRAGMA integrity_check')"

# ---- killed while storing: nothing partial ----

before=$(q 'SELECT count(*) FROM runs')
# The result is printed (and flushed) just before the store step, whose
# transaction then lasts ~5 s (100 ms after each of ~50 inserts).
VMXSIM_TEST_STORE_DELAY_MS=100 "$VMXSIM" --policy nocache basic.bin >killed.out 2>&1 &
pid=$!
wait_printed() { for _ in $(seq 50); do grep -q "VM exits" "$1" 2>/dev/null && break; sleep 0.1; done; sleep 0.5; }
wait_printed killed.out
kill -9 "$pid" 2>/dev/null && pass "killed inside the store transaction" || fail "the run ended before the kill"
wait "$pid" 2>/dev/null
check_eq "kill -9: integrity ok" "ok" "$(q 'PRAGMA integrity_check')"
check_eq "kill -9: no run stored" "$before" "$(q 'SELECT count(*) FROM runs')"
check_eq "kill -9: no orphan exit rows" "0" "$(q 'SELECT count(*) FROM exits WHERE run_id NOT IN (SELECT id FROM runs)')"
check_eq "kill -9: no orphan counters" "0" "$(q 'SELECT count(*) FROM counters WHERE run_id NOT IN (SELECT id FROM runs)')"
check_contains "kill -9: the result was printed first" "$(cat killed.out)" "VM exits"
run "$VMXSIM" --policy nocache basic.bin
check_rc "the database works after the kill" 0
check_eq "the next run is stored" "$((before + 1))" "$(q 'SELECT count(*) FROM runs')"

before=$(q 'SELECT count(*) FROM runs')
VMXSIM_TEST_STORE_DELAY_MS=100 "$VMXSIM" --policy nocache basic.bin >int.out 2>&1 &
pid=$!
wait_printed int.out
kill -INT "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
check_eq "Ctrl-C while storing: no run stored" "$before" "$(q 'SELECT count(*) FROM runs')"
check_eq "Ctrl-C while storing: integrity ok" "ok" "$(q 'PRAGMA integrity_check')"

# ---- bad database paths: exit 5, clear message, result still printed ----

mkdir adir
run "$VMXSIM" --policy nocache --db adir basic.bin
check_rc "a directory: exit 5" 5
check_contains "a directory: message" "$err" "results database adir: is a directory"
check_contains "a directory: result printed" "$out" "VM exits"

echo "just some text" > notes.txt
run "$VMXSIM" --policy nocache --db notes.txt basic.bin
check_rc "not a database: exit 5" 5
check_contains "not a database: message" "$err" "results database notes.txt: cannot open: file is not a database"
check_contains "not a database: result printed" "$out" "VM exits"
check_eq "not a database: file untouched" "just some text" "$(cat notes.txt)"

sqlite3 foreign.db 'CREATE TABLE accounts (id INTEGER)'
run "$VMXSIM" --policy nocache --db foreign.db basic.bin
check_rc "another application's database: exit 5" 5
check_contains "another application's database: message" "$err" "not a vmxsim results database"

sqlite3 newer.db 'PRAGMA application_id = 1986885747; PRAGMA user_version = 9'
run "$VMXSIM" --policy nocache --db newer.db basic.bin
check_rc "a newer schema: exit 5" 5
check_contains "a newer schema: message" "$err" "schema version 9 is newer than this vmxsim"
run "$VMXSIM" runs --db newer.db
check_rc "a newer schema: runs exits 5" 5

sqlite3 older.db 'PRAGMA application_id = 1986885747'
run "$VMXSIM" runs --db older.db
check_rc "an older (version 0) database: runs only reads it, exit 5" 5
check_contains "an older database: runs names the command that migrates it" "$err" \
  "results database older.db: schema version 0, this vmxsim needs 4; run 'vmxsim migrate --db older.db'"
check_eq "an older database: runs leaves it as it was" "0" "$(DB=older.db q 'PRAGMA user_version')"
run "$VMXSIM" migrate --db older.db
check_rc "migrate: exit 0" 0
check_contains "migrate: says what it did" "$err" "results database older.db: schema version 0 upgraded to 4"
check_eq "migrate: the database is migrated" "4" "$(DB=older.db q 'PRAGMA user_version')"
run "$VMXSIM" runs --db older.db
check_rc "a migrated database: runs exits 0" 0
run "$VMXSIM" migrate --db older.db
check_contains "migrate on a current database" "$err" "schema version 4, already current"
run "$VMXSIM" migrate --db missing.db
check_rc "migrate on a missing file: exit 5" 5

cp vmxsim.db ro.db
chmod 444 ro.db
if [ "$(id -u)" = 0 ]; then
  # root writes through file modes: run as nobody (needs the scratch dir and program readable)
  chmod 755 .
  ro_run() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
else
  ro_run() { "$@"; }
fi
if ro_run "$VMXSIM" --version >/dev/null 2>&1; then
  run ro_run "$VMXSIM" --policy nocache --db ro.db basic.bin
  check_rc "a read-only file: exit 5" 5
  check_contains "a read-only file: message names the file" "$err" "results database ro.db: cannot write it: ro.db is read-only for this user"
  check_contains "a read-only file: result printed" "$out" "VM exits"
else
  echo "  skip  $CASE: read-only file (cannot run as an unprivileged user here)"
fi

# A full disk, where a small tmpfs can be mounted (root, outside most containers).
mkdir full
if mount -t tmpfs -o size=256k tmpfs full 2>/dev/null; then
  "$VMXSIM" --policy nocache --db full/r.db basic.bin >/dev/null
  dd if=/dev/zero of=full/fill bs=4k 2>/dev/null
  run "$VMXSIM" --policy shadowcache --db full/r.db basic.bin
  check_rc "a full disk: exit 5" 5
  check_contains "a full disk: message" "$err" "results database full/r.db"
  check_contains "a full disk: says why" "$err" "space left on"
  check_contains "a full disk: result printed" "$out" "VM exits"
  rm -f full/fill
  check_eq "a full disk: the earlier run survives" "1" "$(DB=full/r.db q 'SELECT count(*) FROM runs')"
  umount full
fi

# ---- deleting runs: --delete ids, --prune by filter, --older-than, --dry-run
rm -f del.db
"$VMXSIM" trace asm "$ROOT/traces/examples/basic.txt" -o keep.bin
cp keep.bin gone.bin && printf '' >> gone.bin
"$VMXSIM" gen lat_ctx --procs 2 --iters 5 -o gone.bin > /dev/null
for p in nocache shadowcache prevroots; do
  "$VMXSIM" --policy $p --db del.db keep.bin > /dev/null
  "$VMXSIM" --policy $p --db del.db gone.bin > /dev/null
done
count() { sqlite3 del.db "SELECT count(*) FROM $1"; }
check_eq "six runs to start with" "6" "$(count runs)"
run "$VMXSIM" runs --db del.db --delete 1,3
check_rc "runs --delete 1,3" 0
check_eq "--delete lists what it deletes" "1 3" "$(printf '%s\n' "$out" | awk 'NR > 1 { printf "%s%s", sep, $1; sep = " " }')"
check_eq "--delete says how many" "vmxsim: deleted 2 runs from del.db" "$err"
ids() { sqlite3 del.db 'SELECT group_concat(id, " ") FROM (SELECT id FROM runs ORDER BY id)'; }
check_eq "the runs are gone" "2 4 5 6" "$(ids)"
check_eq "their exits are gone" "0" "$(sqlite3 del.db 'SELECT count(*) FROM exits WHERE run_id IN (1, 3)')"
check_eq "their counters are gone" "0" "$(sqlite3 del.db 'SELECT count(*) FROM counters WHERE run_id IN (1, 3)')"
before=$("$VMXSIM" runs --db del.db --format csv | wc -l)
for ids in "2,,4" "2," ",2" ""; do
  run "$VMXSIM" runs --db del.db --delete "$ids"
  check_rc "--delete '$ids': an empty item is a usage error" 2
  check_contains "--delete '$ids': ... named" "$err" "--delete '$ids': an empty item in the list of run ids"
done
check_eq "... and nothing was deleted (rows listed)" "$before" "$("$VMXSIM" runs --db del.db --format csv | wc -l)"
run "$VMXSIM" runs --db del.db --delete 2,99
check_rc "--delete of a run that does not exist" 2
check_contains "... names it and deletes nothing" "$err" "no run 99 ('vmxsim runs' lists them); nothing deleted"
check_eq "... run 2 is still there" "4" "$(count runs)"
run "$VMXSIM" runs --db del.db --prune
check_rc "--prune without a filter is refused" 2
check_contains "... and says how to select everything" "$err" "'--older-than 0' selects every run"
run "$VMXSIM" runs --db del.db --prune --trace gone.bin --dry-run
check_rc "--prune --dry-run" 0
check_eq "--dry-run deletes nothing" "4" "$(count runs)"
check_eq "--dry-run says what it would do" "vmxsim: would delete 3 runs from del.db" "$err"
run "$VMXSIM" runs --db del.db --prune --trace gone.bin
check_rc "--prune --trace (matched by content)" 0
check_eq "--prune --trace: only keep.bin's run remains" "5" "$(ids)"
check_eq "a trace without runs goes too" "1" "$(count traces)"
"$VMXSIM" --policy nocache --db del.db keep.bin > /dev/null
sqlite3 del.db "UPDATE runs SET started_at = '2001-01-01 00:00:00' WHERE id = 5"
run "$VMXSIM" runs --db del.db --older-than 30d
check_eq "--older-than lists only the old run" "5" "$(printf '%s\n' "$out" | awk 'NR > 1 { print $1 }')"
run "$VMXSIM" runs --db del.db --prune --older-than 52w
check_rc "--prune --older-than 52w" 0
check_eq "--prune --older-than: the old run went, the new one (id 6 again: SQLite reuses the highest ids) stays" "6" "$(ids)"
run "$VMXSIM" runs --db del.db --older-than 3x
check_rc "--older-than with a bad unit" 2
check_contains "... says the units" "$err" "expected a number followed by s, m, h, d or w"
run "$VMXSIM" runs --db del.db --delete 6 --trace keep.bin
check_rc "--delete with a filter is refused" 2
run "$VMXSIM" compare --db del.db --older-than 1d 1 2
check_rc "--older-than does not apply to compare" 2

# ---- compare: CPU profiles are not mixed unless asked; --run replays what is missing
rm -f cmp.db
"$VMXSIM" --policy nocache --db cmp.db keep.bin > /dev/null
"$VMXSIM" --policy shadowcache --cpu skylake-2019 --db cmp.db keep.bin > /dev/null
run "$VMXSIM" compare --db cmp.db 1 2
check_rc "compare of runs on two CPU profiles is refused" 2
check_contains "... names both profiles and the option" "$err" \
  "run 1 is on CPU profile core2-2007 but run 2 on skylake-2019: their cycles come from different cost tables; --mixed-cpus compares them anyway"
check_eq "... prints no table" "" "$out"
run "$VMXSIM" compare --db cmp.db 1 2 --mixed-cpus
check_rc "compare --mixed-cpus" 0
check_contains "--mixed-cpus: each run's profile in the legend" "$out" "  B: run 2, policy shadowcache, cpu skylake-2019"
run "$VMXSIM" compare --db cmp.db --trace keep.bin
check_rc "compare --trace over every policy refuses mixed profiles too" 2
run "$VMXSIM" compare --db cmp.db --trace keep.bin --policy nocache,prevroots
check_rc "a missing run without --run" 2
check_contains "... says --run replays it" "$err" "'vmxsim compare --run' replays it"
run "$VMXSIM" compare --db cmp.db --trace keep.bin --policy nocache,prevroots,cr3cache --run
check_rc "compare --run" 0
check_contains "--run says what it replayed, on the profile of the stored run" "$err" \
  "vmxsim: compare: replayed keep.bin under prevroots on core2-2007 (run 3 stored in cmp.db)"
check_contains "--run: the replayed runs are compared" "$out" "  C: run 4, policy cr3cache"
check_eq "--run stored them" "4" "$(sqlite3 cmp.db 'SELECT count(*) FROM runs')"
ept_direct=$("$VMXSIM" --policy prevroots --no-db --format json keep.bin | grep '"total_exits"')
check_eq "--run: the stored run equals a batch run" "$ept_direct" "$("$VMXSIM" report 3 --db cmp.db --format json | grep '"total_exits"')"
run "$VMXSIM" compare --db cmp.db --trace keep.bin --policy nocache,prevroots --run
check_rc "compare --run with nothing missing" 0
check_eq "... replays nothing" "" "$err"
run "$VMXSIM" compare --db cmp.db --trace keep.bin --policy shadowcache,ept --cpu skylake-2019 --run
check_rc "compare --run --cpu" 0
check_contains "--run --cpu replays on that profile" "$err" "under ept on skylake-2019"
run "$VMXSIM" compare --db cmp.db --trace nosuch.bin --policy nocache,prevroots --run
check_rc "--run of a trace that is not a file" 2
check_contains "... says so" "$err" "nosuch.bin is not a trace file, so it cannot be replayed"
run "$VMXSIM" compare --db cmp.db 1 3 --run
check_rc "--run without --trace" 2
