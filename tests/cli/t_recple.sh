# CLI tests: what a policy makes of a recording's PLE exits.  A recorded PAUSE_INSTRUCTION
# exit holds no spin length: with PLE off the exits are gone (the spin stays in the guest),
# with PAUSE exiting each recorded spin exits, with PLE on the table says what is not
# re-decided and the lower bound.  And `compare` beside the recording names, per run, what
# its policy removed, as `run` does.
# Sourced by tests/cli/run.sh in a scratch directory; $VMXSIM is the program.

# A KVM ftrace recording (Linux >= 5.10 formats) of a host with PLE: REASON INFO1 per exit.
cat > exits.txt <<'EOF2'
PAUSE_INSTRUCTION 0
CPUID 0
INTERRUPT_WINDOW 0
PAUSE_INSTRUCTION 0
PAUSE_INSTRUCTION 0
EOF2
kvm_text_of_exits exits.txt host.txt
row() { replay_table "$out" | awk -v r="$1" '$1 == r'; }
pauses=$(reason_count PAUSE_INSTRUCTION)

run "$VMXSIM" --no-db --policy ept --cpu skylake-2019 --input-format kvm-ftrace host.txt
check_rc "recple: PLE off replays" 0
check_eq "recple: PLE off: the PLE exits are still shown as measured" "$pauses" "$(row PAUSE_INSTRUCTION | awk '{ print $2 }')"
check_contains "recple: PLE off: they are gone, and why" "$(row PAUSE_INSTRUCTION)" \
  "simulated 0: PAUSE-loop exiting is off (ple_gap=0): the spin runs on in the guest"

run "$VMXSIM" --no-db --policy ept --cpu skylake-2019 --set pause_exiting=true --input-format kvm-ftrace host.txt
check_eq "recple: PAUSE exiting: each recorded spin exits" "$pauses $pauses" \
  "$(row PAUSE_INSTRUCTION | awk '{ print $2, $4 }')"

run "$VMXSIM" --no-db --policy ept --cpu skylake-2019 --set ple_gap=128 --set ple_window=1024 \
  --input-format kvm-ftrace host.txt
check_contains "recple: PLE on: not re-decided, why, and the lower bound" "$(row PAUSE_INSTRUCTION)" \
  "not re-decided: the spin's length is not recorded: with ple_window=1024 at or below the recording host's window and ple_gap=128 at or above its gap (KVM's defaults 4096, grown on each PLE exit, and 128) at least $pauses exits"
check_eq "recple: no measured reason row is a silent 0" "" \
  "$(replay_table "$out" | awk '$1 ~ /^[A-Z_]+$/ && $4 == "0" { print $1 }')"
run "$VMXSIM" --no-db --policy ept --cpu skylake-2019 --set ple_gap=128 --format json --input-format kvm-ftrace host.txt
flat=$(printf '%s' "$out" | tr -d ' \t\n')
check_contains "recple: JSON: PLE on is not re-decided" "$flat" \
  "\"PAUSE_INSTRUCTION\":{\"count\":$pauses,"
check_contains "recple: JSON says why" "$flat" '"not_redecided":"thespin'"'"'slengthisnotrecorded:withple_window=4096'

# compare: per run, what its policy removed
"$VMXSIM" --db r.db --policy ept --cpu skylake-2019 --set apic_access_virt=true --input-format kvm-ftrace host.txt \
  > /dev/null
"$VMXSIM" --db r.db --policy apicv --cpu skylake-2019 --set pause_exiting=true --input-format kvm-ftrace host.txt \
  > /dev/null
run "$VMXSIM" compare --db r.db 1 2
check_rc "recple: compare beside the recording" 0
check_contains "recple: compare: run A's policy removed the PLE exits" "$out" \
  "A: PAUSE_INSTRUCTION: simulated 0: PAUSE-loop exiting is off (ple_gap=0)"
check_not_contains "recple: compare: run B's exited" "$out" "B: PAUSE_INSTRUCTION"
check_contains "recple: compare: run B's policy removed the interrupt windows" "$out" \
  "B: INTERRUPT_WINDOW: simulated 0: removed by virtual-interrupt delivery"
check_not_contains "recple: compare: run A took them" "$out" "A: INTERRUPT_WINDOW"
run "$VMXSIM" compare --db r.db --format json 1 2
flat=$(printf '%s' "$out" | tr -d ' \t\n')
check_contains "recple: compare's JSON names the removal per run" "$flat" \
  '"simulated_avg":[{"avg":null,"removed_by":"PAUSE-loopexitingisoff(ple_gap=0)'
