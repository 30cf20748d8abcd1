#!/bin/sh
# Creates the skeletons of vmxsim's own regression cases: every workload generator
# at a small size under every policy preset and the documented compositions, and
# the sample traces in traces/ (*.bin) and traces/examples/.  Existing case files are kept (-f rewrites them,
# dropping their expectations).  Then record the expectations from the current
# model:
#   tests/regress/make-cases.sh && ./vmxsim regress --update tests/regress
# Usage: tests/regress/make-cases.sh [-f] [VMXSIM]   (with VMXSIM, runs the --update too)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
force=0
if [ "${1:-}" = "-f" ]; then force=1; shift; fi
vmxsim=${1:-}

POLICIES="nocache shadowcache cr3cache prevroots ept shadowcache+lazydr ept+cr4mask shadowcache+cr4mask"
SAMPLE_POLICIES="shadowcache ept"
CPU=core2-2007
EPT_CPU=nehalem-2009   # the first CPU with EPT and VPID: the 2007 Core 2 has neither
TOLERANCE=0.001

# Workload variants: NAME|DESCRIPTION|generator arguments (kept small: each
# replays in milliseconds, also under sanitizers).
VARIANTS='lat_ctx-2p|lat_ctx, 2 processes, 0 KB, 50 trips|lat_ctx --procs 2 --size 0 --iters 50
lat_ctx-8p-16k|lat_ctx, 8 processes, 16 KB each, 10 trips|lat_ctx --procs 8 --size 16 --iters 10
hackbench-1g|hackbench, 1 group, 1 loop, sockets|hackbench --groups 1 --loops 1
syscalls-hvm|null system calls, guest syscall/sysret|syscalls --count 200 --mode hvm
syscalls-pti|null system calls, PTI without PCID|syscalls --count 200 --mode pti
syscalls-pv64|null system calls, 64-bit Xen PV guest|syscalls --count 200 --mode pv64
cr4toggle-pge|global TLB flushes by toggling CR4.PGE|cr4toggle --count 100 --bit pge
cr4toggle-tsd|CR4.TSD toggles|cr4toggle --count 100 --bit tsd
debug-3p|3 processes, 1 under a debugger, 20 trips|debug --procs 3 --iters 20 --debugged 1
cpuid|a CPUID loop, leaf 0|cpuid --count 100'

created=0
kept=0

# json_array WORD...: ["WORD", "WORD", ...]
json_array() {
  s=""
  for w in "$@"; do s="$s${s:+, }\"$w\""; done
  printf '[%s]' "$s"
}

# write_case FILE DESCRIPTION POLICY SOURCE-KEY SOURCE-JSON [CPU [SET-JSON]]
# Keys in sorted order with 2-space indentation: the layout --update writes.
write_case() {
  if [ -e "$1" ] && [ "$force" = 0 ]; then kept=$((kept + 1)); return; fi
  {
    printf '{\n'
    case "$3" in ept*) cpu=$EPT_CPU ;; *) cpu=$CPU ;; esac
    printf '  "cpu": "%s",\n' "${6:-$cpu}"
    printf '  "cycles_tolerance": %s,\n' "$TOLERANCE"
    printf '  "description": "%s",\n' "$2"
    [ "$4" = generate ] && printf '  "generate": %s,\n' "$5"
    printf '  "policy": "%s"' "$3"
    [ -n "${7:-}" ] && printf ',\n  "set": %s' "$7"
    [ "$4" = trace ] && printf ',\n  "trace": %s' "$5"
    printf '\n}\n'
  } > "$1"
  created=$((created + 1))
}

while IFS='|' read -r name desc args; do
  for p in $POLICIES; do
    # shellcheck disable=SC2086
    write_case "$here/$name.$p.json" "$desc, under $p" "$p" generate "$(json_array $args)"
  done
done <<EOF
$VARIANTS
EOF

# Sample traces: traces/*.bin (made by traces/make-samples.sh) and the hand-written
# traces/examples/ (traces/recorded/ holds raw recordings that need 'vmxsim import').
for t in $(cd "$root/traces" && ls ./*.bin examples/*.txt examples/*.bin 2>/dev/null | sed 's#^\./##' | sort); do
  base=$(basename "$t"); base=${base%.*}
  for p in $SAMPLE_POLICIES; do
    write_case "$here/sample-$base.$p.json" "sample trace traces/$t, under $p" "$p" trace "\"../../traces/$t\""
  done
done

# What-if cases: the timers sample under what KVM does where the CPU has it
# (nehalem-2009 has no PAUSE-loop exiting): NAME|SET-JSON|WHAT.
MODERN_CPU=skylake-2019
WHATIF='ept-preemption|{"lapic_timer": "preemption"}|the deadline in the VMX-preemption timer
ept-ple|{"ple_gap": 128}|PAUSE-loop exiting (KVM gap and window)
ept-preemption-ple|{"lapic_timer": "preemption", "ple_gap": 128}|the preemption timer and PAUSE-loop exiting'
while IFS='|' read -r name set what; do
  write_case "$here/sample-timers.$name.json" "sample trace traces/examples/timers.txt, under ept with $what" \
    ept trace '"../../traces/examples/timers.txt"' "$MODERN_CPU" "$set"
done <<EOF
$WHATIF
EOF
# The APIC-virtualization sample under a host's configuration without APICv
# (FlexPriority), under apicv, and under ipiv on the test profile with IPI
# virtualization (no built-in profile has it).
apicv='"../../traces/examples/apicv.txt"'
write_case "$here/sample-apicv.ept+flexpriority.json" "sample trace traces/examples/apicv.txt, under ept with virtualize APIC accesses" \
  ept trace "$apicv" skylake-2019 '{"apic_access_virt": true}'
write_case "$here/sample-apicv.apicv.json" "sample trace traces/examples/apicv.txt, under apicv" apicv trace "$apicv" skylake-2019
write_case "$here/sample-apicv.ipiv.json" "sample trace traces/examples/apicv.txt, under ipiv" ipiv trace "$apicv" \
  ../data/profiles/ipiv-test.json

# The interrupt-driven generators on a modern host without APICv, with APICv, with
# IPI virtualization (the test profile: no built-in CPU has it) and with the
# deadline in the VMX-preemption timer: NAME|DESCRIPTION|CASES|generator arguments,
# CASES among INTR_POLICIES' names; POLICY-NAME|POLICY|CPU|SET-JSON|WHAT.
INTR_VARIANTS='ipi-x2apic|IPI round trips, x2APIC, 50 trips|ept apicv ipiv|ipi --count 50 --apic x2apic
ipi-xapic|IPI round trips, xAPIC, 50 trips|ept apicv ipiv|ipi --count 50 --apic xapic
interrupts-2v|an interrupt-driven guest, 2 vCPUs (1 busy), 100 ms|ept ept-preemption apicv|interrupts --vcpus 2 --busy 1 --duration 100'
INTR_POLICIES='ept|ept|skylake-2019||ept
ept-preemption|ept|skylake-2019|{"lapic_timer": "preemption"}|ept with the deadline in the VMX-preemption timer
apicv|apicv|skylake-2019||apicv
ipiv|ipiv|../data/profiles/ipiv-test.json||ipiv'
while IFS='|' read -r name desc cases args; do
  while IFS='|' read -r pname pol cpu set what; do
    case " $cases " in *" $pname "*) ;; *) continue ;; esac
    # shellcheck disable=SC2086
    write_case "$here/$name.$pname.json" "$desc, under $what" "$pol" generate "$(json_array $args)" "$cpu" "$set"
  done <<EOF2
$INTR_POLICIES
EOF2
done <<EOF
$INTR_VARIANTS
EOF

echo "make-cases: $created created, $kept kept (existing files are not touched; -f rewrites them)"
if [ -n "$vmxsim" ]; then
  "$vmxsim" regress --update "$here"
else
  echo "now record the expectations: ./vmxsim regress --update tests/regress"
fi
