# CLI tests for `vmxsim import`: committed recordings against counts computed independently
# with awk, the pipe recording's CR3 exits per switch, bad input of each format, a live recording.
# Sourced by tests/cli/run.sh in a scratch directory; $VMXSIM is the program, $ROOT the repo.

REC="$ROOT/traces/recorded"
RECORD="$ROOT/workloads/record/record.sh"

# jnum KEY: the integer after "KEY": in $flat (0 when absent)
jnum() { v=$(printf '%s' "$flat" | sed -n "s/.*\"$1\":\([0-9][0-9]*\).*/\1/p"); echo "${v:-0}"; }

# expect_counts FILE.txt: "cr3w syscall sysret touch marks vcpus" computed from the perf script
# text by the rules of workloads/record/README.md, written again here in awk: per CPU, the address
# space loaded changes when a sched_switch names, or a line comes from, a task of another process
# (idle and kernel threads keep it); a tlb_flush reloads it unless it is the flush of the switch
# that just loaded it (reason 0) or only reports IPIs (reason > 3).
expect_counts() {
  awk '
    function user(tid, comm) {
      return !(tid == 0 || tid == 2 || comm ~ /^(swapper|kworker\/|ksoftirqd\/|migration\/|rcu_|rcuc\/|rcuo|cpuhp\/|kthreadd|irq\/|watchdog|idle_inject\/|kswapd|kcompactd|khugepaged|jbd2\/|oom_reaper|kauditd|khungtaskd|kblockd|writeback|ksmd|psimon|pool_workqueue_)/)
    }
    function proc(tid) { return (tid in tgid) ? tgid[tid] : tid }
    function cpucol() { for (k = 2; k <= NF; k++) if ($k ~ /^\[[0-9]+\]$/) return k; return 0 }
    FNR == NR {                                  # pass 1: thread -> process from PID/TID
      if ($0 ~ /^#/ || !(k = cpucol())) next
      if (split($(k - 1), t, "/") == 2) tgid[t[2]] = t[1]
      next
    }
    /^#/ || NF == 0 { next }
    {
      if (!(k = cpucol())) next
      cpu = $k; n = split($(k - 1), t, "/"); tid = t[n]
      comm = $1; for (i = 2; i < k - 1; i++) comm = comm " " $i
      ev = $(k + 2)
      if (ev !~ /^(sched:sched_switch|sched:sched_process_fork|raw_syscalls:sys_enter|raw_syscalls:sys_exit|exceptions:page_fault_user|exceptions:page_fault_kernel|tlb:tlb_flush):$/) next
      if (!(cpu in seen)) { seen[cpu] = 1; ncpu++ }
      if (ev == "raw_syscalls:sys_enter:" && $(k + 4) ~ /^-/) next
      reason = -1
      if (ev == "tlb:tlb_flush:") {
        r = $NF; gsub(/[()]/, "", r); reason = r + 0
        match($0, /pages:-?[0-9]+/); pages = substr($0, RSTART + 6, RLENGTH - 6) + 0
      }
      if (reason != 0 && user(tid, comm)) {
        p = proc(tid)
        if (!(cpu in mm)) mm[cpu] = p
        else if (mm[cpu] != p) { cr3++; marks++; mm[cpu] = p }
      }
      if (ev == "sched:sched_switch:") {
        marks++; sw[cpu] = 0
        match($0, /next_comm=.* next_pid=/); nc = substr($0, RSTART + 10, RLENGTH - 20)
        match($0, /next_pid=[0-9]+/); np = substr($0, RSTART + 9, RLENGTH - 9) + 0
        if (user(np, nc)) {
          p = proc(np)
          if (!(cpu in mm)) mm[cpu] = p
          else if (mm[cpu] != p) { cr3++; sw[cpu] = 1; mm[cpu] = p }
        }
      } else if (ev == "raw_syscalls:sys_enter:") sysc++
      else if (ev == "raw_syscalls:sys_exit:") sysr++
      else if (ev ~ /^exceptions:/) { if ($0 ~ /address=0x/) touch++ }
      else if (ev == "tlb:tlb_flush:") {
        if (reason == 0 && sw[cpu]) sw[cpu] = 0
        else if (reason >= 0 && reason <= 3 && pages != 0 && (cpu in mm)) cr3++
      }
    }
    END { print cr3 + 0, sysc + 0, sysr + 0, touch + 0, marks + 0, ncpu + 0 }' "$1" "$1"
}

# check_import NAME FILE.txt: imports it and compares the event counts with expect_counts
check_import() {
  run "$VMXSIM" import perf-script "$2" -o "$1.bin"
  check_rc "$1: import succeeds" 0
  run "$VMXSIM" trace info "$1.bin" --format json
  flat=$(printf '%s' "$out" | tr -d ' \t\n')
  set -- "$1" $(expect_counts "$2")
  check_eq "$1: cr3w = address-space changes + TLB flushes (awk)" "$2" "$(jnum cr3w)"
  check_eq "$1: syscall = sys_enter lines" "$3" "$(jnum syscall)"
  check_eq "$1: sysret = sys_exit lines" "$4" "$(jnum sysret)"
  check_eq "$1: touch = page faults at numeric addresses" "$5" "$(jnum touch)"
  check_eq "$1: marks = context switches (recorded + inferred)" "$6" "$(jnum marks)"
  check_eq "$1: vcpus = CPUs seen" "$7" "$(jnum vcpus)"
}

# ---- help and usage ----

run "$VMXSIM" import pcap x.txt -o x.bin
check_rc "unknown format is a usage error" 2
check_contains "unknown format names the formats" "$err" "unknown format 'pcap' (perf-script, kvm-ftrace, xentrace, trace-cmd)"
# every format the table holds (as that message names them) is in the usage and has its own
formats=$(printf '%s\n' "$err" | sed -n "s/.*unknown format 'pcap' (\([^)]*\)).*/\1/p" | tr -d ,)
run "$VMXSIM" import --help
check_rc "import --help succeeds" 0
help=$out
for f in $formats; do
  check_contains "import --help lists $f" "$help" "  $f "
  run "$VMXSIM" import $f --help
  check_rc "import $f --help succeeds" 0
  check_contains "import $f --help has an example" "$out" "example"
done
# ... and every command that reads a recording names each format where it lists them
main_help=$("$VMXSIM" --help)
run_help=$("$VMXSIM" run --help | tr -s ' \n' '  ')
summary_help=$("$VMXSIM" summary --help | tr -s ' \n' '  ')
for f in $formats; do
  check_contains "vmxsim --help: import lists $f" "$(printf '%s\n' "$main_help" | grep '^  import ')" "$f"
  check_contains "run --help: --input-format lists $f" "$run_help" "$f"
  check_contains "summary --help: --input-format lists $f" "$summary_help" "$f"
done
run "$VMXSIM" import perf-script x.txt
check_rc "missing -o is a usage error" 2
run "$VMXSIM" import perf-script missing.txt -o x.bin
check_rc "missing input is bad input" 3
check_contains "missing input names the file" "$err" "missing.txt: No such file or directory"

# ---- the committed perf recordings ----

for name in pipe messaging hackbench syscalls; do
  gzip -dc "$REC/perf-$name.txt.gz" > "$name.txt"
  check_import "$name" "$name.txt"
done

run "$VMXSIM" trace info pipe.bin --format json
flat=$(printf '%s' "$out" | tr -d ' \t\n')
check_contains "metadata: source format" "$flat" '"source":"perf-script"'
check_contains "metadata: command line" "$flat" '"command":"vmxsimimportperf-scriptpipe.txt-opipe.bin"'
check_contains "metadata: line counts" "$flat" '"unparseable":0,"comments":'
check_contains "metadata: the recording's kernel" "$flat" '"osrelease":'

# The pipe benchmark pinned to one CPU is lat_ctx with 2 processes: about one CR3 exit per switch.
run "$VMXSIM" --policy shadowcache --no-db --format json pipe.bin
check_rc "replay of the pipe recording succeeds" 0
flat=$(printf '%s' "$out" | tr -d ' \t\n')
cr=$(printf '%s' "$flat" | sed -n 's/.*"exits":{[^}]*"CR_ACCESS":{"count":\([0-9]*\).*/\1/p')
cr=${cr:-$(printf '%s' "$flat" | sed -n 's/.*"CR_ACCESS":{"count":\([0-9]*\).*/\1/p')}
marks=$(printf '%s' "$flat" | sed -n 's/.*"counters":{.*"marks":\([0-9]*\).*/\1/p')
ratio=$(awk -v c="${cr:-0}" -v m="${marks:-0}" 'BEGIN { printf "%.2f", m ? c / m : 0 }')
if awk -v r="$ratio" 'BEGIN { exit !(r >= 0.8 && r <= 1.3) }'; then pass "pipe: CR_ACCESS exits per context switch near 1"
else fail "pipe: CR_ACCESS exits per context switch near 1" "expected: 0.8..1.3" "actual:   $ratio (CR_ACCESS $cr, marks $marks)"; fi

# ---- malformed perf script input ----

cat > bad.txt <<'EOF'
p 7/7 [000] 5.000000: raw_syscalls:sys_enter: NR 0 (0, 0, 0, 0, 0, 0)
p 7/7 [000] 5.000001: raw_syscalls:sys_exit: NR 0 = 0
perf  5375 [007] garbage line
p 7/7 [000] 5.000003: sched:sched_switch: prev_comm=p prev_pid=7 prev_prio=120 prev_state=S
EOF
run "$VMXSIM" import perf-script bad.txt -o bad.bin
check_rc "perf: a malformed line is bad input" 3
check_eq "perf: message gives line number and text" \
  "vmxsim: bad.txt:3: no 'SECS.FRACTION:' timestamp after the CPU: 'perf  5375 [007] garbage line'" "$err"
[ -e bad.bin ] && fail "perf: no output after bad input" "bad.bin exists" || pass "perf: no output after bad input"
run "$VMXSIM" import perf-script bad.txt -o bad.bin --skip-bad
check_rc "perf: --skip-bad imports the rest" 0
check_contains "perf: --skip-bad says how many were skipped" "$err" "skipped 2 unparseable lines of bad.txt, first:"
check_contains "perf: --skip-bad lists the first" "$err" "bad.txt:4: sched_switch: no next_pid= field: 'p 7/7 [000] 5.000003: sched:sched_switch:"
run "$VMXSIM" trace info bad.bin --format json
flat=$(printf '%s' "$out" | tr -d ' \t\n')
check_contains "perf: metadata counts the unparseable lines" "$flat" '"lines":{"total":4,"used":2,"skipped":0,"unparseable":2'
check_contains "perf: metadata keeps the first bad line" "$flat" '{"line":3,"why":"no'\''SECS.FRACTION:'\''timestampaftertheCPU","text":"perf5375[007]garbageline"}'

# ---- the output file: written whole or not at all, never to a device or a FIFO ----

printf 'p 7/7 [000] 5.0: raw_syscalls:sys_exit: NR 0 = 0\n' > one.txt
mkfifo out.fifo
run timeout 20 "$VMXSIM" import perf-script one.txt -o out.fifo
check_rc "import -o FIFO is refused (not hung), as a usage error" 2
check_contains "import -o FIFO: message" "$err" "out.fifo: not a regular file"
[ -p out.fifo ] && pass "import -o FIFO leaves the FIFO" || fail "import -o FIFO leaves the FIFO" "out.fifo is gone"
printf 'keep' > keep.bin
ln -s keep.bin link.bin
run "$VMXSIM" import perf-script one.txt -o link.bin
check_rc "import through a symlink succeeds" 0
[ -L link.bin ] && pass "import writes through a symlink, keeping it" || fail "import writes through a symlink, keeping it" "link.bin is no longer a symlink"
run "$VMXSIM" trace info keep.bin
check_rc "import through a symlink writes its target" 0
check_eq "import leaves no temporary file" "" "$(ls -A | grep -F .vmxsim-tmp.)"

# ---- KVM ftrace (hand-made excerpt: no KVM here) ----

run "$VMXSIM" import kvm-ftrace "$REC/kvm-ftrace-excerpt.txt" -o kvm.bin
check_rc "kvm: import of the excerpt succeeds" 0
run "$VMXSIM" trace dump kvm.bin
# nothing before a vCPU's first exit gives its CR0: CD (bit 30) set says so, and the
# measured write of 0x80050033 changes it (sim/import/import_ftrace.c, KVM_CR0_UNKNOWN)
check_contains "kvm: CR_ACCESS + kvm_cr -> cr0w, guest time -> run" "$out" "@init vcpu=1 cr0=0xc0050033 cr3=0x10000000 cr4=0x6f0
run 158400
cr0w 0x80050033
measured CR_ACCESS 345600
run 24000
rdmsr 0xc0000080
measured MSR_READ 7200"
check_contains "kvm: #PF exit + kvm_page_fault -> touch" "$out" "touch 0x7f2a1c200000 1 w"
check_contains "kvm: IO + kvm_pio -> io" "$out" "io out 0x3f8 1"
check_contains "kvm: old format: interrupt, DR, VMCALL, INVLPG" "$out" "intr 236
measured EXTERNAL_INTERRUPT 4800
run 115200
drw 7 0x0
measured DR_ACCESS 4800
run 139200
vmcall 5
measured VMCALL 7200
run 88800
invlpg 0x7f2a1c200000"
check_contains "kvm: kvm_exit to kvm_entry becomes a measured exit; the page fault keeps its error code" "$out" "touch 0x7f2a1c200000 1 w
measured EXCEPTION_NMI 12000 0x6"
check_eq "kvm: one measured record per exit with an entry" "13" "$(printf '%s\n' "$out" | grep -c '^measured')"
expected=$(grep -c 'kvm_cr: cr_write 3' "$REC/kvm-ftrace-excerpt.txt")
check_eq "kvm: one cr3w per kvm_cr write of CR3" "$expected" "$(printf '%s\n' "$out" | grep -c '^cr3w')"
printf 'q-1 [000] 1.0: kvm_exit: vcpu 0 reason CR_ACCESS rip 0x1 info1 0x0 info2 0x0\nq-1 [000] 1.1: kvm_cr: cr_write zero = 5\n' > badkvm.txt
run "$VMXSIM" import kvm-ftrace badkvm.txt -o badkvm.bin
check_rc "kvm: a malformed line is bad input" 3
check_eq "kvm: message gives line number and text" \
  "vmxsim: badkvm.txt:2: kvm_cr: expected 'cr_read|cr_write N = VALUE': 'q-1 [000] 1.1: kvm_cr: cr_write zero = 5'" "$err"

sh "$REC/make-kvm-excerpt.sh" kvm-shadow.txt
if cmp -s kvm-shadow.txt "$REC/kvm-ftrace-shadow.txt"; then pass "kvm: the committed shadow excerpt is what make-kvm-excerpt.sh writes"
else fail "kvm: the committed shadow excerpt is what make-kvm-excerpt.sh writes" "cmp: $(cmp kvm-shadow.txt "$REC/kvm-ftrace-shadow.txt" 2>&1)"; fi
run "$VMXSIM" import kvm-ftrace kvm-shadow.txt -o kvm-shadow.bin
check_contains "kvm: shadow excerpt: every exit measured" "$(head -c 1500 kvm-shadow.bin)" '"exits":400,"entries":400,"measured":400'

# ---- xentrace (hand-made excerpt: no Xen here) ----

sh "$REC/make-xen-excerpt.sh" xen.bin
if cmp -s xen.bin "$REC/xentrace-excerpt.bin"; then pass "xen: the committed excerpt is what make-xen-excerpt.sh writes"
else fail "xen: the committed excerpt is what make-xen-excerpt.sh writes" "cmp: $(cmp xen.bin "$REC/xentrace-excerpt.bin" 2>&1)"; fi
run "$VMXSIM" import xentrace xen.bin -o xen.trace
check_rc "xen: import of the excerpt succeeds" 0
run "$VMXSIM" trace info xen.trace --format json
flat=$(printf '%s' "$out" | tr -d ' \t\n')
check_contains "xen: CR writes by register" "$flat" '"cr3w":4,"cr4w":3'
check_contains "xen: HLT, RDTSC and CPUID exits" "$flat" '"cpuid":1,"hlt":1'
check_contains "xen: two pCPUs, two vCPUs" "$flat" '"vcpus":2'
check_contains "xen: TSC deltas become run cycles" "$flat" '"vcpu_cycles":[108000,28200]'
check_contains "xen: other records counted and skipped" "$flat" '"skipped_events":{"0x0002f001":1}'
head -c 90 xen.bin > trunc.bin          # records at 64 (12 bytes) and 76 (24 bytes)
run "$VMXSIM" import xentrace trunc.bin -o trunc.trace
check_rc "xen: a truncated record is bad input" 3
check_eq "xen: message gives the byte offset" "vmxsim: trunc.bin: byte 76: truncated record: the file ends 14 bytes into it" "$err"
run "$VMXSIM" import xentrace trunc.bin -o trunc.trace --skip-bad
check_rc "xen: --skip-bad keeps what came before" 0
check_contains "xen: --skip-bad reports it" "$err" "skipped 1 unparseable records of trunc.bin"
# A flipped bit in the high TSC word of the first VMEXIT (byte 76: header, TSC at 80..87) would
# make 2^61 cycles of guest time: up to 2^32 run records (about 100 GB) before the limit.
cp xen.bin tsc.bin
printf '\040' | dd of=tsc.bin bs=1 seek=87 conv=notrunc 2>/dev/null
run timeout 20 "$VMXSIM" import xentrace tsc.bin -o tsc.trace
check_rc "xen: a corrupt TSC is bad input (quickly)" 3
check_eq "xen: corrupt TSC message gives the byte offset" \
  "vmxsim: tsc.bin: byte 76: timestamp more than 2^48 cycles after the CPU's previous event (corrupt?)" "$err"
[ -e tsc.trace ] && fail "xen: no output after a corrupt TSC" "tsc.trace exists" || pass "xen: no output after a corrupt TSC"

# ---- live: record with perf here and import, where perf can record ----

if reason=$(sh "$RECORD" --check 2>&1 >/dev/null); then
  if sh "$RECORD" pipe -l 200 -o live.txt >/dev/null 2>live.err; then
    check_import live live.txt
    n=$(grep -c 'sched:sched_switch' live.txt)
    if [ "$n" -gt 100 ]; then pass "live: the recording has context switches"
    else fail "live: the recording has context switches" "expected: more than 100 sched_switch lines" "actual:   $n"; fi
  else
    fail "live: record.sh pipe" "$(cat live.err)"
  fi
else
  skip "live perf recording: $(printf '%s\n' "$reason" | head -1)"
fi

# an input with nothing the importer recognises is bad input, not an empty trace
: > empty.txt
run "$VMXSIM" import perf-script empty.txt -o e.bin
check_rc "empty perf-script input" 3
check_contains "empty input explained" "$err" "no perf-script events found"
[ -e e.bin ]; check_eq "no trace written for it" 1 $?
printf '# a comment only\n' > comment.txt
run "$VMXSIM" import kvm-ftrace comment.txt -o e.bin
check_rc "kvm-ftrace input without events" 3

# ---- trace-cmd trace.dat through libtracecmd ----

run "$VMXSIM" import trace-cmd "$REC/tracecmd-sched.dat" -o sched.bin
if printf '%s' "$err" | grep -q "built without trace.dat input"; then
  check_rc "trace-cmd: without libtracecmd the format says so" 3
  check_contains "trace-cmd: and how to convert instead" "$err" "trace-cmd report -t -i"
  skip "trace.dat input: vmxsim was built without libtracecmd-dev and libtraceevent-dev"
else
  check_rc "trace-cmd: a real trace.dat (sched and syscall events, recorded here) imports" 0
  run "$VMXSIM" trace info sched.bin --format json
  flat=$(printf '%s' "$out" | tr -d ' \t\n')
  # counts fixed when the file was recorded (trace-cmd report: 1403 sys_enter, 1407 sys_exit lines)
  check_contains "trace-cmd: syscalls from raw_syscalls:sys_enter/sys_exit" "$flat" '"syscall":1403,"sysret":1407'
  check_contains "trace-cmd: native events read as perf-script" "$flat" '"trace_dat":"nativeevents,readasperf-script"'
  if command -v trace-cmd >/dev/null 2>&1; then
    check_eq "trace-cmd: one syscall per sys_enter record of trace-cmd report" \
      "$(trace-cmd report -i "$REC/tracecmd-sched.dat" 2>/dev/null | grep -c ' sys_enter: ')" "$(jnum syscall)"
  fi
  # the fuzz harness's seeds: the recordings cut to their events' formats and two pages per
  # CPU (tests/fuzz/make-tracecmd-seeds.sh) still import, one exit or syscall per record
  SEEDS="$ROOT/tests/fuzz/corpus/tracecmd"
  run "$VMXSIM" import trace-cmd "$SEEDS/sched.dat" -o seed-sched.bin
  check_rc "trace-cmd: the cut sched seed imports" 0
  run "$VMXSIM" trace info seed-sched.bin --format json
  flat=$(printf '%s' "$out" | tr -d ' \t\n')
  check_eq "trace-cmd: the cut sched seed's syscalls (its first pages' sys_enter records)" 163 "$(jnum syscall)"
  run "$VMXSIM" import trace-cmd "$SEEDS/kvm.dat" -o seed-kvm.bin
  check_rc "trace-cmd: the cut KVM seed imports" 0
  run "$VMXSIM" trace info seed-kvm.bin --format json
  flat=$(printf '%s' "$out" | tr -d ' \t\n')
  check_eq "trace-cmd: the cut KVM seed's exits (its first pages' kvm_exit records)" 54 "$(jnum exits)"
  if command -v trace-cmd >/dev/null 2>&1; then
    check_eq "trace-cmd: as many as trace-cmd report shows in the cut KVM seed" \
      "$(trace-cmd report -i "$SEEDS/kvm.dat" 2>/dev/null | grep -c ' kvm_exit: ')" "$(jnum exits)"
  fi
  gunzip -c "$REC/kvm-tracedat.dat.gz" > kvm.dat
  run "$VMXSIM" import trace-cmd kvm.dat -o kvmdat.bin
  check_rc "trace-cmd: KVM events built with trace-cmd restore import" 0
  run "$VMXSIM" trace info kvmdat.bin --format json
  flat=$(printf '%s' "$out" | tr -d ' \t\n')
  check_contains "trace-cmd: KVM events read as kvm-ftrace" "$flat" '"trace_dat":"KVMhostevents,readaskvm-ftrace"'
  check_contains "trace-cmd: every exit measured" "$flat" '"exits":300,"entries":300,"measured":300'
  check_contains "trace-cmd: nothing unmapped" "$flat" '"exits_unmapped":{}'
  run "$VMXSIM" summary kvmdat.bin
  check_contains "trace-cmd: nanosecond costs survive" "$out" " CR_ACCESS                      166"
  # a compressed trace.dat is read as every compressed input is: decompressed first (into a
  # scratch file libtracecmd can open), the same trace as from the plain file
  run "$VMXSIM" import trace-cmd "$REC/kvm-tracedat.dat.gz" -o kvmdat-gz.bin
  check_rc "trace-cmd: a gzipped trace.dat imports" 0
  check_eq "trace-cmd: ... into the trace the plain file gives (records)" "$("$VMXSIM" trace dump kvmdat.bin | sed 1,/^@init/d | md5sum)" \
    "$("$VMXSIM" trace dump kvmdat-gz.bin | sed 1,/^@init/d | md5sum)"
  run "$VMXSIM" summary "$REC/kvm-tracedat.dat.gz"
  check_rc "trace-cmd: summary of a gzipped trace.dat" 0
  check_contains "trace-cmd: ... with its exits" "$out" " CR_ACCESS                      166"
  run "$VMXSIM" --no-db --policy shadowcache --cpu skylake-2019 "$REC/kvm-tracedat.dat.gz"
  check_rc "trace-cmd: a replay of a gzipped trace.dat" 0
  # a fuzz input: two bytes of the sched recording changed, one a size field; libtracecmd
  # asks malloc for about 2^62 bytes, gets NULL (which a sanitizer build must return) and fails
  cp "$REC/tracecmd-sched.dat" corrupt.dat
  printf '4' | dd of=corrupt.dat bs=1 seek=82076 conv=notrunc 2>/dev/null
  printf '_' | dd of=corrupt.dat bs=1 seek=143405 conv=notrunc 2>/dev/null
  run env ASAN_OPTIONS=allocator_may_return_null=1 "$VMXSIM" import trace-cmd corrupt.dat -o corrupt.bin
  check_rc "trace-cmd: a corrupt size field is bad input" 3
  check_contains "trace-cmd: the corrupt file is named, and the allocation that failed" "$err" \
    "corrupt.dat: libtracecmd needed more memory than its reader may use for this file"
  [ ! -e corrupt.bin ] && pass "trace-cmd: no trace from a corrupt file" || fail "trace-cmd: no trace from a corrupt file" "corrupt.bin exists"
  # another: an event format that makes libtraceevent divide by zero; vmxsim reads the file
  # in a child process, so the crash is a refused file
  cp "$REC/tracecmd-sched.dat" fpe.dat
  printf '[' | dd of=fpe.dat bs=1 seek=12839 conv=notrunc 2>/dev/null
  printf '(' | dd of=fpe.dat bs=1 seek=140003 conv=notrunc 2>/dev/null
  run "$VMXSIM" import trace-cmd fpe.dat -o fpe.bin
  check_rc "trace-cmd: a crash in the libraries is bad input" 3
  check_contains "trace-cmd: and says so" "$err" "fpe.dat: libtracecmd crashed reading it (signal 8"
  # a fuzz input (tracecmd_inproc, 2026-12-06, from the cut sched seed) whose event format
  # makes libtraceevent call strcmp on a NULL: it stopped that harness (the fault was in
  # the sanitizer's strcmp, not the library); read in the child, it is a refused file
  run "$VMXSIM" import trace-cmd "$ROOT/tests/data/tracedat-crash-strcmp.dat" -o strcmp.bin
  check_rc "trace-cmd: a file libtraceevent crashes on is bad input" 3
  check_contains "trace-cmd: ... and says so" "$err" "tracedat-crash-strcmp.dat: libtracecmd crashed reading it (signal 11"
  # a fuzz input (2026-12-04, from the cut KVM seed) whose ring-buffer page makes
  # libtraceevent's kbuffer_next_event give records for ever: vmxsim waited for ever, then
  # the child's CPU bound refused it (in the pass that looks for a kvm_exit record, which
  # went on past the first); that pass now stops there, and the report's memory does
  run "$VMXSIM" import trace-cmd "$ROOT/tests/data/tracedat-loop.dat" -o loop.bin
  check_rc "trace-cmd: a file whose records never end is bad input" 3
  check_contains "trace-cmd: ... and says so, with the bound" "$err" \
    "tracedat-loop.dat: its report (one line a record) grew past the reader's memory bound (65 MiB: 64 MiB and 32 times the file's size)"
  [ ! -e loop.bin ] && pass "trace-cmd: no trace from it" || fail "trace-cmd: no trace from it" "loop.bin exists"
  # the cut sched seed with each CPU's two pages thirty times over (flyrecord's sizes, at byte
  # 22751, 245760 each) claiming 8 million CPUs (at byte 22264; 64 MB, under the memory
  # bound): libtracecmd looks at every CPU for each of its 10,110 records, 81 billion looks
  # (about 55 s of CPU time: ten copies took 18 s; in the libraries, as fast in a sanitizer
  # build); the child's CPU bound (5 s, and 2 s a MiB; three times that in a sanitizer build,
  # whose own code is slower: there the looping file above met the plain bound before its
  # memory one) refuses it
  cpu_bound=7
  [ -z "${VMXSIM_SANITIZER:-}" ] || cpu_bound=21
  head -c 22264 "$SEEDS/sched.dat" > cpuloop.dat
  printf '\000\022\172\000' >> cpuloop.dat                          # 8,000,000
  dd if="$SEEDS/sched.dat" bs=1 skip=22268 count=$((22751 - 22268)) 2>/dev/null >> cpuloop.dat
  printf '\000\140\000\000\000\000\000\000\000\300\003\000\000\000\000\000' >> cpuloop.dat  # CPU 0: 24576, 245760
  printf '\000\040\004\000\000\000\000\000\000\300\003\000\000\000\000\000' >> cpuloop.dat  # CPU 1: 270336, 245760
  dd if="$SEEDS/sched.dat" bs=1 skip=22783 count=$((24576 - 22783)) 2>/dev/null >> cpuloop.dat
  for cpu in 0 1; do
    for i in $(seq 30); do
      dd if="$SEEDS/sched.dat" bs=8192 skip=$((3 + cpu)) count=1 2>/dev/null >> cpuloop.dat
    done
  done
  run "$VMXSIM" import trace-cmd cpuloop.dat -o cpuloop.bin
  check_rc "trace-cmd: a file the libraries read for too long is bad input" 3
  check_contains "trace-cmd: ... and says so, with the bound" "$err" \
    "cpuloop.dat: libtracecmd had not finished reading it after $cpu_bound s of CPU time"
  [ ! -e cpuloop.bin ] && pass "trace-cmd: no trace from it" || fail "trace-cmd: no trace from it" "cpuloop.bin exists"
  # the cut sched seed claiming 10^8 CPUs (its count, at byte 22264): libtracecmd filled 780
  # MB for them in 14 s before the CPU bound ended it (10^7: 81 MB, and the file imported);
  # the reader child now has 64 MiB and 32 times the file's size of memory
  cp "$SEEDS/sched.dat" cpus.dat
  printf '\000\341\365\005' | dd of=cpus.dat bs=1 seek=22264 conv=notrunc 2>/dev/null
  run env ASAN_OPTIONS=allocator_may_return_null=1 "$VMXSIM" import trace-cmd cpus.dat -o cpus.bin
  check_rc "trace-cmd: a file that asks for far more memory than it holds is bad input" 3
  check_contains "trace-cmd: ... and says so, with the bound" "$err" \
    "cpus.dat: libtracecmd needed more memory than its reader may use for this file (65 MiB: 64 MiB and 32 times the file's size)"
  [ ! -e cpus.bin ] && pass "trace-cmd: no trace from it" || fail "trace-cmd: no trace from it" "cpus.bin exists"
  # a compressed file's data is held decompressed (100 times the file for the most repetitive
  # one measured), so its bound is 256 times its size: the sched seed converted to zstd
  # (trace-cmd convert), one 8-byte field of its compressed metadata (byte 603) set to 2^31-1
  run env ASAN_OPTIONS=allocator_may_return_null=1 "$VMXSIM" import trace-cmd "$ROOT/tests/data/tracedat-zstd-size.dat" -o z.bin
  check_rc "trace-cmd: a compressed file that asks for far more memory than it holds is bad input" 3
  check_contains "trace-cmd: ... with the bound of a compressed file" "$err" \
    "tracedat-zstd-size.dat: libtracecmd needed more memory than its reader may use for this file (67 MiB: 64 MiB and 256 times the file's size, compressed)"
  # fuzz inputs (the tracecmd harness, 2026-12-06, from the cut seeds) whose printk formats
  # make libtraceevent read past its buffer (tep_parse_printk_formats: strdup, and strcmp
  # in tep_register_print_string), which a sanitizer build reports: read in the child, each
  # is a refused file (there the sanitizer ends the child), never a crash of vmxsim
  for f in "$ROOT"/tests/data/tracedat-oob-*.dat; do
    run env ASAN_OPTIONS=allocator_may_return_null=1 "$VMXSIM" import trace-cmd "$f" -o oob.bin
    check_rc "trace-cmd: ${f##*/}, read past a buffer by libtraceevent, is bad input" 3
    check_contains "trace-cmd: ... named" "$err" "vmxsim: $f: "
    [ ! -e oob.bin ] && pass "trace-cmd: no trace from it" || fail "trace-cmd: no trace from it" "oob.bin exists"
  done
fi
run "$VMXSIM" import trace-cmd "$REC/perf-pipe.txt.gz" -o no.bin
check_rc "trace-cmd: another file is bad input" 3

# ---- synthetic xentrace files (scripts/gen-xentrace.c), the bench's input ----

if [ -x "${GEN_XENTRACE:-}" ]; then
  "$GEN_XENTRACE" -n 20000 -c 2 -o gen.xt
  run "$VMXSIM" import xentrace gen.xt -o gen.trace
  check_rc "gen-xentrace: its file imports" 0
  run "$VMXSIM" trace info gen.trace --format json
  flat=$(printf '%s' "$out" | tr -d ' \t\n')
  check_contains "gen-xentrace: every exit measured, two pCPUs" "$flat" '"exits":20000,"entries":20000,"measured":20000'
  check_contains "gen-xentrace: nothing unmapped" "$flat" '"exits_unmapped":{}'
  run "$VMXSIM" summary --format csv gen.trace
  meas=$(printf '%s\n' "$out" | awk -F, '$2 == "reason" { print $3, $5 }' | sort)
  run "$VMXSIM" --no-db --policy shadowcache --format csv gen.trace
  check_eq "gen-xentrace: replayed exits by reason equal the recorded ones" "$meas" \
    "$(printf '%s\n' "$out" | awk -F, '$5 == "exit" { print $6, $8 }' | sort)"   # after trace,workload,policy,cpu
  if [ -n "${VMXSIM_SANITIZER:-}" ]; then
    skip "import peak memory: a sanitizer build ($VMXSIM_SANITIZER) uses more"
  elif command -v /usr/bin/time >/dev/null 2>&1; then
    "$GEN_XENTRACE" -n 400000 -o big.xt                  # 21 MB
    /usr/bin/time -f %M -o rss.txt "$VMXSIM" import xentrace big.xt -o big.trace
    check_eq "import memory does not grow with the input: peak RSS below 16 MiB on 21 MB" "yes" \
      "$(awk '{ print ($1 < 16384) ? "yes" : "no: " $1 " KiB" }' rss.txt)"
    rm -f big.xt big.trace
  fi
else
  skip "gen-xentrace: GEN_XENTRACE is not set (make cli builds it)"
fi

# ---- incomplete recordings: what was seen, what is missing and for what; a warning, not an error
zcat_sample() { gzip -dc "$ROOT/traces/recorded/$1"; }
run "$VMXSIM" import perf-script "$ROOT/traces/recorded/perf-pipe.txt.gz" -o full.bin
check_rc "a complete recording imports" 0
check_eq "a complete recording: no warning" "" "$err"
check_contains "the metadata lists the events seen" "$("$VMXSIM" trace info full.bin)" '"raw_syscalls:sys_exit":'
# without raw_syscalls:sys_exit and the page-fault tracepoints, in the header and the lines
zcat_sample perf-pipe.txt.gz | grep -v 'sys_exit\|page_fault' > partial.txt
run "$VMXSIM" import perf-script partial.txt -o partial.bin
check_rc "an incomplete recording still imports" 0
check_contains "warns: no sys_exit, and what that costs" "$err" \
  "vmxsim: warning: partial.txt: no raw_syscalls:sys_exit events (not recorded): no system call returns: the CR3 switches of PTI or Xen-PV kernels on return are not replayed"
check_contains "warns: no page faults, no shadow-MMU cost" "$err" \
  "vmxsim: warning: partial.txt: no exceptions:page_fault_user events (not recorded): no user page faults: replays show no shadow page faults, and no shadow-MMU cost, for user memory"
check_contains "says which events it saw" "$err" "vmxsim: warning: partial.txt: events seen: "
check_contains "... with their counts" "$err" "raw_syscalls:sys_enter 2518"
meta=$("$VMXSIM" trace info partial.bin --format json)
check_contains "metadata: coverage.missing names the event" "$meta" '"event":	"raw_syscalls:sys_exit"'
check_contains "metadata: ... what it is needed for" "$meta" '"needed_for":	"system call returns (sysret events)"'
check_contains "metadata: ... and why it is missing" "$meta" '"why":	"not recorded"'
# recorded (the header lists it) but none occurred
zcat_sample perf-pipe.txt.gz | grep -v 'page_fault_user:' > nofault.txt
run "$VMXSIM" import perf-script nofault.txt -o nofault.bin
check_contains "recorded but absent events are told apart" "$err" \
  "no exceptions:page_fault_user events (recorded, but none occurred)"
# perf's own warning about lost samples (record.sh keeps it as a "# perf:" comment)
{ zcat_sample perf-pipe.txt.gz; echo "# perf: Processed 8383 samples and lost 28.91% samples!"; } > lossy.txt
run "$VMXSIM" import perf-script lossy.txt -o lossy.bin
check_rc "a lossy recording still imports" 0
check_contains "the recorder's loss is quoted" "$err" \
  "vmxsim: warning: lossy.txt: the recording lost data: 'perf: Processed 8383 samples and lost 28.91% samples!'"
check_contains "metadata: coverage.recorder_warnings" "$("$VMXSIM" trace info lossy.bin)" 'lost 28.91% samples!'
# KVM ftrace without kvm_entry, with a lost-events line
grep -v 'kvm_entry' "$ROOT/traces/recorded/kvm-ftrace-excerpt.txt" > noentry.txt
echo 'CPU:1 [LOST 12 EVENTS]' >> noentry.txt
run "$VMXSIM" import kvm-ftrace noentry.txt -o noentry.bin
check_rc "kvm-ftrace without kvm_entry imports" 0
check_contains "kvm-ftrace: no kvm_entry, no run cycles" "$err" \
  "no kvm_entry events (not recorded?): no VM entries: the guest's time between exits is not replayed (no run cycles)"
check_contains "kvm-ftrace: lost events" "$err" "the recording lost events (1 'LOST EVENTS' lines): the trace has gaps"
