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

# `vmxsim cpus --controls`: per profile, which controls the CPU has.
run "$VMXSIM" cpus --controls
check_rc "cpus --controls" 0
for c in TPR EPT VPID UG APIC-acc APIC-reg VID PI x2APIC timer PLE IPIv; do
  check_contains "cpus --controls: a column $c" "$(printf '%s\n' "$out" | sed -n 3p)" " $c"
done
check_contains "cpus --controls: the legend spells the SDM's names" "$out" "IPIv      IPI virtualization"
run "$VMXSIM" cpus --format csv
builtin=$(printf '%s\n' "$out" | awk -F, 'NR > 1 { print $1 }')
run "$VMXSIM" cpus --controls --format csv
csv=$out
check_eq "cpus --controls --format csv: one row per built-in profile" "$builtin" "$(printf '%s\n' "$csv" | awk -F, 'NR > 1 { print $1 }')"
check_eq "cpus --controls --format csv: the header" \
  "name,tpr_shadow,ept,vpid,unrestricted_guest,virtualize_apic_accesses,apic_register_virtualization,virtual_interrupt_delivery,posted_interrupts,virtualize_x2apic_mode,preemption_timer,pause_loop_exiting,ipi_virtualization" \
  "$(printf '%s\n' "$csv" | head -1)"

# The columns say what VM entry does: a policy setting a control the CPU lacks
# fails (exit code 4), one it has runs.
has() { # profile column
  printf '%s\n' "$csv" | awk -F, -v p="$1" -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
                                                    $1 == p { print $col[c] }'
}
for cpu in $builtin; do
  for pair in "tpr_shadow:--set tpr_shadow=true" "ept:--set paging=ept --set shadow_pages_max=0" \
              "vpid:--set vpid=true" "virtualize_apic_accesses:--set apic_access_virt=true"; do
    col=${pair%%:*}; sets=${pair#*:}
    # shellcheck disable=SC2086
    run "$VMXSIM" --policy shadowcache --set tpr_shadow=false $sets --cpu "$cpu" --no-db cpuid.bin
    want=0; [ "$(has "$cpu" "$col")" = 1 ] || want=4
    check_eq "cpus --controls: $cpu $col=$(has "$cpu" "$col") agrees with VM entry" "$want" "$rc"
  done
done

run "$VMXSIM" cpus --controls --format json skylake-2019
check_contains "cpus --controls --format json: a controls object" "$(printf '%s' "$out" | tr -d ' \t\n')" \
  '"name":"skylake-2019","controls":{"tpr_shadow":true,"ept":true'
if command -v python3 >/dev/null 2>&1; then
  printf '%s' "$out" | python3 -c 'import json,sys; json.load(sys.stdin)' && pass "cpus --controls JSON parses" ||
    fail "cpus --controls JSON parses" "$out"
fi

# A profile file (as calibrate writes one) is listed by its name, as the built-in.
cp "$ROOT/models/cpus/nehalem-2009.json" myhost.json
run "$VMXSIM" cpus --controls --format csv myhost.json
check_eq "cpus --controls FILE: the file's controls" "$(printf '%s\n' "$csv" | grep '^nehalem-2009,')" \
  "$(printf '%s\n' "$out" | sed -n 2p)"

run "$VMXSIM" cpus --controls nosuch
check_rc "cpus --controls: an unknown profile is a usage error" 2
check_contains "cpus --controls: the unknown profile named" "$err" "unknown CPU profile 'nosuch'"
check_eq "cpus --controls: nothing printed on error" "" "$out"
printf '{\n  "name": "x",\n' > bad.json
run "$VMXSIM" cpus --controls bad.json
check_rc "cpus --controls: a malformed profile is bad input" 3
check_contains "cpus --controls: the malformed file named with its line" "$err" "bad.json:"
run "$VMXSIM" cpus skylake-2019
check_rc "cpus: a profile name without --controls is a usage error" 2
check_contains "cpus: says why" "$err" "only with --controls"
run "$VMXSIM" cpus --help
check_contains "cpus --help documents --controls" "$out" "--controls"

# The 2020s server profile: every control a modern KVM uses, IPI virtualization included
# (Sapphire Rapids is the first processor with it; Skylake has none).
check_eq "sapphirerapids-2023 has IPI virtualization" "1" "$(has sapphirerapids-2023 ipi_virtualization)"
check_eq "skylake-2019 has no IPI virtualization" "0" "$(has skylake-2019 ipi_virtualization)"
check_eq "sapphirerapids-2023 has every listed control" "" \
  "$(printf '%s\n' "$csv" | awk -F, '$1 == "sapphirerapids-2023"' | tr ',' '\n' | grep -x 0)"
