# CLI tests for `vmxsim summary`: the xentrace fixture against xenalyze's own summary of it
# (counts per reason, per CR and per I/O port, average cycles and percentiles), the options,
# and a replay under a policy that intercepts what the recording's hypervisor intercepted.
# Sourced by tests/cli/run.sh in a scratch directory; $VMXSIM is the program, $ROOT the repo.

XS="$ROOT/tests/data/xentrace-sample"

run "$VMXSIM" import xentrace "$XS/sample.xentrace" -o sample.trace
check_rc "summary: the fixture imports" 0
check_contains "summary: every exit is measured" "$(cat sample.trace | head -c 2000)" '"measured":2000'
check_contains "summary: nothing left unmapped" "$(cat sample.trace | head -c 2000)" '"exits_unmapped":{}'

# xenalyze's rows as "NAME COUNT AVG P5 P50 P95": reasons, per-CR writes, I/O ports
awk '
  /^Exit reasons:/ { on = 1; next }
  /^Guest interrupt counts:/ { on = 0 }
  /^IO address summary:/ { io = 1; next }
  /^Emulate eip list/ { io = 0 }
  function row(name, i) { gsub(/[{}|]/, " "); n = split($0, f, " ");
    printf "%s %s %s %s %s %s\n", name, f[i], f[i + 3], f[i + 5], f[i + 6], f[i + 7] }
  on && /^ [A-Z_]+ / { row($1, 2) }
  on && /^   cr[0-9] / { row($1 " write", 2) }
  io && /:\[[rw]\]/ { split($1, p, ":"); row("port 0x" p[1] (p[2] == "[w]" ? " out" : " in"), 2) }
' "$XS/xenalyze-summary.txt" | sort > expected.txt
run "$VMXSIM" summary --format csv sample.trace
check_rc "summary: runs on the fixture" 0
printf '%s\n' "$out" | awk -F, '$2 == "reason" || $2 == "cr" || $2 == "port" { print $3, $5, $7, $9, $10, $11 }' \
  | sort > actual.txt
# the rows xenalyze prints (it has no read rows here, vmxsim no others)
check_eq "summary: xenalyze's counts, averages and percentiles per reason, per CR and per I/O port" \
  "$(cat expected.txt)" "$(awk 'NR == FNR { want[$1 " " $2] = 1; next } ($1 " " $2) in want' expected.txt actual.txt)"
check_eq "summary: five reasons, two CRs and four ports compared" "11" "$(wc -l < expected.txt | tr -d ' ')"

run "$VMXSIM" summary sample.trace
check_contains "summary: table reads like xenalyze" "$out" " CR_ACCESS                     1199   0.001173   9.20%      2348 {     952|    2330|    3847}"
check_contains "summary: share of the recording's whole span" "$out" "30596694 cycles recorded"
check_contains "summary: address spaces" "$out" "by address space (CR3), most time first:"
check_eq "summary: MSR breakdown" "102 1689" "$(printf '%s\n' "$out" | awk '$1 == "msr" && $2 == "0xc0000080" { print $3, $6 }')"
check_eq "summary: CPUID leaves" "33 900" "$(printf '%s\n' "$out" | awk '$1 == "leaf" && $2 == "0x7" { print $3, $6 }')"

run "$VMXSIM" summary --sort count --format json sample.trace
flat=$(printf '%s' "$out" | tr -d ' \t\n')
check_contains "summary: JSON by count, most first" "$flat" '"exits":{"CR_ACCESS":{"count":1199'
check_contains "summary: JSON max and stddev" "$flat" '"max":49988,"stddev":12618.9'

run "$VMXSIM" summary --vcpu 1 sample.trace
check_rc "summary: a vCPU the trace does not have is a usage error (not an empty summary)" 2
check_contains "summary: --vcpu: the vCPUs there are named" "$err" "--vcpu 1: domain 1 has vCPUs 0"

run "$VMXSIM" summary --interval 5ms sample.trace
check_contains "summary: --interval heading" "$out" "exits per interval of 5000 us:"
total=$(printf '%s\n' "$out" | awk '/^exits per interval/ { on = 1; next } on && $1 ~ /^[0-9.]+$/ { for (i = 2; i <= NF; i++) s += $i } END { print s }')
check_eq "summary: the intervals hold every exit" "2000" "$total"
run "$VMXSIM" summary --interval 500ev --format csv sample.trace
check_contains "summary: intervals of events in CSV" "$out" "measured,interval,CR_ACCESS,0.000,"

run "$VMXSIM" summary --interval 3parsecs sample.trace
check_rc "summary: bad --interval is a usage error" 2
check_contains "summary: bad --interval message" "$err" "--interval 3parsecs: expected a positive number with us (default), ms, s or ev (events)"
run "$VMXSIM" summary --sort size sample.trace
check_rc "summary: bad --sort is a usage error" 2
printf 'cpuid 0x1\nhlt\n' > plain.txt
"$VMXSIM" trace asm plain.txt -o plain.bin
run "$VMXSIM" summary plain.bin
check_rc "summary: a trace without measurements is bad input" 3
check_contains "summary: says why" "$err" "plain.bin: no measured exits"

# Replayed under a policy that intercepts what this recording's hypervisor intercepted (shadow
# paging: CR3 writes; the full CR4 mask: PGE toggles; MSR bitmaps without these MSRs; CPUID, HLT
# and I/O exit anyway), the simulated exits by reason are xenalyze's.
run "$VMXSIM" --no-db --policy shadowcache --format csv sample.trace
sim=$(printf '%s\n' "$out" | awk -F, '$5 == "exit" { print $6, $8 }' | sort)   # after trace,workload,policy,cpu
xen=$(awk '$1 ~ /^[A-Z_]+$/ { print $1, $2 }' expected.txt | sort)
check_eq "replay: exits by reason equal xenalyze's" "$xen" "$sim"

run "$VMXSIM" --no-db --policy shadowcache sample.trace
check_contains "replay: measured beside simulated" "$out" "measured (the recording) beside simulated (policy shadowcache, cpu core2-2007):"
check_eq "replay: a row has measured and simulated count, average and their ratios" \
  "905 2735 905 1.000" "$(printf '%s\n' "$out" | awk '$1 == "cr3" && $2 == "write" && NF == 8 { print $3, $4, $5, $7 }')"
run "$VMXSIM" --no-db --policy shadowcache --format json sample.trace
flat=$(printf '%s' "$out" | tr -d ' \t\n')
check_contains "replay: JSON carries the measured exits" "$flat" '"measured":{"exits":{"CPUID":{"count":202,"cycles":180959,"avg":895'
check_contains "replay: JSON carries the simulated views" "$flat" '"views":{"exits":{"CPUID":{"count":202'
run "$VMXSIM" --no-db --policy shadowcache --views "$ROOT/traces/lat_ctx-2p.bin"
check_contains "run --views: simulated breakdowns" "$out" "views of the simulated exits:"
check_contains "run --views: by address space" "$out" " cr3 0x10000000"
run "$VMXSIM" --no-db --policy shadowcache --interval 1ms "$ROOT/traces/lat_ctx-2p.bin"
check_contains "run --interval: simulated series" "$out" "simulated exits per interval of 1000 us:"
run "$VMXSIM" --no-db --policy shadowcache "$ROOT/traces/lat_ctx-2p.bin"
check_not_contains "run: a trace without measurements prints no views" "$out" "views of the simulated"

# stored runs keep both sides; compare shows what was measured beside each run
"$VMXSIM" --db v.db --cpu skylake-2019 --policy shadowcache sample.trace >/dev/null
"$VMXSIM" --db v.db --cpu skylake-2019 --policy ept sample.trace >/dev/null
run "$VMXSIM" report --db v.db 1
check_contains "report: a stored run keeps the measured exits" "$out" "measured (the recording) beside simulated (policy shadowcache, cpu skylake-2019)"
check_eq "store: both sides' rows stored" "measured simulated" "$(sqlite3 v.db "SELECT group_concat(source, ' ') FROM (SELECT DISTINCT source FROM views WHERE run_id = 1 ORDER BY source)")"
run "$VMXSIM" compare --db v.db 1 2
check_contains "compare: what the recording measured" "$out" "what the recording measured, beside each run's simulated average per exit:"
check_eq "compare: CR_ACCESS measured beside each run" "1199 2348 2264 0.964 1645 0.701" \
  "$(printf '%s\n' "$out" | awk '/^what the recording measured/ { on = 1 } on && $1 == "CR_ACCESS" { $1 = ""; print substr($0, 2) }')"
run "$VMXSIM" compare --db v.db --format json 1 2
flat=$(printf '%s' "$out" | tr -d ' \t\n')
check_contains "compare: JSON carries the measured exits" "$flat" '"measured":{"CPUID":{"count":202,"avg":895,"simulated_avg":[{"avg":2148},{"avg":1800}]}'

# recordings are read where traces are: run and summary import them as they replay them, through
# a pipe, with no file between (sim/import/import_stream.c), so no temporary directory is needed
TMPDIR=$PWD/no-such-dir; export TMPDIR
run "$VMXSIM" --no-db --policy shadowcache -q "$XS/sample.xentrace"
check_rc "run: a recording needs no temporary file (TMPDIR missing)" 0
check_contains "run: ... and replays it" "$out" "Total exits: 2000,"
run "$VMXSIM" summary "$XS/sample.xentrace"
check_rc "summary: a recording needs no temporary file (TMPDIR missing)" 0
unset TMPDIR
# summary reads a recording in one pass (sim/import/import_stream.c, import_feed): its records go
# to the views as they are converted, each vCPU's initial registers before its first record.  It
# prints what a summary of the same recording imported first prints, byte for byte (the trace's
# name aside), in every format and with a time series in microseconds (cut as it is read) and in
# events (read as a trace)
for rec in "$XS/sample.xentrace" "$ROOT/traces/recorded/xentrace-excerpt.bin" \
           "$ROOT/traces/recorded/kvm-ftrace-excerpt.txt" "$ROOT/traces/recorded/kvm-ftrace-shadow.txt"; do
  name=$(basename "$rec")
  case $name in *.txt) format=kvm-ftrace ;; *) format=xentrace ;; esac
  run "$VMXSIM" import "$format" "$rec" -o one-pass.bin
  check_rc "import $name (to compare with)" 0
  for opts in "" "--format json" "--format csv" "--interval 50us" "--interval 100ev --vcpu 0" "--sort time --top 2"; do
    run "$VMXSIM" summary $opts "$rec"
    check_rc "summary $opts $name: read in one pass" 0
    got=$out
    run "$VMXSIM" summary $opts one-pass.bin
    check_eq "summary $opts $name: one pass prints what the imported trace's summary prints" \
      "$(printf '%s\n' "$out" | sed "s#one-pass.bin#$rec#g")" "$got"
  done
done
TMPDIR=$PWD/no-such-dir; export TMPDIR
run "$VMXSIM" summary "$ROOT/traces/recorded/kvm-ftrace-excerpt.txt"
check_rc "summary: one pass needs no temporary file either" 0
unset TMPDIR
# ... but one on standard input or a pipe can be read once, and is imported first
run sh -c "'$VMXSIM' --no-db -q --policy shadowcache --input-format kvm-ftrace - < '$ROOT/traces/recorded/kvm-ftrace-shadow.txt'"
check_contains "run: a recording on standard input" "$out" "400 VM exits"
run sh -c "cat '$ROOT/traces/recorded/kvm-ftrace-shadow.txt' | '$VMXSIM' summary --input-format kvm-ftrace -"
check_rc "summary: a recording through a pipe" 0
check_contains "summary: ... read whole" "$out" "400 measured VM exits"
run sh -c "'$VMXSIM' --no-db -q --policy shadowcache - < '$ROOT/traces/recorded/kvm-ftrace-shadow.txt'"
check_rc "run: a recording on standard input without --input-format is bad input" 3
check_contains "run: ... and the message says what to give" "$err" "a recording on standard input or a pipe needs --input-format"
# a vmxsim trace through a FIFO (as <(zcat trace.bin.gz) gives one) is not looked at for a
# recording's format first: that would take its head away from the replay
mkfifo trace-fifo
cat "$ROOT/traces/lat_ctx-2p.bin" > trace-fifo &
run "$VMXSIM" --no-db -q --policy shadowcache trace-fifo
wait
check_rc "run: a vmxsim trace through a FIFO" 0
check_contains "run: ... replayed from its first record" "$out" "trace trace-fifo (lat_ctx"
# ... and opened once: the replay used to open it again to read it, which waits for ever
# when the writer has finished by then (a loaded machine: the check above hung)
if command -v strace >/dev/null 2>&1 && strace -o /dev/null true 2>/dev/null; then
  # LeakSanitizer cannot run under ptrace: a sanitizer build's leak check is off for these two
  no_lsan="ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
  cat "$ROOT/traces/lat_ctx-2p.bin" > trace-fifo &
  run env "$no_lsan" strace -f -e trace=open,openat -o opens.txt "$VMXSIM" --no-db -q --policy shadowcache trace-fifo
  wait
  check_rc "run: a FIFO, under strace" 0
  check_eq "run: ... is opened once" 1 "$(grep -c '"trace-fifo"' opens.txt)"
  cat "$ROOT/traces/recorded/kvm-ftrace-shadow.txt" > trace-fifo &
  run env "$no_lsan" strace -f -e trace=open,openat -o opens.txt "$VMXSIM" --no-db -q --policy shadowcache \
    --input-format kvm-ftrace trace-fifo
  wait
  check_contains "run: a recording through a FIFO, under strace" "$out" "400 VM exits"
  check_eq "run: ... is opened once" 1 "$(grep -c '"trace-fifo"' opens.txt)"
else
  skip "strace missing or not allowed to trace: the FIFO's opens are not counted"
fi
mkdir scratch
TMPDIR=$PWD/scratch; export TMPDIR
run "$VMXSIM" summary --format csv "$XS/sample.xentrace"
check_eq "summary: a xentrace recording directly" "$(cat actual.txt)" \
  "$(printf '%s\n' "$out" | awk -F, '$2 == "reason" || $2 == "cr" || $2 == "port" { print $3, $5, $7, $9, $10, $11 }' | sort)"
run "$VMXSIM" --no-db --policy shadowcache "$XS/sample.xentrace"
check_contains "run: a recording directly, named as given" "$out" "trace $XS/sample.xentrace (sample, 1 vCPU"
check_contains "run: with the measured side" "$out" "measured (the recording) beside simulated"
run "$VMXSIM" --no-db --policy shadowcache --input-format kvm-ftrace "$ROOT/traces/recorded/kvm-ftrace-shadow.txt"
check_contains "run: --input-format" "$out" "400 VM exits"
run "$VMXSIM" --no-db --policy shadowcache --input-format pcap "$XS/sample.xentrace"
check_rc "run: bad --input-format is a usage error" 2
check_eq "run: no scratch directory left behind" "" "$(ls scratch)"
unset TMPDIR

# ---- the metadata's numbers are read in their range, never cast out of it ----
"$VMXSIM" trace dump sample.trace -o sample.txt
for m in '"span_cycles":-5|"span_cycles": -5 is not a whole number of cycles, 0 to 2^63' \
         '"span_cycles":1e300|"span_cycles": 1e+300 is not a whole number of cycles' \
         '"span_cycles":"long"|"span_cycles": "long" is not a whole number' \
         '"cpu_ghz":-1,"span_cycles":1|"cpu_ghz": -1 is not a clock above 0 and at most 10 GHz (or give --cpu-ghz)' \
         '"cpu_ghz":0,"span_cycles":1|"cpu_ghz": 0 is not a clock above 0 and at most 10 GHz' \
         '"cpu_ghz":10.5,"span_cycles":1|"cpu_ghz": 10.5 is not a clock above 0 and at most 10 GHz' \
         '"cpu_ghz":1e300,"span_cycles":1|"cpu_ghz": 1e+300 is not a clock'; do
  member=${m%%|*} want=${m#*|}
  sed "/^@meta/s/\"span_cycles\":[0-9]*/$member/" sample.txt > bad-meta.txt
  "$VMXSIM" trace asm bad-meta.txt -o bad-meta.trace
  run "$VMXSIM" summary bad-meta.trace
  check_rc "summary: metadata $member is refused as bad input" 3
  check_contains "summary: metadata $member: file, byte, member and range" "$err" "bad-meta.trace: byte 64: metadata $want"
done
sed '/^@meta/s/"span_cycles":/"cpu_ghz":-1,"span_cycles":/' sample.txt > ghz-meta.txt
"$VMXSIM" trace asm ghz-meta.txt -o ghz-meta.trace
run "$VMXSIM" summary --cpu-ghz 3 ghz-meta.trace
check_rc "summary: --cpu-ghz overrides the metadata's clock, not read then" 0
# every clock has one range, (0, 10] GHz: the metadata's, summary's and the importers' --cpu-ghz
sed '/^@meta/s/"span_cycles"/"cpu_ghz":10,"span_cycles"/' sample.txt > top-meta.txt
"$VMXSIM" trace asm top-meta.txt -o top-meta.trace
run "$VMXSIM" summary top-meta.trace
check_rc "summary: metadata cpu_ghz 10, the top of the range, is read" 0
check_contains "summary: metadata cpu_ghz 10 is the clock" "$out" "at 10.00 GHz)"
run "$VMXSIM" summary --cpu-ghz 10.5 sample.trace
check_rc "summary: --cpu-ghz 10.5 is refused" 2
check_contains "summary: --cpu-ghz 10.5: option and range" "$err" "--cpu-ghz 10.5: expected a number of GHz above 0 and at most 10"
run "$VMXSIM" import kvm-ftrace "$ROOT/traces/recorded/kvm-ftrace-shadow.txt" --cpu-ghz 11 -o ghz.bin
check_rc "import: --cpu-ghz 11 is refused" 2
check_contains "import: --cpu-ghz 11: option and range" "$err" "import: --cpu-ghz '11' is not a number of GHz above 0 and at most 10"
check_eq "import: a refused --cpu-ghz writes nothing" "" "$(ls ghz.bin 2>/dev/null)"
run "$VMXSIM" import kvm-ftrace "$ROOT/traces/recorded/kvm-ftrace-shadow.txt" --cpu-ghz 10 -o ghz.bin
check_rc "import: --cpu-ghz 10 is taken" 0
check_contains "import: --cpu-ghz 10 is recorded in the metadata" "$("$VMXSIM" trace info ghz.bin)" '"cpu_ghz": 10'
sed '/^@meta/s/"span_cycles":[0-9]*/"cpu_ghz":1e-9,"span_cycles":1/' sample.txt > slow-meta.txt
"$VMXSIM" trace asm slow-meta.txt -o slow-meta.trace
run "$VMXSIM" summary --interval 10us slow-meta.trace
check_rc "summary: an interval of less than one cycle is refused" 2
check_contains "summary: less than one cycle: says so" "$err" "--interval 10us at 1e-09 GHz is less than one cycle"
run "$VMXSIM" summary --interval 18446744073709551615s sample.trace
check_rc "summary: an interval above 10^12 us is refused" 2
check_contains "summary: --interval's range" "$err" "more than 1000000000000 us (11.6 days): expected 1us..1000000s, or N ev"
run "$VMXSIM" --policy nocache --interval 1000001s --no-db sample.trace
check_rc "run: --interval's range too" 2
# a replay's time series at a profile's clock: one of less than a cycle is refused, not dropped
sed 's/"value": 2.4,/"value": 1e-9,/' "$ROOT/models/cpus/core2-2007.json" > slow-clock.json
run "$VMXSIM" --policy nocache --cpu ./slow-clock.json --interval 10us --no-db sample.trace
check_rc "run: an interval of less than one cycle at the profile's clock is refused" 2
check_contains "run: less than one cycle: names the profile and its clock" "$err" "--interval 10us is less than one cycle at CPU profile"

# a file that is neither a trace nor a recording: the message says what was looked for and how to
# name the format (it used to be only the trace reader's "bad magic")
printf 'garbage\nmore garbage\n' > neither.txt
for cmd in "summary" "--no-db"; do
  run "$VMXSIM" $cmd neither.txt
  check_rc "$cmd: neither a trace nor a recording is bad input" 3
  check_contains "$cmd: ... and the message names what was looked for" "$err" "its first 64 KiB hold no perf script events or kvm_exit events; --input-format names the recording's format"
done

# --units us: perf kvm stat report's columns, times in microseconds at the recording's clock
run "$VMXSIM" summary --units us "$XS/sample.xentrace"
check_rc "summary --units us" 0
check_contains "--units us: perf kvm stat's heading" "$out" " VM-EXIT                    Samples  Samples%   Time%     Min Time     Max Time     Avg time"
# CPUID: 202 of 2000 exits; 895 cycles on average at 2.4 GHz = 0.37 us; min 604, max 1200 cycles
check_contains "--units us: a row (count, its share, time share, min, max, avg in us, spread)" "$out" \
  " CPUID                          202    10.10%   0.59%       0.25us       0.50us       0.37us ( +-  19.61% )"
run "$VMXSIM" summary --units s "$XS/sample.xentrace"
check_rc "--units s is refused" 2
check_contains "... naming what it takes" "$err" "--units 's': cycles (the default) or us"

# an MSR's and an exception's name beside its number (SDM names; a vector above 31 has none)
run "$VMXSIM" summary "$ROOT/traces/recorded/kvm-ftrace-shadow.txt"
check_eq "the MSR's name beside msr 0x6e0" "IA32_TSC_DEADLINE" "$(printf '%s\n' "$out" | awk '$1 == "msr" && $2 == "0x6e0" { print $NF }')"
check_eq "the exception's mnemonic beside vector 14" "#PF" "$(printf '%s\n' "$out" | awk '$1 == "vector" && $2 == "14" { print $NF }')"
run "$VMXSIM" summary --format json "$ROOT/traces/recorded/kvm-ftrace-shadow.txt"
check_contains "... and in JSON as label" "$(printf '%s' "$out" | tr -d ' \t\n')" '"stddev":189.5,"label":"IA32_TSC_DEADLINE"'

# --vcpu N of a trace with fewer vCPUs: said, not an empty summary with exit 0
run "$VMXSIM" summary --vcpu 1 "$XS/sample.xentrace"
check_rc "--vcpu 1 of a one-vCPU recording is a usage error" 2
check_contains "... saying which vCPU there is" "$err" "--vcpu 1: domain 1 has vCPUs 0"
run "$VMXSIM" summary --vcpu 5 "$ROOT/traces/recorded/kvm-ftrace-shadow.txt"
check_rc "--vcpu 5 of a two-vCPU recording" 2
check_contains "... saying which there are" "$err" "--vcpu 5: the trace has vCPUs 0 to 1"
# one meaning per short option: -s is --set in run, so summary has none for --sort
run "$VMXSIM" summary -s time "$XS/sample.xentrace"
check_rc "summary -s is not an option" 2
