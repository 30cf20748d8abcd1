# CLI tests: every exit reason a KVM recording can hold is decided again by the replay, or
# the measured-beside-simulated table names it as not re-decided (never a silent 0).
# Sourced by tests/cli/run.sh in a scratch directory; $VMXSIM is the program.

# A KVM ftrace recording (Linux >= 5.10 formats) of an EPT host with RDTSC exiting and
# "virtualize APIC accesses", one exit per line pair, 10 us apart: REASON INFO1 per line.
cat > exits.txt <<'EOF'
INTERRUPT_WINDOW 0
NMI_WINDOW 0
INTERRUPT_WINDOW 0
APIC_ACCESS 0x10b0
APIC_ACCESS 0x0300
NMI_WINDOW 0
INTERRUPT_WINDOW 0
EOI_INDUCED 0xec
APIC_WRITE 0x380
XSETBV 0
RDTSCP 0
MWAIT_INSTRUCTION 0
MONITOR_INSTRUCTION 0
TASK_SWITCH 0xc0000028
VMREAD 0
VMREAD 0
VMRESUME 0
TRIPLE_FAULT 0
PREEMPTION_TIMER 0
EPT_MISCONFIG 0
EOF
kvm_text_of_exits exits.txt host.txt

run "$VMXSIM" --no-db --policy ept --cpu skylake-2019 --set rdtsc_exiting=true --set apic_access_virt=true \
  --set lapic_timer=preemption --input-format kvm-ftrace host.txt
check_rc "reasons: the recording replays under its host's configuration" 0
check_contains "reasons: measured beside simulated" "$out" "measured (the recording) beside simulated"
table=$(replay_table "$out")

# measured count per reason, from the recording itself
row() { printf '%s\n' "$table" | awk -v r="$1" '$1 == r'; }
for r in INTERRUPT_WINDOW NMI_WINDOW XSETBV RDTSCP MWAIT_INSTRUCTION MONITOR_INSTRUCTION TASK_SWITCH VMREAD \
         VMRESUME TRIPLE_FAULT PREEMPTION_TIMER; do
  check_eq "reasons: $r simulated as often as measured" "$(reason_count "$r") $(reason_count "$r")" \
    "$(row "$r" | awk '{ print $2, $4 }')"
done
# EOIs and APIC writes of a host with APIC-register virtualization are replayed as the APIC
# accesses vmxsim's model decides; their own rows say why they have no simulated count
apic=$(( $(reason_count APIC_ACCESS) + $(reason_count EOI_INDUCED) + $(reason_count APIC_WRITE) ))
check_eq "reasons: APIC accesses, EOIs and APIC writes replayed as APIC accesses" "$apic" \
  "$(row APIC_ACCESS | awk '{ print $4 }')"
check_contains "reasons: EOI_INDUCED is named" "$(row EOI_INDUCED)" "simulated 0: the policy has no virtual-interrupt delivery"
check_contains "reasons: APIC_WRITE is named" "$(row APIC_WRITE)" "simulated 0: the policy has no APIC-register virtualization"
check_contains "reasons: EPT_MISCONFIG is named" "$(row EPT_MISCONFIG)" "not re-decided: MMIO to an emulated device"
check_eq "reasons: no measured reason row is a silent 0" "" \
  "$(printf '%s\n' "$table" | awk '$1 ~ /^[A-Z_]+$/ && $4 == "0" { print $1 }')"

# a reason the model decides but the policy does not intercept is a 0 the replay decided
run "$VMXSIM" --no-db --policy ept --cpu skylake-2019 --set apic_access_virt=true --input-format kvm-ftrace host.txt
check_eq "reasons: RDTSCP without RDTSC exiting: 0, decided" "1 0" \
  "$(printf '%s\n' "$out" | awk '$1 == "RDTSCP" { print $2, $4 }')"

run "$VMXSIM" --no-db --policy ept --cpu skylake-2019 --set rdtsc_exiting=true --set apic_access_virt=true \
  --format json --input-format kvm-ftrace host.txt
flat=$(printf '%s' "$out" | tr -d ' \t\n')
check_contains "reasons: JSON names what is not re-decided" "$flat" \
  '"PREEMPTION_TIMER":{"count":1,'
check_contains "reasons: JSON says why" "$flat" \
  '"not_redecided":"MMIOtoanemulateddevice:theEPTmodelmapsnodevicememory"'
check_contains "reasons: JSON: a PREEMPTION_TIMER exit with the deadline in a host timer says where it went" "$flat" \
  '"removed_by":"thedeadlineiskeptinahosttimer(lapic_timer=hrtimer):itsexpiryisanEXTERNAL_INTERRUPTexit(SDM25.2)"'
check_contains "reasons: ... and it is an EXTERNAL_INTERRUPT exit" "$flat" '"exits":{"EXTERNAL_INTERRUPT":{"count":1,'

# compare beside the recording: a reason no run decides is named under the table
"$VMXSIM" --db r.db --policy ept --cpu skylake-2019 --set rdtsc_exiting=true --set apic_access_virt=true \
  --input-format kvm-ftrace host.txt > /dev/null
"$VMXSIM" --db r.db --policy ept+lazydr --cpu skylake-2019 --input-format kvm-ftrace host.txt > /dev/null
run "$VMXSIM" compare --db r.db 1 2
check_contains "reasons: compare names what is not re-decided" "$out" \
  "EPT_MISCONFIG: not re-decided: MMIO to an emulated device"
check_not_contains "reasons: compare does not name what a run decided" "$out" "INTERRUPT_WINDOW: not re-decided"
run "$VMXSIM" compare --db r.db --format json 1 2
flat=$(printf '%s' "$out" | tr -d ' \t\n')
check_contains "reasons: compare's JSON says why" "$flat" '"EPT_MISCONFIG":{"count":1,"avg":4800,"not_redecided":'
