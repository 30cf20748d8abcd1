# CLI tests for a full disk (a 1 MiB tmpfs; needs root, skipped elsewhere): a store
# that does not fit exits 5 with the result printed and the database intact; a new
# database that does not fit leaves no file; gen, import, trace asm and a sweep's
# trace cache exit 74 (an output error, not bad input) naming the file the user gave
# and the reason, and leave neither a partial output nor a temporary file.  (An I/O error during a store: tests/unit/
# test_store.c, with a failing SQLite VFS.)  Sourced by tests/cli/run.sh.

mkdir full
if [ "$(id -u)" != 0 ] || ! mount -t tmpfs -o size=1m tmpfs full 2>/dev/null; then
  skip "a full disk needs root and a tmpfs mount"
  return 0
fi
leftovers() { l=$(ls -A full | grep -v '^fill$' | tr '\n' ' '); echo "${l:-none}"; }

"$VMXSIM" gen lat_ctx --procs 2 --iters 50 -o t.bin
"$VMXSIM" --policy nocache --db full/r.db t.bin > /dev/null
dd if=/dev/zero of=full/fill bs=4k 2>/dev/null      # fills what is left
sync

run "$VMXSIM" --policy shadowcache --db full/r.db t.bin
check_rc "store on a full disk: exit 5" 5
# (SQLite may fail first on the WAL index, "cannot open: disk I/O error (No space left on
# device)", or inside the transaction, "database or disk is full (no space left on the device)")
check_contains "store on a full disk: names the database" "$err" "results database full/r.db: "
check_contains "store on a full disk: says why" "$err" "o space left on"
check_contains "store on a full disk: the result is printed" "$out" "VM exits"

run "$VMXSIM" gen lat_ctx --procs 2 --iters 2000 -o full/g.bin
check_rc "gen -o on a full disk: exit 74 (output error)" 74
check_contains "gen -o on a full disk: names the output given" "$err" "full/g.bin: "
check_not_contains "gen -o on a full disk: not its temporary file" "$err" "vmxsim-tmp"
check_contains "gen -o on a full disk: names the file and the reason" "$err" "No space left on device"
check_contains "gen -o on a full disk: names the output" "$err" "g.bin"
check_eq "gen -o on a full disk: no partial output, no temporary file" "r.db r.db-shm r.db-wal " "$(leftovers)"

run "$VMXSIM" import perf-script "$ROOT/traces/recorded/perf-messaging.txt.gz" -o full/i.bin
check_rc "import -o on a full disk: exit 74 (output error)" 74
check_contains "import -o on a full disk: names the output given" "$err" "full/i.bin: "
check_not_contains "import -o on a full disk: not its temporary file" "$err" "vmxsim-tmp"
check_contains "import -o on a full disk: names the reason" "$err" "No space left on device"
check_eq "import -o on a full disk: no partial output, no temporary file" "r.db r.db-shm r.db-wal " "$(leftovers)"

"$VMXSIM" trace dump t.bin > t.txt
run "$VMXSIM" trace asm t.txt -o full/a.bin
check_rc "trace asm -o on a full disk: exit 74 (output error)" 74
check_contains "trace asm -o on a full disk: names the output given" "$err" "full/a.bin: "
check_not_contains "trace asm -o on a full disk: not its temporary file" "$err" "vmxsim-tmp"
check_contains "trace asm -o on a full disk: names the reason" "$err" "No space left on device"
check_eq "trace asm -o on a full disk: no partial output, no temporary file" "r.db r.db-shm r.db-wal " "$(leftovers)"

run "$VMXSIM" --policy nocache --db full/new.db t.bin
check_rc "a new database on a full disk: exit 5" 5
check_contains "a new database on a full disk: says why" "$err" "o space left on"
check_eq "a new database on a full disk: no file left (not even an empty one)" "r.db r.db-shm r.db-wal " "$(leftovers)"

printf '{"name": "full", "traces": [{"generator": "lat_ctx", "params": {"procs": 2, "iters": 3000}}], "policies": ["nocache"]}\n' > plan.json
run "$VMXSIM" sweep plan.json -j 1 -q --cache full/cache --db sweep.db
check_rc "a sweep whose trace cache is on a full disk: exit 74" 74
check_contains "a sweep on a full disk: says why" "$err" "No space left on device"

rm -f full/fill
check_eq "after the full disk: the database is intact, with its earlier run" "ok 1" \
  "$(sqlite3 full/r.db 'PRAGMA integrity_check' 2>&1) $(sqlite3 full/r.db 'SELECT count(*) FROM runs' 2>&1)"
run "$VMXSIM" --policy shadowcache --db full/r.db t.bin
check_rc "with space again, the store succeeds" 0
check_eq "with space again: two runs" "2" "$(sqlite3 full/r.db 'SELECT count(*) FROM runs')"
umount full
