# CLI tests for `vmxsim calibrate` (t_calibrate.sh checks scripts/calibrate.py): a profile fitted from a recording replays that recording under
# the recording's own policy with every reason's simulated average within 5% of the measured one
# (the xentrace fixture and the hand-made KVM ftrace excerpt); fitted values say where they come
# from; too few samples keep the base value and say so.
# Sourced by tests/cli/run.sh in a scratch directory; $VMXSIM is the program, $ROOT the repo.

# within5 OUT: the reasons of the measured-beside-simulated table whose averages differ by more than 5%
within5() {
  printf '%s\n' "$1" | awk '/^measured \(the recording\)/ { on = 1; next } /by address space/ { on = 0 }
    on && $1 ~ /^[A-Z_]+$/ && NF == 7 { r = $5 / $3; if (r < 0.95 || r > 1.05 || $2 != $4) print $1, $3, $5 }'
}

"$VMXSIM" import xentrace "$ROOT/tests/data/xentrace-sample/sample.xentrace" -o xen.trace >/dev/null
run "$VMXSIM" calibrate xen.trace --cpu skylake-xen-2018 --policy shadowcache -o myhost.json
check_rc "calibrate: the xentrace fixture" 0
check_contains "calibrate: prints what it fitted" "$out" " handler.CR_ACCESS.cr3 write            3380     1637       905      2735"
# the fixture's CPUID exits (895 cycles) leave a round trip far under the hardware's: said so
check_contains "calibrate: an implausibly short round trip is pointed out" "$err" \
  "probably start and end inside the host"
run "$VMXSIM" --no-db --cpu myhost.json --policy shadowcache xen.trace
check_rc "calibrate: the profile is a --cpu path" 0
check_contains "calibrate: the run names the fitted profile" "$out" "cpu myhost (2.50 GHz)"
check_eq "calibrate: every reason within 5% of measured (xentrace)" "" "$(within5 "$out")"
check_eq "calibrate: five reasons compared (xentrace)" "5" \
  "$(printf '%s\n' "$out" | awk '/^measured \(the recording\)/ { on = 1; next } /by address space/ { on = 0 } on && $1 ~ /^[A-Z_]+$/' | wc -l | tr -d ' ')"
flat=$(tr -d ' \t\n' < myhost.json)
check_contains "calibrate: a fitted value is measured, with samples and spread" "$flat" \
  '"handler.MSR_WRITE":{"value":973,"kind":"measured","source":"vmxsimcalibratefromxen.trace(xxh64'
check_contains "calibrate: sample count and spread" "$flat" '"samples":291,"spread":{"stddev":427.1,"p5":1058,"p50":1742,"p95":2394}'
check_contains "calibrate: the round trip from CPUID" "$flat" '"vm_roundtrip":{"value":289,"kind":"measured"'
check_contains "calibrate: the recording's identity" "$flat" '"calibration":{"recording":"xen.trace","hash":"'

run "$VMXSIM" calibrate xen.trace --cpu skylake-xen-2018 --policy shadowcache --min-samples 150 -o few.json
check_contains "calibrate: too few samples keep the base value" "$out" " handler.HLT                             345      345       147"
check_contains "calibrate: and say so" "$(tr -d '\n' < few.json)" "kept: only 147 measured exits in xen.trace"

"$VMXSIM" import kvm-ftrace "$ROOT/traces/recorded/kvm-ftrace-shadow.txt" -o kvm.trace >/dev/null
run "$VMXSIM" calibrate kvm.trace --cpu skylake-2019 --policy shadowcache -o kvmhost.json
check_rc "calibrate: the KVM ftrace excerpt" 0
run "$VMXSIM" --no-db --cpu kvmhost.json --policy shadowcache kvm.trace
check_eq "calibrate: every reason within 5% of measured (KVM ftrace)" "" "$(within5 "$out")"
check_eq "calibrate: six reasons compared (KVM ftrace)" "6" \
  "$(printf '%s\n' "$out" | awk '/^measured \(the recording\)/ { on = 1; next } /by address space/ { on = 0 } on && $1 ~ /^[A-Z_]+$/' | wc -l | tr -d ' ')"

run "$VMXSIM" calibrate xen.trace -o x.json
check_rc "calibrate: --cpu is required" 2
printf 'hlt\n' > plain.txt && "$VMXSIM" trace asm plain.txt -o plain.bin
run "$VMXSIM" calibrate plain.bin --cpu skylake-2019 -o p.json
check_rc "calibrate: a trace without measurements is bad input" 3
check_contains "calibrate: says why" "$err" "plain.bin: no measured exits to fit"

# measured exits the replay never took under the policy are not fitted: a warning per reason says
# so with the count (the shadow-paging recording under ept: its #PF and CR3 exits have no
# counterpart, as EPT neither intercepts guest page faults nor CR3 writes)
run "$VMXSIM" calibrate "$ROOT/traces/recorded/kvm-ftrace-shadow.txt" --cpu skylake-2019 --policy ept -o unmatched.json
check_rc "calibrate under a policy that does not take every measured exit" 0
for pair in "57 EXCEPTION_NMI" "155 CR_ACCESS"; do
  check_contains "calibrate: warns of the ${pair#* } exits it could not fit" "$err" \
    "vmxsim: warning: calibrate: ${pair% *} measured ${pair#* } exits have no simulated counterpart under policy ept, so no cost of theirs is fitted"
done
run "$VMXSIM" calibrate "$ROOT/traces/recorded/kvm-ftrace-shadow.txt" --cpu skylake-2019 --policy shadowcache -o matched.json
check_eq "calibrate under the host's policy: no such warning" "" "$(printf '%s\n' "$err" | grep 'no simulated counterpart')"

# --domain, as run takes it: a xentrace recording of several guest domains needs one (the
# message lists them), and a trace imported from such a recording is refused; with --domain 1
# the recording fits what its domain 1 imported alone fits
HOST="$ROOT/tests/data/xentrace-host/host.xentrace"
run "$VMXSIM" calibrate "$HOST" --cpu skylake-xen-2018 -o host.json
check_rc "calibrate: a recording of two guest domains without --domain is a usage error" 2
check_contains "calibrate: ... naming them" "$err" "the recording holds 2 guest domains (1, 2): give --domain D to replay one"
run "$VMXSIM" calibrate --domain 1 "$HOST" --cpu skylake-xen-2018 -o d1.json
check_rc "calibrate --domain 1 of the recording" 0
fits_recording=$(printf '%s\n' "$out" | grep -E '^ (vm_|handler)')
"$VMXSIM" import xentrace --domain 1 "$HOST" -o d1.trace 2> /dev/null
run "$VMXSIM" calibrate d1.trace --cpu skylake-xen-2018 -o d1t.json
check_contains "calibrate: ... fits something" "$fits_recording" " measured"
check_eq "calibrate --domain 1: the fits of domain 1 imported alone" "$fits_recording" \
  "$(printf '%s\n' "$out" | grep -E '^ (vm_|handler)')"
"$VMXSIM" import xentrace "$HOST" -o all.trace 2> /dev/null
run "$VMXSIM" calibrate --domain 1 all.trace --cpu skylake-xen-2018 -o all.json
check_rc "calibrate: a trace of several domains is a usage error" 2
check_contains "calibrate: ... saying how to import one" "$err" "all.trace: the trace holds domains 0, 1, 2: a replay takes one"
run "$VMXSIM" calibrate --domain 70000 "$HOST" --cpu skylake-xen-2018 -o x.json
check_rc "calibrate: --domain beyond 16 bits is a usage error" 2
run "$VMXSIM" calibrate --help
check_contains "calibrate --help: --domain" "$out" "-d, --domain D"
