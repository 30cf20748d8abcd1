# `vmxsim reproduce`: progress per experiment and run on standard error, results in a
# database of their own (not the user's vmxsim.db), --no-db, --quiet.

xp=xen-pv-syscalls,debugreg-2009

run "$VMXSIM" reproduce --quick --only $xp --progress
check_rc "reproduce --quick --progress" 0
check_contains "tables on stdout" "$out" "== xen-pv-syscalls:"
check_contains "progress names the experiment and the trace it generates" "$err" \
  "vmxsim: reproduce: [1/2] xen-pv-syscalls: generating 00-syscalls.bin: syscalls --count 200 --mode hvm"
check_contains "progress names each run" "$err" \
  "vmxsim: reproduce: [2/2] debugreg-2009: run 2: 02-cpuid.bin under shadowcache+lazydr on nehalem-2009"
check_contains "each experiment ends with its runs and time" "$err" "vmxsim: reproduce: [2/2] debugreg-2009: 5 runs in"
check_contains "the end says where the runs went" "$err" "; runs stored in vmxsim-reproduce.db"
check_not_contains "progress stays off stdout" "$out" "vmxsim: reproduce:"
[ -f vmxsim-reproduce.db ] && pass "results in vmxsim-reproduce.db" || fail "results in vmxsim-reproduce.db" "$(ls)"
[ ! -e vmxsim.db ] && pass "the user's vmxsim.db is left alone" || fail "the user's vmxsim.db is left alone"
check_eq "10 runs stored" "10" "$(sqlite3 vmxsim-reproduce.db 'SELECT count(*) FROM runs')"

run "$VMXSIM" reproduce --quick --only $xp
check_rc "reproduce without a terminal" 0
check_eq "no progress when standard error is not a terminal" "" "$err"
run "$VMXSIM" reproduce --quick --only $xp --db mine.db --quiet --progress
check_eq "--quiet wins" "" "$err"
check_eq "--db FILE" "10" "$(sqlite3 mine.db 'SELECT count(*) FROM runs')"
run "$VMXSIM" reproduce --quick --only debugreg-2009 --no-db
check_eq "--no-db: nothing new stored" "20" "$(sqlite3 vmxsim-reproduce.db 'SELECT count(*) FROM runs')"
run "$VMXSIM" reproduce --help
check_contains "--help names the default database" "$out" "default vmxsim-reproduce.db"
check_contains "--help documents --quiet" "$out" "-q, --quiet"
