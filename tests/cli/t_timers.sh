# CLI tests for the guest's TSC-deadline timer and PAUSE-loop exiting: the knobs on the
# command line, the text syntax of a spin, VM entry on a CPU without the controls, and a
# sweep over the PLE window.
# Sourced by tests/cli/run.sh in a scratch directory; $VMXSIM is the program, $ROOT the repo.

"$VMXSIM" trace asm "$ROOT/traces/examples/timers.txt" -o timers.bin
SKY="--cpu skylake-2019 --no-db"

# ---- the timer: a host hrtimer (default) or the VMX-preemption timer ----
run "$VMXSIM" --policy ept $SKY timers.bin
check_rc "hrtimer: replays" 0
check_contains "hrtimer: the expiry while running is the host's timer interrupt" "$out" "EXTERNAL_INTERRUPT              1"
check_not_contains "hrtimer: no preemption-timer exit" "$out" "PREEMPTION_TIMER"
check_contains "the re-arms are MSR_WRITE exits" "$out" "MSR_WRITE                       3"
hrtimer_cycles=$(printf '%s\n' "$out" | sed -n 's/^cycles: total \([0-9]*\) .*/\1/p')

run "$VMXSIM" --policy ept --set lapic_timer=preemption $SKY timers.bin
check_rc "preemption: replays" 0
check_contains "preemption: the expiry while running is a PREEMPTION_TIMER exit" "$out" "PREEMPTION_TIMER                1"
check_not_contains "preemption: no host timer interrupt" "$out" "EXTERNAL_INTERRUPT"
check_contains "the run is named with the knob" "$out" "policy ept,lapic_timer=preemption"
preemption_cycles=$(printf '%s\n' "$out" | sed -n 's/^cycles: total \([0-9]*\) .*/\1/p')
if [ "$preemption_cycles" -lt "$hrtimer_cycles" ]; then pass "the preemption timer costs less than the hrtimer"
else fail "the preemption timer costs less than the hrtimer" "hrtimer: $hrtimer_cycles" "preemption: $preemption_cycles"; fi

run "$VMXSIM" --policy ept --set lapic_timer=tsc $SKY timers.bin
check_rc "an unknown timer is a usage error" 2
check_contains "the message names the choices" "$err" "knob lapic_timer: 'tsc' is not one of: hrtimer, preemption"

# ---- PAUSE-loop exiting ----
run "$VMXSIM" --policy ept $SKY timers.bin
check_not_contains "PLE off by default: no PAUSE exit" "$out" "PAUSE_INSTRUCTION"
run "$VMXSIM" --policy ept --set ple_gap=128 $SKY timers.bin
check_contains "ple_gap=128: the two long spins exit twice each" "$out" "PAUSE_INSTRUCTION               4"
run "$VMXSIM" --policy ept --set ple_gap=128 --set ple_window=20000 $SKY timers.bin
check_not_contains "a window longer than every spin: no PAUSE exit" "$out" "PAUSE_INSTRUCTION"
run "$VMXSIM" --policy ept --set ple_gap=128 --set ple_window_grow=0 $SKY timers.bin
check_contains "no growing: each long spin exits three times" "$out" "PAUSE_INSTRUCTION               6"
run "$VMXSIM" --policy ept --set ple_gap=-1 $SKY timers.bin
check_rc "a negative gap is a usage error" 2

# ---- the text syntax of a spin ----
printf 'pause\npause 400 40 +16000\n' > spin.txt
run "$VMXSIM" trace asm spin.txt -o spin.bin
check_rc "a spin assembles" 0
run "$VMXSIM" trace dump spin.bin
check_contains "a spin dumps as it was written" "$out" "pause 400 40 +16000"
printf 'pause 1 40\n' > single.txt
run "$VMXSIM" trace asm single.txt -o single.bin
check_rc "a gap on one PAUSE is bad input" 3
check_contains "the message names the file and line" "$err" "single.txt:1: pause record not valid: cycles between PAUSEs on a single PAUSE"
printf 'pause 1048577 40\n' > long.txt
run "$VMXSIM" trace asm long.txt -o long.bin
check_rc "a spin above 2^20 PAUSEs is bad input" 3
check_contains "the message gives the range" "$err" "long.txt:1: pause: PAUSEs in the spin 1048577 out of range 0..1048576"

# ---- VM entry on a CPU without the controls (SDM 26.2.1.1) ----
run "$VMXSIM" --policy shadowcache --set lapic_timer=preemption --cpu core2-2007 --no-db timers.bin
check_rc "the preemption timer on core2-2007 fails VM entry" 4
check_contains "the message names the control" "$err" "\"activate VMX-preemption timer\""
run "$VMXSIM" --policy shadowcache --set ple_gap=128 --cpu core2-2007 --no-db timers.bin
check_rc "PLE on core2-2007 fails VM entry" 4
check_contains "the message names the control" "$err" "\"PAUSE-loop exiting\""
run "$VMXSIM" --policy ept --set ple_gap=128 --cpu nehalem-2009 --no-db timers.bin
check_rc "PLE on nehalem-2009 (no PLE) fails VM entry" 4
run "$VMXSIM" --policy ept --set lapic_timer=preemption --cpu nehalem-2009 --no-db timers.bin
check_rc "the preemption timer on nehalem-2009 replays" 0

# ---- what-if over the window: a sweep ----
cat > ple.json <<'PLAN'
{
  "name": "ple",
  "traces": ["timers.bin"],
  "policies": [{"policy": "ept", "knobs": {"ple_gap": 128, "ple_window": [1024, 4096, 20000]}}],
  "cpus": ["skylake-2019"]
}
PLAN
run "$VMXSIM" sweep ple.json --db ple.db -j 1
check_rc "a sweep over ple_window runs" 0
check_contains "three runs" "$out" "3 runs"
if command -v sqlite3 >/dev/null 2>&1; then
  got=$(sqlite3 ple.db "SELECT r.policy || '=' || COALESCE((SELECT e.count FROM exits e WHERE e.run_id = r.id
        AND e.name = 'PAUSE_INSTRUCTION'), 0) FROM runs r ORDER BY r.policy" | tr '\n' ' ')
  check_eq "PAUSE exits fall as the window grows" \
    "ept,ple_gap=128,ple_window=1024=8 ept,ple_gap=128,ple_window=20000=0 ept,ple_gap=128,ple_window=4096=4 " "$got"
else
  skip "no sqlite3"
fi
