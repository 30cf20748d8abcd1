# CLI tests for KVM `trace-cmd report` text as people paste it: vCPU threads named
# "CPU N/KVM" that migrate between host CPUs, an excerpt's noise (elisions, notes after
# records, blank lines, "CPU 3 is empty"), --skip-bad wherever a recording is read, exits
# shorter than the timestamps' 1 us, and initial registers.  The text comes from
# scripts/gen-kvm-report.sh; every figure of vmxsim's is checked against an awk count of
# the same text that pairs exits and entries by the thread's pid.
# Sourced by tests/cli/run.sh in a scratch directory; $VMXSIM is the program, $ROOT the repo.

GEN="$ROOT/scripts/gen-kvm-report.sh"

# The independent count: per vCPU (the id the thread's records print), the exits with an
# entry, their cycles at 2.4 GHz (an exit of 0 us counts as 1 cycle: docs/experiments.md)
# and the integer average; an elision ends every open exit.  Also the totals: exits,
# exits of 0 us, and the noise lines (elisions, records with a note after them).
count_kvm() { # FILE -> "vcpu N COUNT CYCLES AVG" lines, then "exits E zero Z noise N"
  awk '
    function us(s,   p) { split(s, p, "."); return p[1] * 1000000 + p[2] }
    /^[ \t]*(\.\.\.)[ \t]*$/ { for (k in open) delete open[k]; noise++; next }
    {
      for (i = 1; i <= NF && $i !~ /^\[[0-9]+\]$/; i++) {}
      if (i > NF) next
      pid = $(i - 1); sub(/.*-/, "", pid)
      t = $(i + 1); sub(/:$/, "", t); ev = $(i + 2)
      if ($0 ~ /<----/) noise++
      if (ev == "kvm_entry:" || ev == "kvm_exit:")
        for (j = i + 3; j < NF; j++) if ($j == "vcpu" && !(pid in id)) { id[pid] = $(j + 1) + 0 }
      if (ev == "kvm_exit:") { open[pid] = us(t); exits++ }
      if (ev == "kvm_entry:" && (pid in open)) {
        d = us(t) - open[pid]; delete open[pid]
        n[pid]++; c[pid] += d == 0 ? 1 : d * 2400; zero += d == 0
      }
    }
    END {
      for (p in n) printf "vcpu %d %d %d %d\n", id[p], n[p], c[p], int(c[p] / n[p])
      printf "exits %d zero %d noise %d\n", exits, zero, noise
    }' "$1" | sort
}
# vmxsim's: the measured per-vCPU rows of summary --format csv (standard input).
vmxsim_rows() { awk -F, '$1 == "measured" && $2 == "vcpu" { print $3, $5, $6, $7 }' | sort; }
meta_num() { # TRACE KEY: a number of the trace's metadata
  "$VMXSIM" trace info "$1" --format json | tr -d ' \t\n' | sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p"
}

# ---- threads named "CPU N/KVM", four of them migrating over two host CPUs ----
sh "$GEN" --threads 4 --cpus 2 --exits 300 --seed 7 > clean.txt
check_eq "kvmtext: the generator migrates threads and shares CPUs (threads on CPU 0, CPUs of vCPU 1)" "4 2" \
  "$(awk '$3 == "[000]" { t[$2] = 1 } $2 ~ /4101$/ { c[$3] = 1 } END { print length(t), length(c) }' clean.txt)"
run "$VMXSIM" import kvm-ftrace clean.txt -o clean.bin
check_rc "kvmtext: a report of 'CPU N/KVM' threads imports" 0
count_kvm clean.txt > expected.txt
run "$VMXSIM" summary --format csv clean.bin
printf '%s\n' "$out" | vmxsim_rows > actual.txt
check_eq "kvmtext: per vCPU, exits measured, cycles and average, as awk pairs them by pid" \
  "$(grep '^vcpu' expected.txt)" "$(cat actual.txt)"
check_eq "kvmtext: every kvm_exit is an exit" "$(awk '/^exits/ { print $2 }' expected.txt)" "$(meta_num clean.bin exits)"
check_eq "kvmtext: exits of 0 us are counted as such" "$(awk '/^exits/ { print $4 }' expected.txt)" \
  "$(meta_num clean.bin measured_below_resolution)"
check_eq "kvmtext: the timestamps' resolution" "1000" "$(meta_num clean.bin time_resolution_ns)"
run "$VMXSIM" trace info clean.bin --format json
check_contains "kvmtext: the metadata maps vCPUs to the recording's threads" "$(printf '%s' "$out" | tr -d ' \t\n')" \
  '"vcpu_threads":[{"vcpu":0,"pid":4100,"comm":"CPU0/KVM","kvm_vcpu":0},{"vcpu":1,"pid":4101'

# the same with the threads named alike (what tools other than QEMU name them): the
# averages count the exits of 0 us
sh "$GEN" --threads 3 --cpus 2 --exits 300 --seed 9 --comm qemu-system-x86 > alike.txt
run "$VMXSIM" summary --format csv alike.txt
check_eq "kvmtext: threads named alike: per vCPU, exits measured, cycles and average (exits of 0 us in it)" \
  "$(count_kvm alike.txt | grep '^vcpu')" "$(printf '%s\n' "$out" | vmxsim_rows)"

# two virtual machines in one recording: both have a vCPU 0; the threads of the second
# (its pid 5101 first seen) get the numbers free, and summary says which thread each is
{ sh "$GEN" --threads 2 --exits 50; sh "$GEN" --threads 2 --exits 50 --pid 5100 --comm qemu-vm2; } > twovms.txt
run "$VMXSIM" summary twovms.txt
check_contains "kvmtext: two VMs: one vCPU per thread, ids taken go to the lowest numbers free, named by thread" "$out" \
"vCPUs: the recording's threads
 vcpu 0    CPU 0/KVM, pid 4100, kvm vcpu 0
 vcpu 1    CPU 1/KVM, pid 4101, kvm vcpu 1
 vcpu 2    qemu-vm2, pid 5101, kvm vcpu 1
 vcpu 3    qemu-vm2, pid 5100, kvm vcpu 0"
legend=$out
run "$VMXSIM" summary --format csv twovms.txt
check_eq "kvmtext: two VMs: each thread's measured exits (pid, count), as awk counts them" \
  "$(awk '/kvm_entry/ { for (i = 1; i < NF && $i !~ /^\[/; i++) {} p = $(i - 1); sub(/.*-/, "", p); n[p]++ }
          END { for (p in n) print p, n[p] }' twovms.txt | sort)" \
  "$(printf '%s\n' "$out" | vmxsim_rows | while read -r _ v count _; do
       printf '%s %s\n' "$(printf '%s\n' "$legend" | sed -n "s/^ vcpu $v .* pid \([0-9]*\),.*/\1/p")" "$count"
     done | sort)"

# ---- Linux before 5.10: kvm_exit prints no vcpu id, the thread's kvm_entry does ----
sh "$GEN" --old --threads 3 --cpus 2 --exits 200 --seed 3 > old.txt
run "$VMXSIM" summary --format csv old.txt
check_rc "kvmtext: the old format is summarised" 0
check_eq "kvmtext: old format: each thread is the vCPU its kvm_entry names, pairs by pid" \
  "$(count_kvm old.txt | grep '^vcpu')" "$(printf '%s\n' "$out" | vmxsim_rows)"

# ---- an excerpt as pasted: noise, elisions, notes after records ----
sh "$GEN" --noise --comm qemu-system-x86 --threads 3 --cpus 2 --exits 300 --seed 11 > pasted.txt
count_kvm pasted.txt > expected.txt
noise=$(awk '/^exits/ { print $6 }' expected.txt)
first=$(awk '/^[ \t]*\.\.\.[ \t]*$/ || /<----/ { print NR }' pasted.txt | head -5 | tr '\n' ' ')
check_eq "kvmtext: the pasted text has an elision, a note, a blank line and 'CPU N is empty'" "1 1 1 1" \
  "$(awk '/^\.\.\.$/ { e = 1 } /<----/ { a = 1 } /^$/ { b = 1 } /^CPU [0-9]+ is empty$/ { c = 1 } END { print e + 0, a + 0, b + 0, c + 0 }' pasted.txt)"
for cmd in "import kvm-ftrace pasted.txt -o pasted.bin" "summary pasted.txt" "run --no-db -q pasted.txt"; do
  # shellcheck disable=SC2086
  run "$VMXSIM" $cmd
  check_rc "kvmtext: $cmd: a pasted excerpt is bad input without --skip-bad" 3
  check_contains "kvmtext: $cmd: the message names the first such line and says --skip-bad" "$err" \
    "pasted.txt:$(echo "$first" | cut -d' ' -f1): "
  check_contains "kvmtext: $cmd: the message says --skip-bad" "$err" "--skip-bad"
done
check_eq "kvmtext: the first noise line of the excerpt is an elision or a note" "1" \
  "$(printf '%s\n' "$err" | grep -c "an elision, no record\|text after the record")"
said() { # the line numbers a --skip-bad report gives
  printf '%s\n' "$err" | sed -n 's/^  pasted.txt:\([0-9]*\): .*/\1/p' | tr '\n' ' '
}
for cmd in "import kvm-ftrace pasted.txt -o pasted.bin" "summary --format csv pasted.txt" \
           "run --no-db -q pasted.txt" "summary --format csv --input-format kvm-ftrace -"; do
  # shellcheck disable=SC2086
  if [ "${cmd%-}" != "$cmd" ]; then run "$VMXSIM" $cmd --skip-bad < pasted.txt; else run "$VMXSIM" $cmd --skip-bad; fi
  check_rc "kvmtext: $cmd --skip-bad goes on" 0
  check_contains "kvmtext: $cmd --skip-bad says how many lines it skipped" "$err" "skipped $noise unparseable lines of"
  if [ "${cmd%-}" = "$cmd" ]; then
    check_eq "kvmtext: $cmd --skip-bad gives the first five line numbers" "$first" "$(said)"
  fi
done
run "$VMXSIM" summary --format csv --skip-bad pasted.txt
check_eq "kvmtext: pasted, --skip-bad: per vCPU as awk counts (notes dropped, records kept, nothing across an elision)" \
  "$(grep '^vcpu' expected.txt)" "$(printf '%s\n' "$out" | vmxsim_rows)"
run "$VMXSIM" summary --format csv --skip-bad pasted.txt
check_contains "kvmtext: a remembered import says its skipped lines again" "$err" "skipped $noise unparseable lines"

# ---- compare --trace RECORDING, calibrate: --skip-bad where a recording is read ----
run "$VMXSIM" run -q --db c.db --policy shadowcache clean.txt
check_rc "kvmtext: run stores a run of the recording" 0
run "$VMXSIM" compare --db c.db --trace clean.txt --policy shadowcache,nocache --run
check_rc "kvmtext: compare --run replays a recording" 0
check_contains "kvmtext: compare --trace RECORDING finds what 'run RECORDING' stored, and names the recording" \
  "$out" "trace clean.txt (clean)"
check_contains "kvmtext: ... the stored run is A, the replayed one B" "$out" "A: run 1, policy shadowcache
  B: run 2, policy nocache"
run "$VMXSIM" compare --db c.db --trace pasted.txt --policy shadowcache,nocache --run
check_rc "kvmtext: compare --run of a pasted excerpt without --skip-bad" 3
run "$VMXSIM" compare --db c.db --trace pasted.txt --policy shadowcache,nocache --run --skip-bad
check_rc "kvmtext: compare --run --skip-bad" 0
check_contains "kvmtext: compare --run --skip-bad says what it skipped" "$err" "skipped $noise unparseable lines of pasted.txt"
run "$VMXSIM" runs --db c.db --trace clean.txt
check_eq "kvmtext: runs --trace RECORDING lists the runs of the recording" "clean.txt shadowcache
clean.txt nocache" "$(printf '%s\n' "$out" | awk 'NR > 1 { print $4, $6 }')"
run "$VMXSIM" runs --db c.db --trace pasted.txt
check_rc "kvmtext: runs --trace of a pasted excerpt without --skip-bad" 3
run "$VMXSIM" runs --db c.db --trace pasted.txt --skip-bad
check_eq "kvmtext: runs --trace RECORDING --skip-bad lists its runs" "pasted.txt shadowcache
pasted.txt nocache" "$(printf '%s\n' "$out" | awk 'NR > 1 { print $4, $6 }')"
run "$VMXSIM" calibrate pasted.txt --cpu skylake-2019 -o prof.json
check_rc "kvmtext: calibrate of a pasted excerpt without --skip-bad" 3
run "$VMXSIM" calibrate pasted.txt --cpu skylake-2019 -o prof.json --skip-bad
check_rc "kvmtext: calibrate --skip-bad" 0
check_contains "kvmtext: calibrate --skip-bad says what it skipped" "$err" "skipped $noise unparseable lines of pasted.txt"

# what trace-cmd itself writes is no noise: header, "CPU N is empty", blank lines
{ echo "cpus=4"; echo "CPU 3 is empty"; echo; sh "$GEN" --threads 2 --exits 20; echo "CPU 2 is empty"; } > header.txt
run "$VMXSIM" import kvm-ftrace header.txt -o header.bin
check_rc "kvmtext: trace-cmd's header lines, 'CPU N is empty' and blank lines need no --skip-bad" 0
check_eq "kvmtext: ... and are counted as comments" "4" "$(meta_num header.bin comments)"

# a record's end is its format's: Linux 6.x's "requests" and "[immediate exit]" are the
# format's, a note ending in a number is not
cat > later.txt <<'EOF2'
 CPU 0/KVM-77 [001] 5.000100: kvm_exit: vcpu 0 reason HLT rip 0xffffffff81000000 info1 0x0000000000000000 info2 0x0000000000000000 intr_info 0x00000000 error_code 0x00000000 requests 0x0000000000000000
 CPU 0/KVM-77 [001] 5.000104: kvm_entry: vcpu 0, rip 0xffffffff81000003 intr_info 0x00000000 error_code 0x00000000[immediate exit]
 CPU 0/KVM-77 [001] 5.000110: kvm_exit: vcpu 0 reason MSR_READ rip 0xffffffff81000000 info1 0x0000000000000000 info2 0x0000000000000000 intr_info 0x00000000 error_code 0x00000000 requests 0x0000000000000000
 CPU 0/KVM-77 [001] 5.000111: kvm_msr: msr_read 1b = 0xfee00900 (#GP)
 CPU 0/KVM-77 [001] 5.000114: kvm_entry: vcpu 0, rip 0xffffffff81000003 intr_info 0x00000000 error_code 0x00000000
EOF2
run "$VMXSIM" import kvm-ftrace later.txt -o later.bin
check_rc "kvmtext: Linux 6.x's fields after a record's usual end are the record's" 0
printf ' CPU 0/KVM-77 [001] 5.000120: kvm_cr: cr_write 3 = 0x1000   <-- see 2\n' >> later.txt
run "$VMXSIM" import kvm-ftrace later.txt -o later.bin
check_rc "kvmtext: a note ending in a number is no field" 3
check_contains "kvmtext: ... and the message says which line" "$err" "later.txt:6: text after the record"

# ---- initial registers: nothing before a vCPU's first exit tells them ----
cat > cr.txt <<'EOF'
 qemu-system-x86-77 [001] 5.000100: kvm_exit: vcpu 0 reason CR_ACCESS rip 0xffffffff81000000 info1 0x0000000000000000 info2 0x0 intr_info 0x00000000 error_code 0x00000000
 qemu-system-x86-77 [001] 5.000101: kvm_cr: cr_write 0 = 0x80050033
 qemu-system-x86-77 [001] 5.000104: kvm_entry: vcpu 0, rip 0xffffffff81000003
 qemu-system-x86-77 [002] 5.000110: kvm_exit: vcpu 0 reason CR_ACCESS rip 0xffffffff81000010 info1 0x0000000000000003 info2 0x0 intr_info 0x00000000 error_code 0x00000000
 qemu-system-x86-77 [002] 5.000111: kvm_cr: cr_write 3 = 0x12345000
 qemu-system-x86-77 [002] 5.000113: kvm_entry: vcpu 0, rip 0xffffffff81000013
EOF
run "$VMXSIM" import kvm-ftrace cr.txt -o cr.bin
run "$VMXSIM" trace dump cr.bin
init=$(printf '%s\n' "$out" | grep '^@init')
check_not_contains "kvmtext: the initial CR0 is not the value the first measured CR0 write stores" "$init" "cr0=0x80050033 "
check_not_contains "kvmtext: the initial CR3 is not the value the first CR3 write stores" "$init" "cr3=0x12345000"
run "$VMXSIM" run --no-db -q --policy shadowcache cr.txt
check_eq "kvmtext: the measured CR0 write is simulated: measured and simulated count" "1 1" \
  "$(printf '%s\n' "$out" | awk '$1 == "cr0" && $2 == "write" && NF == 8 { print $3, $5 }')"
