# `vmxsim gen`: each generator's counts, determinism, --help, option errors, the sample traces.

# count NAME: the number after NAME in `trace info` output ($out), or 0
count() { printf '%s\n' "$out" | awk -v k="$1" '$1 == k { print $2; f = 1 } END { if (!f) print 0 }'; }

run "$VMXSIM" gen --help
check_rc "gen --help exits 0" 0
listing=$out
for g in lat_ctx hackbench syscalls cr4toggle debug interrupts ipi; do
  check_contains "gen --help lists $g" "$listing" "$g"
  run "$VMXSIM" gen "$g" --help
  check_rc "gen $g --help exits 0" 0
  check_contains "gen $g --help has an example" "$out" "example:"
  check_contains "gen $g --help example uses $g" "$out" "vmxsim gen $g"
done
run "$VMXSIM" gen
check_rc "gen without a workload" 2
run "$VMXSIM" gen nosuch -o x.bin
check_rc "unknown workload" 2
check_contains "unknown workload named" "$err" "nosuch"

# lat_ctx: 2 processes x 10 iterations = 20 switches, CR3 writes and marks
run "$VMXSIM" gen lat_ctx --procs 2 --size 0 --iters 10 -o l.bin
check_rc "lat_ctx generates" 0
run "$VMXSIM" trace info l.bin
check_eq "lat_ctx marks" 20 "$(count marks:)"
check_eq "lat_ctx cr3w" 20 "$(count cr3w)"
check_eq "lat_ctx syscalls" 40 "$(count syscall)"
check_eq "lat_ctx native cycles (2.02 us x 2.4 GHz x 20)" 96960 "$(count cycles:)"
check_contains "lat_ctx metadata: model version" "$out" '"model_version"'
check_contains "lat_ctx workload name" "$out" "lat_ctx"
run "$VMXSIM" trace dump l.bin
check_contains "lat_ctx switches to process 1" "$out" "cr3w 0x10100000"
check_contains "lat_ctx switches back to process 0" "$out" "cr3w 0x10000000"
check_contains "lat_ctx initial state" "$out" "@init cr0=0x80050033 cr3=0x10000000 cr4=0x6f0"

# determinism: the same options give the same bytes
"$VMXSIM" gen lat_ctx --procs 4 --size 8 --iters 30 --jitter 5 --seed 3 -o a.bin
"$VMXSIM" gen lat_ctx --procs 4 --size 8 --iters 30 --jitter 5 --seed 3 -o b.bin
cmp -s a.bin b.bin; check_eq "lat_ctx is deterministic" 0 $?
"$VMXSIM" gen hackbench --groups 2 --loops 2 -o a.bin
"$VMXSIM" gen hackbench --groups 2 --loops 2 -o b.bin
cmp -s a.bin b.bin; check_eq "hackbench is deterministic" 0 $?

# hackbench: 400 marks per group and loop; threads write no CR3
run "$VMXSIM" gen hackbench --groups 1 --loops 1 -o h.bin
check_rc "hackbench generates" 0
run "$VMXSIM" trace info h.bin
check_eq "hackbench marks" 400 "$(count marks:)"
check_eq "hackbench cr3w (processes: start-up, then the measured pattern, seed 1)" 99 "$(count cr3w)"
run "$VMXSIM" gen hackbench --groups 2 --loops 1 --threads --pipe --vcpus 2 -o ht.bin
run "$VMXSIM" trace info ht.bin
check_eq "hackbench threads marks" 800 "$(count marks:)"
check_eq "hackbench threads cr3w" 0 "$(count cr3w)"
check_eq "hackbench vcpus" 2 "$(count vcpus:)"

# syscalls: one mark per call; pv64 and pti add 2 CR3 writes per call
for m in hvm pv64 pti; do
  run "$VMXSIM" gen syscalls --count 50 --mode $m -o s-$m.bin
  check_rc "syscalls --mode $m generates" 0
done
run "$VMXSIM" trace info s-hvm.bin
check_eq "syscalls hvm marks" 50 "$(count marks:)"
check_eq "syscalls hvm cr3w" 0 "$(count cr3w)"
run "$VMXSIM" trace info s-pv64.bin
check_eq "syscalls pv64 cr3w" 100 "$(count cr3w)"
run "$VMXSIM" trace info s-pti.bin
check_eq "syscalls pti cr3w" 100 "$(count cr3w)"
check_eq "syscalls pti syscalls" 50 "$(count syscall)"

# cr4toggle: 2 CR4 writes per PGE flush, 1 per TSD toggle
run "$VMXSIM" gen cr4toggle --count 30 -o c.bin
run "$VMXSIM" trace info c.bin
check_eq "cr4toggle pge marks" 30 "$(count marks:)"
check_eq "cr4toggle pge cr4w" 60 "$(count cr4w)"
run "$VMXSIM" gen cr4toggle --count 30 --bit tsd -o c.bin
run "$VMXSIM" trace info c.bin
check_eq "cr4toggle tsd cr4w" 30 "$(count cr4w)"

# debug: 2 processes, process 0 debugged
run "$VMXSIM" gen debug --procs 2 --iters 5 -o d.bin
check_rc "debug generates" 0
run "$VMXSIM" trace info d.bin
check_eq "debug marks" 10 "$(count marks:)"
check_eq "debug DR7 writes" 11 "$(count drw7)"
check_eq "debug DR0 writes" 6 "$(count drw0)"

# option errors: exit 2, the message names the option, no file left behind
err_case() { # name option-needle args...
  name=$1; needle=$2; shift 2
  run "$VMXSIM" gen "$@"
  check_rc "$name: exit code" 2
  check_contains "$name: names $needle" "$err" "$needle"
}
err_case "zero processes" --procs lat_ctx --procs 0 --iters 1 -o e.bin
err_case "one process" --procs lat_ctx --procs 1 --iters 1 -o e.bin
err_case "negative size" --size lat_ctx --procs 2 --size -5 --iters 1 -o e.bin
err_case "non-numeric size" --size lat_ctx --procs 2 --size big --iters 1 -o e.bin
err_case "missing -o" "-o" lat_ctx --procs 2 --iters 1
err_case "missing --iters" --iters lat_ctx --procs 2 -o e.bin
err_case "unknown option" --frobnicate lat_ctx --procs 2 --iters 1 --frobnicate -o e.bin
err_case "option without value" --procs lat_ctx --iters 1 -o e.bin --procs
err_case "bad paging" --paging lat_ctx --procs 2 --iters 1 --paging 48 -o e.bin
err_case "bad clock" --cpu-ghz lat_ctx --procs 2 --iters 1 --cpu-ghz 0 -o e.bin
err_case "unknown mode" --mode syscalls --count 5 --mode vmx -o e.bin
err_case "pv64 needs 64-bit" --paging syscalls --count 5 --mode pv64 --paging 32 -o e.bin
err_case "zero syscalls" --count syscalls --count 0 --mode hvm -o e.bin
err_case "zero groups" --groups hackbench --groups 0 --loops 1 -o e.bin
err_case "bad bit" --bit cr4toggle --count 1 --bit pae -o e.bin
err_case "too many debugged" --debugged debug --procs 2 --iters 1 --debugged 3 -o e.bin
err_case "stray argument" extra lat_ctx --procs 2 --iters 1 extra -o e.bin
[ -e e.bin ]; check_eq "no output after errors" 1 $?
run "$VMXSIM" gen lat_ctx --procs 2 --iters 1 -o no/such/dir/x.bin
check_rc "unwritable output: exit code 74 (an output error)" 74
check_contains "unwritable output: names the file" "$err" "no/such/dir/x.bin"

run "$VMXSIM" gen lat_ctx --procs 2 --iters 1 -o /dev/null
check_rc "device output refused (a usage error)" 2
[ -c /dev/null ]; check_eq "/dev/null left alone" 0 $?
"$VMXSIM" gen lat_ctx --procs 2 --iters 1 -o real.bin && ln -s real.bin link.bin
run "$VMXSIM" gen lat_ctx --procs 2 --iters 2 -o link.bin
[ -L link.bin ]; check_eq "output through a symlink keeps the link" 0 $?
run "$VMXSIM" trace info real.bin
check_eq "output through a symlink reaches its file" 4 "$(count marks:)"

# the sample traces: readable, and regenerated byte for byte by traces/make-samples.sh
mkdir samples
sh "$ROOT/traces/make-samples.sh" "$VMXSIM" samples >/dev/null 2>&1
check_eq "make-samples.sh runs" 0 $?
for f in samples/*.bin; do
  b=$(basename "$f")
  cmp -s "$f" "$ROOT/traces/$b"; check_eq "traces/$b matches make-samples.sh" 0 $?
  check_contains "traces/README.md describes $b" "$(cat "$ROOT/traces/README.md")" "$b"
  run "$VMXSIM" trace info "$ROOT/traces/$b"
  check_rc "traces/$b is readable" 0
done

# cpuid: one CPUID and one mark per iteration
run "$VMXSIM" gen cpuid --help
check_contains "gen cpuid --help has an example" "$out" "vmxsim gen cpuid"
run "$VMXSIM" gen cpuid --count 25 -o c.bin
check_rc "cpuid generates" 0
run "$VMXSIM" trace info c.bin
check_eq "cpuid marks" 25 "$(count marks:)"
check_eq "cpuid instructions" 25 "$(count cpuid)"
run "$VMXSIM" --policy shadowcache --no-db --format csv c.bin
check_contains "every cpuid exits" "$out" "exit,CPUID,,25,"
err_case "zero cpuid" --count cpuid --count 0 -o e.bin

# ipi: per round trip one ICR write on vCPU 0, one IPI with its EOI and IRET on vCPU 1
run "$VMXSIM" gen ipi --help
check_contains "gen ipi --help has an example" "$out" "vmxsim gen ipi"
run "$VMXSIM" gen ipi --count 7 -o ipi2.bin
check_rc "ipi (x2APIC) generates" 0
run "$VMXSIM" trace info ipi2.bin
check_eq "ipi marks" 7 "$(count marks:)"
check_eq "ipi: ICR and EOI MSR writes" 14 "$(count wrmsr)"
check_eq "ipi: interrupts" 7 "$(count virq)"
check_eq "ipi: IRETs" 7 "$(count iret)"
check_eq "ipi: the source waits once per round trip" 7 "$(count wait)"
run "$VMXSIM" --policy apicv --cpu sapphirerapids-2023 --no-db --format csv ipi2.bin
check_contains "apicv: only the x2APIC ICR write exits" "$out" "exit,MSR_WRITE,,7,"
run "$VMXSIM" --policy ipiv --cpu sapphirerapids-2023 --no-db --format csv ipi2.bin
check_contains "ipiv: no exit at all" "$out" "total,exits,,0,"
run "$VMXSIM" gen ipi --count 7 --apic xapic -o ipix.bin
check_rc "ipi (xAPIC) generates" 0
run "$VMXSIM" trace info ipix.bin
check_eq "ipi xapic: ICR read, ICR2, ICR and EOI accesses" 28 "$(count apic)"
run "$VMXSIM" --policy apicv --cpu sapphirerapids-2023 --no-db --format csv ipix.bin
check_contains "apicv, xAPIC: only the ICR-low write traps (ICR2's is virtualized, SDM 29.4.3.2)" "$out" \
  "exit,APIC_WRITE,,7,"
run "$VMXSIM" --policy ipiv --cpu sapphirerapids-2023 --no-db --format csv ipix.bin
check_contains "ipiv, xAPIC: no exit at all" "$out" "total,exits,,0,"
err_case "zero ipi round trips" --count ipi --count 0 -o e.bin
err_case "ipi: unknown APIC mode" --apic ipi --count 1 --apic x3apic -o e.bin

# --native-scale multiplies the anchors (2.02 us x 2.5 x 2.4 GHz = 12120 cycles per switch)
run "$VMXSIM" gen lat_ctx --procs 2 --iters 10 --native-scale 2.5 -o s.bin
check_rc "native-scale generates" 0
run "$VMXSIM" trace info s.bin
check_eq "native-scale cycles" 242400 "$(count cycles:)"
check_contains "native-scale recorded" "$out" '"native_scale"'
run "$VMXSIM" gen lat_ctx --procs 2 --iters 1 --native-scale 0 -o e.bin
check_rc "native-scale 0 refused" 2
check_contains "native-scale error names the option" "$err" "--native-scale"

# interrupts: the counts the options ask for, and a replay under ept showing the
# exits decided today (only exits whose decision the timer and APIC models keep
# are compared exactly: the MSR writes, HLT, and the arrivals of all kinds together)
exits() { printf '%s\n' "$out" | awk -F, -v r="$1" '$5 == "exit" && $6 == r { print $8; f = 1 } END { if (!f) print 0 }'; }
dumped() { printf '%s\n' "$dump" | grep -c "$1"; }
run "$VMXSIM" gen interrupts --vcpus 4 --busy 2 --duration 200 --timers 0 --resched 40 --callfunc 10 --device 0 -o i.bin
check_rc "interrupts generates" 0
run "$VMXSIM" trace info i.bin
check_eq "interrupts marks: 2 x 50 ticks, 4 x 8 resched, 4 x 2 callfunc" 140 "$(count marks:)"
check_eq "interrupts arrivals" 140 "$(count virq)"
check_eq "interrupts IRETs" 140 "$(count iret)"
run "$VMXSIM" trace dump i.bin
dump=$out
check_eq "interrupts: x2APIC EOIs" 140 "$(dumped '^wrmsr 0x80b 0x0$')"
check_eq "interrupts: ICR writes" 40 "$(dumped '^wrmsr 0x830 ')"
check_eq "interrupts: reschedule IPIs" 32 "$(dumped '^virq-ipi 253 ')"
check_eq "interrupts: call-function IPIs" 8 "$(dumped '^virq-ipi 251 ')"
check_eq "interrupts: ticks" 100 "$(dumped '^virq-timer 236$')"
ndeadline=$(dumped '^wrmsr 0x6e0 ')
nhlt=$(dumped '^hlt$')
[ "$ndeadline" -ge 100 ]; check_eq "interrupts: a TSC-deadline re-arm per tick at least ($ndeadline)" 0 $?
[ "$nhlt" -ge 2 ]; check_eq "interrupts: idle vCPUs halt ($nhlt)" 0 $?
run "$VMXSIM" --policy ept --cpu skylake-2019 --no-db --format csv i.bin
check_rc "interrupts replays under ept" 0
check_eq "ept: every write of 0x6e0, 0x830 and 0x80b exits" $((ndeadline + 40 + 140)) "$(exits MSR_WRITE)"
check_eq "ept: every HLT exits" "$nhlt" "$(exits HLT)"
[ "$(exits EXTERNAL_INTERRUPT)" -gt 0 ]; check_eq "ept: arrivals exit as EXTERNAL_INTERRUPT" 0 $?
# all vCPUs busy: no HLT, and every arrival (device or tick) is an exit of its own
run "$VMXSIM" gen interrupts --busy 4 --duration 100 --hz 100 --timers 0 --resched 0 --callfunc 0 --device 500 -o d.bin
check_rc "interrupts --busy 4 generates" 0
run "$VMXSIM" --policy ept --cpu skylake-2019 --no-db --format csv d.bin
check_eq "ept: 50 device interrupts and 40 ticks arrive, each an exit" 90 \
  $(( $(exits EXTERNAL_INTERRUPT) + $(exits PREEMPTION_TIMER) ))
check_eq "ept: no HLT when every vCPU is busy" 0 "$(exits HLT)"
# xAPIC: the EOI and ICR are APIC-page accesses; periodic ticks need no re-arm
run "$VMXSIM" gen interrupts --apic xapic --timer periodic --duration 100 -o x.bin
check_rc "interrupts xapic periodic generates" 0
run "$VMXSIM" trace dump x.bin
dump=$out
check_eq "xapic periodic: no TSC-deadline write" 0 "$(dumped '^wrmsr 0x6e0 ')"
check_eq "xapic periodic: no x2APIC MSR" 0 "$(dumped '^wrmsr 0x8')"
check_eq "xapic: one EOI per arrival" "$(dumped '^virq')" "$(dumped '^apic w 0xb0')"
"$VMXSIM" gen interrupts --duration 50 --seed 7 -o a.bin
"$VMXSIM" gen interrupts --duration 50 --seed 7 -o b.bin
cmp -s a.bin b.bin; check_eq "interrupts is deterministic" 0 $?
err_case "interrupts: periodic with NO_HZ" "--idle nohz" interrupts --timer periodic --idle nohz -o e.bin
err_case "interrupts: more busy than vCPUs" --busy interrupts --vcpus 2 --busy 3 -o e.bin
err_case "interrupts: negative rate" --device interrupts --device -5 -o e.bin
err_case "interrupts: unknown timer mode" --timer interrupts --timer oneshot -o e.bin
err_case "interrupts: system vector for a device" --device-vector interrupts --device-vector 0xfd -o e.bin
err_case "interrupts: a clock too slow for the tick" --hz interrupts --cpu-ghz 1e-9 -o e.bin
[ -e e.bin ]; check_eq "no output after interrupts errors" 1 $?
