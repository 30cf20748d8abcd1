# CLI tests for `vmxsim repl` without a terminal: scripted sessions diffed against transcripts,
# batch files, startup errors, stats and save.
# Sourced by tests/cli/run.sh in a scratch directory; $VMXSIM is the program, $ROOT the repo.
# The transcripts are tests/cli/repl/NAME.cmd (stdin) and NAME.expected (stdout and stderr);
# They run on tests/cli/repl/cpu.json, round-number costs that recalibrating the real CPU
# profiles leaves alone.  UPDATE=1 rewrites the .expected files from the actual output
# (review the diff before committing).

R="$ROOT/tests/cli/repl"

run "$VMXSIM" trace asm "$R/repl.txt" -o repl.bin
check_rc "asm repl.txt" 0

# ---- transcripts ----

transcript() { # name expected-rc
  "$VMXSIM" repl repl.bin --cpu "$R/cpu.json" --echo < "$R/$1.cmd" > "$1.out" 2>&1
  rc=$?
  [ -n "$UPDATE" ] && cp "$1.out" "$R/$1.expected"
  if diff -u "$R/$1.expected" "$1.out" > "$1.diff"; then pass "transcript $1"
  else fail "transcript $1 (diff expected actual)" "$(cat "$1.diff")"; fi
  check_rc "transcript $1: exit code" "$2"
}
transcript stepping 3        # ends by stepping past the end: an error
transcript breakpoints 0
transcript info 0
transcript explain 0
transcript errors 3

# ---- plain stdin: no prompt, no escape codes, Enter repeats, quit stops reading ----

run sh -c "printf 'step\n\nquit\nstep\n' | \"$VMXSIM\" repl repl.bin"
check_rc "piped session exits 0" 0
check_eq "piped session: output only, Enter repeats step, nothing after quit" \
"event 0 vcpu 0: @init cr0=0x80050033  -> no exit
event 1 vcpu 0: @init cr3=0x1000  -> no exit" "$out"
check_not_contains "piped session: no escape codes" "$out" "$(printf '\033')"

run sh -c "printf 'next-exit 2\n# a comment\n\n' | \"$VMXSIM\" repl repl.bin"
check_eq "a comment line does not clear the repeat" "event 8 vcpu 0: touch 0x400000 2 w  -> 2 exits EXCEPTION_NMI
event 11 vcpu 0: cr4w 0x6f0  -> exit CR_ACCESS" "$out"

# gdb's habits: step N shows each event; Enter repeats the last command, or nothing after one
# that does not repeat (until, break...), never an older one
run sh -c "printf 'step 3\n' | \"$VMXSIM\" repl repl.bin"
check_eq "step 3 shows each event" "event 0 vcpu 0: @init cr0=0x80050033  -> no exit
event 1 vcpu 0: @init cr3=0x1000  -> no exit
event 2 vcpu 0: @init cr4=0x6f0  -> no exit" "$out"
run sh -c "printf 'step\nuntil 5\n\nevent\n' | \"$VMXSIM\" repl repl.bin"
check_eq "Enter after until (which does not repeat) does nothing, not the older step" \
"event 0 vcpu 0: @init cr0=0x80050033  -> no exit
event 5 vcpu 1: @init cr4=0x6f0  -> no exit
event 5 of 28, vcpu 1: @init cr4=0x6f0
no exit: initial guest register state
cycles: 0 native, 0 in the hypervisor" "$out"
run sh -c "printf 'step 2\ncontinue\n\n' | \"$VMXSIM\" repl repl.bin"
check_contains "Enter after continue repeats continue" "$out" "end of trace after event 27 (all 28 events replayed)"
check_not_contains "Enter after continue does not repeat the older step" "$out" "event 27 vcpu 0: mark done  -> no exit
event"
check_contains "... it says the trace is over" "$err" "end of trace: all 28 events replayed; 'reset' starts over"

# history: the commands of the session, numbered (comments and blank lines left out)
run sh -c "printf 'step\n# note\nevent\n\nhistory\nhistory 2\n' | \"$VMXSIM\" repl repl.bin"
check_contains "history lists the commands" "$out" "    1  step
    2  event
    3  history
    3  history"
check_contains "history N lists the last N" "$out" "    3  history
    4  history 2"

# bare info lists its topics
run sh -c "printf 'info\n' | \"$VMXSIM\" repl repl.bin"
check_rc "bare info is not an error" 0
for topic in vmcs regs cr3targets shadow tlb; do check_contains "bare info lists $topic" "$out" "  info $topic"; done

# info shadow says how many pages it leaves out
{ printf '@init cr0=0x80050033 cr3=0x1000 cr4=0x6f0\n'
  for i in 1 2 3 4 5 6; do printf 'touch 0x%x000000000 1 w\n' $i; done; } > pages.txt
"$VMXSIM" trace asm pages.txt -o pages.bin
run sh -c "printf 'continue\ninfo shadow\n' | \"$VMXSIM\" repl pages.bin"
listed=$(printf '%s\n' "$out" | grep -c '^  #')
more=$(printf '%s\n' "$out" | sed -n 's/^  \.\.\. \([0-9]*\) more.*/\1/p')
used=$(printf '%s\n' "$out" | sed -n 's/^shadow pool: \([0-9]*\) of .*/\1/p')
check_eq "info shadow: listed + 'N more' = pages used" "$used" "$((listed + ${more:-0}))"
check_contains "info shadow: says how many it listed" "$out" "more (the 8 oldest are listed)"

run sh -c "printf 'help\n' | \"$VMXSIM\" repl repl.bin"
check_contains "help: generated table with aliases" "$out" "  step [N]              s        replay N events (default 1), showing each"
check_contains "help: next-exit aliases" "$out" "  next-exit [N]         n, nx    replay up to and including the Nth next VM exit (default 1)"
check_contains "help: history" "$out" "  history [N]                    the last N commands (default 20), numbered"
run sh -c "printf 'help b\n' | \"$VMXSIM\" repl repl.bin"
check_contains "help CMD by alias" "$out" "break KIND [VALUE]   (aliases: b)"
check_contains "help CMD details" "$out" "  break cr3 VALUE      a guest CR3 write of that value (break cr3 0x1000)"

# ---- --batch: comments, blank lines skipped, FILE:LINE on errors ----

cat > ok.cmd <<'EOF'
# a batch file
step 7      # trailing comment

next-exit
EOF
run "$VMXSIM" repl repl.bin --batch ok.cmd
check_rc "batch without errors exits 0" 0
check_eq "batch: blank lines do not repeat (step 7 shows each event)" "event 0 vcpu 0: @init cr0=0x80050033  -> no exit
event 1 vcpu 0: @init cr3=0x1000  -> no exit
event 2 vcpu 0: @init cr4=0x6f0  -> no exit
event 3 vcpu 1: @init cr0=0x80050033  -> no exit
event 4 vcpu 1: @init cr3=0x1000  -> no exit
event 5 vcpu 1: @init cr4=0x6f0  -> no exit
event 6 vcpu 0: run 1000  -> no exit
event 7 vcpu 0: cpuid 0x1 +100  -> exit CPUID" "$out"

printf 'step\nbogus\n\nstep 2\n' > bad.cmd
run "$VMXSIM" repl repl.bin --batch bad.cmd
check_rc "batch with an error exits 3" 3
check_eq "batch error names file and line" "bad.cmd:2: Unknown command 'bogus'; try 'help'" "$err"
check_contains "batch goes on after an error" "$out" "event 2 vcpu 0: @init cr4=0x6f0  -> no exit"

printf 'step\nstep\000 5\nstep 2\n' > nul.cmd
run "$VMXSIM" repl repl.bin --batch nul.cmd
check_rc "batch with a NUL byte exits 3" 3
check_eq "a NUL byte names file, line and column" "nul.cmd:2: NUL byte at column 5 (the line is not run)" "$err"
check_eq "the line with the NUL byte is not run, in part or whole (step 2 shows both events)" \
"event 0 vcpu 0: @init cr0=0x80050033  -> no exit
event 1 vcpu 0: @init cr3=0x1000  -> no exit
event 2 vcpu 0: @init cr4=0x6f0  -> no exit" "$out"

run "$VMXSIM" repl repl.bin --batch missing.cmd
check_rc "missing batch file exits 3" 3
check_eq "missing batch file message" "vmxsim: missing.cmd: No such file or directory" "$err"

# ---- stats and save ----

run sh -c "printf 'next-exit 3\nstats\n' | \"$VMXSIM\" repl repl.bin --policy nocache"
check_contains "stats: progress line" "$out" "after 9 of 28 events:"
check_contains "stats: report identity" "$out" "trace repl.bin (repl, 2 vCPUs, 64-bit paging), policy nocache, cpu core2-2007"
check_contains "stats: exits so far" "$out" "9 events, 3 VM exits"

run sh -c "printf 'until 12\nsave\n' | \"$VMXSIM\" repl repl.bin --db runs.db --set cr3_target_count=1 --policy cr3cache"
check_rc "save succeeds" 0
check_contains "save reports the run" "$out" "saved run 1 to runs.db (partial: 13 of 28 events)"
if command -v sqlite3 >/dev/null 2>&1; then
  check_eq "saved run is marked partial" "1|13|cr3cache,cr3_target_count=1" \
    "$(sqlite3 runs.db 'SELECT partial, events, policy FROM runs WHERE id = 1')"
fi
run sh -c "printf 'save\n' | \"$VMXSIM\" repl repl.bin --db /nonexistent/dir/x.db"
check_rc "save to an unwritable database: the session reports it" 3
check_contains "save error names the database" "$err" "/nonexistent/dir/x.db"

# ---- startup ----

run "$VMXSIM" repl --help
check_rc "repl --help exits 0" 0
check_contains "repl --help has usage" "$out" "usage: vmxsim repl TRACE [--policy P]"
run "$VMXSIM" repl
check_rc "repl without a trace exits 2" 2
check_eq "repl without a trace: message" "vmxsim: repl: no trace given; see 'vmxsim repl --help'" "$err"
run "$VMXSIM" repl missing.bin
check_rc "repl of a missing trace exits 3" 3
check_eq "repl of a missing trace: message" "vmxsim: missing.bin: No such file or directory" "$err"
run "$VMXSIM" repl repl.bin --policy nosuch
check_rc "repl with an unknown policy exits 2" 2
check_contains "unknown policy message" "$err" "vmxsim: unknown policy 'nosuch'"
run "$VMXSIM" repl repl.bin --set cr3_target_count=9 < /dev/null
check_rc "repl with a configuration that fails VM entry exits 4" 4
check_contains "VM entry failure message" "$err" "CR3_TARGET_COUNT is 9"
# a policy the CPU profile cannot take names the built-in profiles that can, as run does, at
# the start and for a 'policy' command
run "$VMXSIM" run --no-db --policy ept --cpu core2-2007 repl.bin
capable=${err#*; the built-in CPU profiles that take it: }
check_contains "run names the profiles that take ept" "$err" "; the built-in CPU profiles that take it: "
run "$VMXSIM" repl repl.bin --policy ept --cpu core2-2007 < /dev/null
check_rc "repl with a policy its CPU profile cannot take exits 4" 4
check_contains "... and names the profiles that take it, as run does" "$err" \
  "(CPU profile core2-2007, policy ept); the built-in CPU profiles that take it: $capable"
run sh -c "printf 'policy ept\npolicy\n' | \"$VMXSIM\" repl repl.bin --cpu core2-2007"
check_contains "a 'policy' command the profile cannot take names the profiles that take it" "$out$err" \
  "(CPU profile core2-2007, policy ept); the built-in CPU profiles that take it: $capable"
check_contains "... and keeps the session's policy" "$out" "policy shadowcache"
run "$VMXSIM" repl repl.bin --frob
check_rc "repl with an unknown option exits 2" 2
run sh -c "printf 'policy\n' | \"$VMXSIM\" repl repl.bin -p shadowcache+lazydr -s dr_switch=eager"
check_eq "--policy and --set are used" "policy shadowcache+lazydr,dr_switch=eager" "$out"
