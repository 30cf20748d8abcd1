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
    run as_user "$ROOT/scripts/plot/plot.sh" exits --db db/r.db --trace t.bin -o charts/e
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
