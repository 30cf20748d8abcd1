# CLI tests for read-only use of the results database: runs, report, compare (without
# --run) and the chart scripts read a write-protected file, or one in a write-protected
# directory, never change it and never migrate it; an older schema is named with the
# command that migrates it.  Root writes through file modes, so as root the readers run
# as nobody.  Sourced by tests/cli/run.sh in a scratch directory; $VMXSIM is the program.

q() { sqlite3 "$1" "$2"; }
sum() { cksum < "$1"; }

"$VMXSIM" gen lat_ctx --procs 2 --iters 20 -o t.bin
mkdir db
"$VMXSIM" --policy nocache --db db/r.db t.bin > /dev/null
"$VMXSIM" --policy shadowcache --db db/r.db t.bin > /dev/null
check_eq "setup: a WAL database with two runs" "wal 2" "$(q db/r.db 'PRAGMA journal_mode') $(q db/r.db 'SELECT count(*) FROM runs')"

if [ "$(id -u)" = 0 ]; then
  chmod 755 .
  as_user() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
else
  as_user() { "$@"; }
fi
# The unprivileged user may not reach the tree (a clone under a 0700 home, as /root
# is): it then runs copies of the program and the chart scripts made here.
PLOT=$ROOT/scripts/plot/plot.sh
if ! as_user test -r "$PLOT" || ! as_user test -r "$VMXSIM"; then
  mkdir tools && cp "$VMXSIM" tools/vmxsim && cp -R "$ROOT/scripts/plot" tools/plot && chmod -R a+rX tools
  VMXSIM=$T/tools/vmxsim PLOT=$T/tools/plot/plot.sh
fi
if ! as_user "$VMXSIM" --version > /dev/null 2>&1; then
  skip "cannot run vmxsim as an unprivileged user here"
  return 0
fi

# readers LABEL: every read-only command on db/r.db, as the unprivileged user
readers() {
  before=$(sum db/r.db)
  run as_user "$VMXSIM" runs --db db/r.db
  check_rc "$1: runs exits 0" 0
  check_contains "$1: runs lists the runs" "$out" "shadowcache"
  run as_user "$VMXSIM" report --last --db db/r.db
  check_rc "$1: report --last exits 0" 0
  check_contains "$1: report --last prints the run" "$out" "policy shadowcache"
  run as_user "$VMXSIM" report 1 --db db/r.db --format json
  check_rc "$1: report 1 exits 0" 0
  run as_user "$VMXSIM" compare 1 2 --db db/r.db
  check_rc "$1: compare exits 0" 0
  check_contains "$1: compare prints both runs" "$out" "B: run 2"
  run as_user "$VMXSIM" compare --trace t.bin --db db/r.db
  check_rc "$1: compare --trace exits 0" 0
  if command -v gnuplot > /dev/null && command -v sqlite3 > /dev/null; then
    mkdir -p charts && chmod 777 charts
    run as_user "$PLOT" exits --db db/r.db --trace t.bin -o charts/e
    check_rc "$1: plot.sh exits 0" 0
    check_eq "$1: plot.sh draws the chart" "yes" "$([ -s charts/e.png ] && echo yes || echo no)"
    check_eq "$1: plot.sh leaves no temporary file" "" "$(ls -A charts | grep vmxsim-tmp)"
  else
    skip "plot.sh: gnuplot or sqlite3 missing"
  fi
  check_eq "$1: the database file is unchanged" "$before" "$(sum db/r.db)"
}

# ---- the file is read-only (mode 0444), its directory writable ----
chmod 444 db/r.db
chmod 777 db
readers "read-only file"
check_eq "read-only file: no -shm or -wal file appeared beside it" "r.db" "$(ls -A db)"

# ---- the directory is read-only too: no -shm can be made, the file is read as immutable ----
rm -f db/r.db-shm db/r.db-wal
chmod 555 db
readers "read-only directory"
check_eq "read-only directory: no -shm or -wal file appeared" "r.db" "$(ls -A db)"

# ---- storing into it fails cleanly (exit 5, the result printed) ----
run as_user "$VMXSIM" --policy cr3cache --db db/r.db t.bin
check_rc "storing into a read-only database: exit 5" 5
check_contains "storing into a read-only database: the result is printed" "$out" "VM exits"
chmod 755 db

# ---- an older schema: named, not migrated, also where it could be written (SQLITE_OPEN_READONLY) ----
sqlite3 old.db 'PRAGMA application_id = 1986885747; PRAGMA user_version = 2; CREATE TABLE traces (id INTEGER)'
before=$(sum old.db)
for cmd in "runs" "report --last" "compare 1 2"; do
  run "$VMXSIM" $cmd --db old.db
  check_rc "older schema, $cmd: exit 5" 5
  check_contains "older schema, $cmd: names the command that migrates it" "$err" \
    "results database old.db: schema version 2, this vmxsim needs 4; run 'vmxsim migrate --db old.db' to upgrade it"
done
check_eq "older schema: the file is not migrated by the readers" "$before" "$(sum old.db)"
check_eq "older schema: still version 2" "2" "$(q old.db 'PRAGMA user_version')"
run "$VMXSIM" --help
check_contains "--help lists migrate" "$out" "  migrate "
run "$VMXSIM" migrate --help
check_contains "migrate --help teaches by example" "$out" "vmxsim migrate --db results/vmxsim.db"

# ---- the user's own database, write-protected for a while: reading it leaves nothing
# behind that breaks the next store (SQLite used to make read-only -wal and -shm files) ----
mkdir own && chmod 777 own
[ "$(id -u)" = 0 ] && chown 65534 own
as_user "$VMXSIM" --policy nocache --db own/k.db t.bin > /dev/null
as_user chmod a-w own/k.db
run as_user "$VMXSIM" runs --db own/k.db
check_rc "own write-protected database: runs exits 0" 0
if command -v gnuplot > /dev/null && command -v sqlite3 > /dev/null; then
  run as_user "$PLOT" exits --db own/k.db --trace t.bin -o own/e
  check_rc "own write-protected database: plot.sh exits 0" 0
  rm -f own/e.*
fi
check_eq "own write-protected database: reading it leaves no -wal or -shm" "k.db" "$(ls -A own)"
as_user chmod u+w own/k.db
run as_user "$VMXSIM" --policy shadowcache --db own/k.db t.bin
check_rc "own database writable again: the next store succeeds" 0
check_eq "own database writable again: two runs" "2" "$(q own/k.db 'SELECT count(*) FROM runs')"

# ---- what is read-only is named: -wal and -shm files left read-only by another program ----
if command -v sqlite3 > /dev/null; then
  as_user chmod a-w own/k.db
  as_user sqlite3 -readonly own/k.db 'SELECT count(*) FROM runs' > /dev/null
  as_user chmod u+w own/k.db
  if [ -e own/k.db-wal ] && ! as_user test -w own/k.db-wal; then
    run as_user "$VMXSIM" --policy cr3cache --db own/k.db t.bin
    check_rc "a read-only -wal beside a writable database: exit 5" 5
    # the -wal, or the -shm when a reader's close had removed the empty -wal
    case $err in
      *"results database own/k.db: cannot write it: own/k.db-"[ws][ah][lm]" is read-only for this user"*)
        pass "a read-only -wal beside a writable database: names the read-only file" ;;
      *) fail "a read-only -wal beside a writable database: names the read-only file" \
           "expected: results database own/k.db: cannot write it: own/k.db-wal (or -shm) is read-only for this user" \
           "actual:   $err" ;;
    esac
    check_contains "a read-only -wal beside a writable database: the result is printed" "$out" "VM exits"
  else
    skip "this sqlite3 left no read-only -wal file to name"
  fi
fi

# ---- an empty file (left by an older vmxsim killed while creating it) ----
: > empty.db
run "$VMXSIM" runs --db empty.db
check_rc "an empty database file: runs exits 5" 5
check_contains "an empty database file: says so" "$err" "results database empty.db is empty (0 bytes): no run was ever stored in it"
run "$VMXSIM" --policy nocache --db empty.db t.bin
check_rc "an empty database file: a store makes it a database" 0
check_eq "an empty database file: one run after the store" "1" "$(q empty.db 'SELECT count(*) FROM runs')"

# ---- a read-only file system: reading works, writing says read-only (root: a tmpfs) ----
mkdir rofs
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=4m tmpfs rofs 2> /dev/null; then
  "$VMXSIM" --policy nocache --db rofs/r.db t.bin > /dev/null
  printf '{"name": "ro", "traces": ["%s"], "policies": ["nocache", "shadowcache"]}\n' "$T/t.bin" > plan.json
  "$VMXSIM" sweep plan.json -j 1 -q --db rofs/s.db > /dev/null
  mount -o remount,ro rofs
  run "$VMXSIM" runs --db rofs/r.db
  check_rc "read-only file system: runs exits 0" 0
  run "$VMXSIM" sweep plan.json --dry-run --db rofs/s.db
  check_rc "read-only file system: sweep --dry-run exits 0" 0
  check_contains "read-only file system: sweep --dry-run finds the stored runs" "$out" "2 stored in rofs/s.db, 0 to run"
  run "$VMXSIM" merge merged.db rofs/s.db
  check_rc "read-only file system: merge from it exits 0" 0
  check_eq "read-only file system: merge copied both runs" "2" "$(q merged.db 'SELECT count(*) FROM runs')"
  run "$VMXSIM" runs --prune --older-than 0 --db rofs/r.db
  check_rc "read-only file system: runs --prune exits 5" 5
  check_contains "read-only file system: runs --prune says read-only" "$err" \
    "results database rofs/r.db: cannot write it: rofs/r.db is on a read-only file system"
  run "$VMXSIM" --policy shadowcache --db rofs/r.db t.bin
  check_rc "read-only file system: a store exits 5" 5
  check_contains "read-only file system: a store says read-only" "$err" "rofs/r.db is on a read-only file system"
  check_eq "read-only file system: nothing new in it" "r.db s.db" "$(ls -A rofs | tr '\n' ' ' | sed 's/ $//')"
  umount rofs
else
  skip "a read-only file system needs root and a tmpfs mount"
fi
