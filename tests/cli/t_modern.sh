# Modern hosts: the era-faithful ept preset and what `vmxsim cpus` says of each CPU's controls.

# A profile's value of KEY (the "value" line after the key's own line).
profile_value() { # file key
  awk -v k="\"$2\": {" 'index($0, k) { on = 1 } on && /"value"/ { sub(/.*"value": */, ""); sub(/,.*/, ""); print; exit }' "$1"
}
# One field of the CSV row whose section and name are given (quoted fields,
# such as a policy with overrides, are blanked first: they may hold commas).
csv_field() { # csv section name column
  printf '%s\n' "$1" | sed 's/"[^"]*"/Q/g' | awk -F, -v s="$2" -v n="$3" -v c="$4" '$5 == s && $6 == n { print $c; exit }'
}

# Under ept a CPUID round trip is the profile's round trip, CPUID handler and
# VMCS accesses, nothing more: modern KVM switches debug registers lazily
# (since 2009), so skylake-2019 prices the ~1800 cycles its source measured.
"$VMXSIM" gen cpuid --count 100 -o cpuid.bin >/dev/null
run "$VMXSIM" --policy ept --cpu skylake-2019 --no-db --format csv cpuid.bin
check_rc "ept on skylake-2019 runs" 0
P="$ROOT/models/cpus/skylake-2019.json"
exits=$(csv_field "$out" exit CPUID 8)
want=$(( $(profile_value "$P" vm_roundtrip) + $(profile_value "$P" handler.CPUID) +
         ($(csv_field "$out" counter vmreads 8) * $(profile_value "$P" vmread) +
          $(csv_field "$out" counter vmwrites 8) * $(profile_value "$P" vmwrite)) / exits ))
check_eq "ept: a CPUID round trip is round trip + handler + VMCS accesses" "$want" "$(csv_field "$out" exit CPUID 10)"
check_eq "ept: no host debug-register save on an exit" "0" "$(csv_field "$out" counter dr_host_saves 8)"

# The 2009-era eager scheme is still there for whoever names it.
run "$VMXSIM" --policy ept --set dr_switch=eager --cpu skylake-2019 --no-db --format csv cpuid.bin
check_eq "ept,dr_switch=eager saves the host's 6 debug registers per exit" "$((exits * 6))" \
  "$(csv_field "$out" counter dr_host_saves 8)"

# A modern KVM uses the TPR shadow: CR8 accesses do not exit under ept.
cat > cr8.txt <<'TXT'
@paging 64
@init cr0=0x80050033 cr3=0x10000000 cr4=0x6f0
run 100
cr8w 2
cr8r
mark op
TXT
"$VMXSIM" trace asm cr8.txt -o cr8.bin
run "$VMXSIM" --policy ept --cpu nehalem-2009 --no-db --format csv cr8.bin
check_eq "ept: CR8 accesses do not exit (TPR shadow)" "" "$(csv_field "$out" exit CR_ACCESS 8)"
run "$VMXSIM" --policy ept --set tpr_shadow=false --cpu nehalem-2009 --no-db --format csv cr8.bin
check_eq "ept,tpr_shadow=false: both CR8 accesses exit" "2" "$(csv_field "$out" exit CR_ACCESS 8)"

# A modern preset on a CPU without secondary controls names every control it wanted.
run "$VMXSIM" --policy ept --cpu core2-2007 --no-db cpuid.bin
check_rc "ept on core2-2007 fails VM entry" 4
check_contains "the failure names EPT among the wanted controls" "$err" '"enable EPT"'
check_contains "and APIC-access virtualization" "$err" '"virtualize APIC accesses", '
