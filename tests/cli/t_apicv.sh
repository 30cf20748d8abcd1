# CLI tests: a recording of a host without APICv, with interrupt-window and APIC-access
# exits, replayed under the host's configuration simulates them; under the apicv preset
# they are gone and the measured-beside-simulated table says why.  And the ipiv preset
# needs a CPU with IPI virtualization.
# Sourced by tests/cli/run.sh in a scratch directory; $VMXSIM is the program, $ROOT the tree.

# A KVM ftrace recording (Linux >= 5.10 formats) of an EPT host with "virtualize APIC
# accesses" only (FlexPriority): REASON INFO1 per exit, 10 us apart.  The APIC accesses:
# EOI writes (0x10b0), a read of the ICR (0x0300), a write of the timer's initial count
# (0x1380).
cat > exits.txt <<'EOF2'
INTERRUPT_WINDOW 0
APIC_ACCESS 0x10b0
INTERRUPT_WINDOW 0
APIC_ACCESS 0x0300
APIC_ACCESS 0x10b0
INTERRUPT_WINDOW 0
APIC_ACCESS 0x1380
CPUID 0
EOF2
kvm_text_of_exits exits.txt host.txt
row() { printf '%s\n' "$table" | awk -v r="$1" '$1 == r'; }

run "$VMXSIM" --no-db --policy ept --cpu skylake-2019 --set apic_access_virt=true --input-format kvm-ftrace host.txt
check_rc "apicv: the recording replays under its host's configuration" 0
table=$(replay_table "$out")
for r in INTERRUPT_WINDOW APIC_ACCESS CPUID; do
  check_eq "apicv: host configuration: $r simulated as often as measured" "$(reason_count "$r") $(reason_count "$r")" \
    "$(row "$r" | awk '{ print $2, $4 }')"
done

run "$VMXSIM" --no-db --policy apicv --cpu skylake-2019 --input-format kvm-ftrace host.txt
check_rc "apicv: the recording replays under apicv" 0
table=$(replay_table "$out")
check_eq "apicv: the measured interrupt windows are still shown" "$(reason_count INTERRUPT_WINDOW)" \
  "$(row INTERRUPT_WINDOW | awk '{ print $2 }')"
check_contains "apicv: the interrupt windows are gone, and why" "$(row INTERRUPT_WINDOW)" \
  "simulated 0: removed by virtual-interrupt delivery"
check_eq "apicv: the measured APIC accesses are still shown" "$(reason_count APIC_ACCESS)" \
  "$(row APIC_ACCESS | awk '{ print $2 }')"
check_contains "apicv: the APIC accesses are gone, and why" "$(row APIC_ACCESS)" \
  "simulated 0: virtualized by APIC-register virtualization"
# the timer write is virtualized, then traps for KVM to emulate: an APIC_WRITE the host never took
check_eq "apicv: the initial-count write traps as APIC_WRITE" "0 1" "$(row APIC_WRITE | awk '{ print $2, $4 }')"
check_eq "apicv: CPUID still exits" "1 1" "$(row CPUID | awk '{ print $2, $4 }')"
check_eq "apicv: no measured reason row is a silent 0" "" \
  "$(printf '%s\n' "$table" | awk '$1 ~ /^[A-Z_]+$/ && $4 == "0" { print $1 }')"

run "$VMXSIM" --no-db --policy apicv --cpu skylake-2019 --format json --input-format kvm-ftrace host.txt
flat=$(printf '%s' "$out" | tr -d ' \t\n')
check_contains "apicv: JSON says which exits the policy removed" "$flat" \
  '"removed_by":"removedbyvirtual-interruptdelivery:'

# stored, the run's report says the same
"$VMXSIM" --db r.db --policy apicv --cpu skylake-2019 --input-format kvm-ftrace host.txt > /dev/null
run "$VMXSIM" report --db r.db 1
check_contains "apicv: a stored run's report names the removal" "$out" "simulated 0: removed by virtual-interrupt delivery"

# IPI virtualization: no built-in profile has it (VM entry fails naming the control, exit 4);
# the test profile with it replays
run "$VMXSIM" --no-db --policy ipiv --cpu skylake-2019 --input-format kvm-ftrace host.txt
check_rc "apicv: ipiv on skylake-2019 fails VM entry" 4
check_contains "apicv: the failure names the control" "$err" \
  'the "IPI virtualization" VM-execution control is set but this CPU has no tertiary processor-based controls'
run "$VMXSIM" --no-db --policy ipiv --cpu "$ROOT/tests/data/profiles/ipiv-test.json" --input-format kvm-ftrace host.txt
check_rc "apicv: ipiv on a CPU with IPI virtualization" 0
