# CLI tests for the bash completion (scripts/completion/vmxsim.bash): what it offers is read from
# the program itself (--commands, each command's --help, policies and cpus as CSV), so a new
# command, option, preset, knob or profile completes without touching the script.
# Sourced by tests/cli/run.sh in a scratch directory; $VMXSIM is the program, $ROOT the repo.

if ! command -v bash >/dev/null 2>&1; then
  skip "bash not found"
  return 0 2>/dev/null || exit 0
fi

# comp WORD...: what completing the last word of "vmxsim WORD..." offers, one per line, sorted
comp() {
  bash -c '. "$1"; prog=$2; shift 2; COMP_WORDS=(vmxsim "$@"); COMP_CWORD=$#; _vmxsim "$prog"
           printf "%s\n" "${COMPREPLY[@]}"' _ "$ROOT/scripts/completion/vmxsim.bash" "$VMXSIM" "$@" | sort
}

check_eq "a command" "summary" "$(comp su)"
check_eq "every command (vmxsim --commands)" "$("$VMXSIM" --commands | sort | tr '\n' ' ')" \
  "$(comp '' | grep -vx -e '' $(ls | sed 's/^/-e /') | tr '\n' ' ')"
check_eq "a preset after --policy" "shadowcache" "$(comp --policy shadowc)"
check_eq "a preset after '+'" "shadowcache+lazydr" "$(comp --policy shadowcache+laz)"
check_eq "a CPU profile" "skylake-2019
skylake-xen-2018" "$(comp --cpu sky)"
check_eq "a knob after --set" "cr3_target_count=" "$(comp --set cr3_t)"
check_eq "an option of summary, from its --help" "--sort" "$(comp summary --so)"
check_eq "an option of run before the trace" "--no-db" "$(comp --no-d)"
check_eq "an option of run after the trace" "--no-db" "$(comp t.bin --no-d)"
check_eq "a format" "json" "$(comp summary --format j)"
: > trace-file.bin
check_eq "a file where a trace goes" "trace-file.bin" "$(comp --policy ept trace-f)"
check_eq "an option of cpus, from its --help" "--controls" "$(comp cpus --con)"
check_eq "a CPU profile after cpus --controls" "skylake-2019
skylake-xen-2018" "$(comp cpus --controls sky)"
