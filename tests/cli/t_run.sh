# `vmxsim run` (and the bare `vmxsim --policy`), `policies`, `cpus`, --help/--version, exit codes.

cat > t.txt <<'TXT'
@paging 64
@init cr0=0x80050033 cr3=0x10000000 cr4=0x6f0
run 1000
cr3w 0x10100000
touch 0x400000 2 w
cr4w 0x670
cr4w 0x6f0
cpuid 1
drw 7 0x401
mark op
cr3w 0x10000000
touch 0x400000 2 w
mark op
TXT
"$VMXSIM" trace asm t.txt -o t.bin

run "$VMXSIM" --version
check_rc "--version" 0
check_contains "--version prints the version" "$out" "vmxsim 0."
run "$VMXSIM" --help
check_rc "--help" 0
check_contains "--help documents exit codes" "$out" "exit codes"
check_contains "--help lists reproduce" "$out" "reproduce"
run "$VMXSIM"
check_rc "no arguments is a usage error" 2
run "$VMXSIM" frobnicate
check_rc "unknown command" 2
check_contains "unknown command named" "$err" "unknown command 'frobnicate'"
check_eq "... with no near command, where they are listed" "vmxsim: unknown command 'frobnicate'; see 'vmxsim --help'" "$err"
# a slip of the fingers, or another tool's word for one of ours, gets the command it meant
for pair in summry:summary comapre:compare rgress:regress polices:policies stat:summary record:import diff:compare; do
  run "$VMXSIM" "${pair%%:*}"
  check_rc "unknown command ${pair%%:*}" 2
  check_eq "${pair%%:*}: did you mean ${pair#*:}" \
    "vmxsim: unknown command '${pair%%:*}'; did you mean '${pair#*:}'? ('vmxsim --help' lists the commands)" "$err"
done
run "$VMXSIM" run --help
check_rc "run --help" 0
check_contains "run --help has an example" "$out" "example:"

run "$VMXSIM" policies
check_rc "policies" 0
for p in nocache shadowcache cr3cache prevroots ept cr4mask lazydr; do check_contains "policies lists $p" "$out" "$p"; done
for k in cr0_guest_host_mask cr4_guest_host_mask cr3_target_count mov_dr_exiting dr_switch shadow_pages_max; do
  check_contains "policies lists knob $k" "$out" "$k"
done
check_contains "policies: how a value is written" "$out" "Values: numbers in decimal, masks also in 0x hex, never with a leading 0"
run "$VMXSIM" cpus
check_rc "cpus" 0
for c in core2-2007 core2-2008 nehalem-2009 skylake-2019; do check_contains "cpus lists $c" "$out" "$c"; done

# the table, xenalyze-style
run "$VMXSIM" --policy shadowcache --no-db t.bin
check_rc "run shadowcache" 0
check_contains "table header" "$out" "VM-EXIT"
check_contains "table p5|p50|p95" "$out" "p50"
check_contains "CR3 write breakdown row" "$out" "  cr3 write"
check_contains "CR4 write breakdown row" "$out" "  cr4 write"
check_contains "DR breakdown row" "$out" "  dr7 write"
check_contains "per-operation line" "$out" "per operation (2 marks)"
check_contains "MMU section" "$out" "MMU:"
bare=$out
run "$VMXSIM" run --policy shadowcache --no-db t.bin
check_eq "'run' and the bare form agree" "$bare" "$out"

# JSON keys fixed by the design
run "$VMXSIM" --policy shadowcache --no-db --format json t.bin
check_rc "json" 0
for key in '"policy"' '"cpu"' '"events"' '"total_exits"' '"exits"' '"cycles"' '"total"' '"guest"' '"vmm"' '"counters"' '"p5"' '"p50"' '"p95"' '"avg"'; do
  check_contains "json has $key" "$out" "$key"
done
check_contains "json CR_ACCESS count" "$out" '"CR_ACCESS"'
first=$out
run "$VMXSIM" --policy shadowcache --no-db --format json t.bin
check_eq "deterministic output" "$first" "$out"
run "$VMXSIM" --policy shadowcache --no-db --format csv t.bin
check_contains "csv header" "$out" "section,name,parent,count,cycles"

# policies: composition, overrides, EPT
run "$VMXSIM" --policy ept --no-db --format json t.bin
check_not_contains "ept: no CR_ACCESS for CR3" "$out" '"cr3 write"'
run "$VMXSIM" --policy ept+cr4mask --no-db --format json t.bin
check_not_contains "ept+cr4mask: CR4 PGE toggles do not exit" "$out" '"CR_ACCESS"'
run "$VMXSIM" --policy shadowcache+cr4mask --no-db --format json t.bin
check_contains "shadow+cr4mask: PGE stays host-owned" "$out" '"cr4 write"'
check_contains "forced bit counted" "$out" '"cr4_forced_owned_bits":	1'
run "$VMXSIM" --policy shadowcache --set mov_dr_exiting=false --no-db --format json t.bin
check_not_contains "--set mov_dr_exiting=false: no DR exit" "$out" '"DR_ACCESS"'

# errors
run "$VMXSIM" --policy nosuch --no-db t.bin
check_rc "unknown policy" 2
check_contains "unknown policy lists the valid ones" "$err" "valid: "
check_contains "... including shadowcache" "$err" "shadowcache"
run "$VMXSIM" --policy shadowcache --set nosuch=1 --no-db t.bin
check_rc "unknown knob" 2
check_contains "unknown knob lists the valid ones" "$err" "valid knobs: "
run "$VMXSIM" --policy shadowcache --set dr_switch=sideways --no-db t.bin
check_rc "bad knob value" 2
check_contains "bad knob value explained" "$err" "not one of: eager, lazy"
run "$VMXSIM" --policy shadowcache --set novalue --no-db t.bin
check_rc "--set without =" 2
run "$VMXSIM" --policy shadowcache --format xml --no-db t.bin
check_rc "bad --format" 2
run "$VMXSIM" --policy shadowcache --cpu nosuch --no-db t.bin
check_rc "unknown cpu" 2
check_contains "unknown cpu lists profiles" "$err" "core2-2007"
for spec in + shadowcache+ +lazydr shadowcache++lazydr; do
  run "$VMXSIM" --policy "$spec" --no-db t.bin
  check_rc "--policy '$spec' has an empty part: usage error" 2
  check_contains "--policy '$spec': the empty part is named" "$err" "empty preset name"
done
printf '{"knobs": {"shadow_pages_max": 64,}\n' > badpolicy.json
run "$VMXSIM" --policy ./badpolicy.json --no-db t.bin
check_rc "malformed policy JSON file is bad input" 3
check_contains "malformed policy JSON names the file and line" "$err" "badpolicy.json:1:"
printf '{"knobs": {"shadow_pages_max": "many"}}\n' > badknob.json
run "$VMXSIM" --policy ./badknob.json --no-db t.bin
check_rc "policy file with a bad knob value is bad input" 3
# without --policy, run and repl both use the documented default (shadowcache)
run "$VMXSIM" --no-db t.bin
check_rc "no --policy: the default policy" 0
check_contains "no --policy: the report names shadowcache" "$out" "policy shadowcache, cpu core2-2007"
check_eq "no --policy: the same as --policy shadowcache" "$bare" "$out"
run "$VMXSIM" t.bin --no-db
check_rc "'vmxsim TRACE' runs it" 0
check_eq "'vmxsim TRACE' is 'vmxsim --policy shadowcache TRACE'" "$bare" "$out"
run "$VMXSIM" run --help
check_contains "run --help documents the default policy" "$out" "Default shadowcache, as for 'vmxsim repl'"
run "$VMXSIM" repl --help
check_contains "repl --help documents the same default" "$out" "(default shadowcache, as for 'run')"
run sh -c "printf 'policy\n' | \"$VMXSIM\" repl t.bin"
check_eq "repl without --policy: shadowcache" "policy shadowcache" "$out"
run "$VMXSIM" nosuch.bin
check_rc "'vmxsim nosuch.bin': usage error" 2
check_eq "'vmxsim nosuch.bin': neither a command nor a file" \
  "vmxsim: unknown command 'nosuch.bin', and no trace file of that name; see 'vmxsim --help'" "$err"
run "$VMXSIM" --policy shadowcache --no-db
check_rc "missing trace" 2
run "$VMXSIM" --policy shadowcache --no-db nosuch.bin
check_rc "missing trace file" 3
check_contains "missing trace named" "$err" "nosuch.bin"
run "$VMXSIM" --policy shadowcache --no-db t.txt
check_rc "text trace given to run" 3
check_contains "text trace: hint to assemble" "$err" "vmxsim trace asm"
run "$VMXSIM" --policy shadowcache --bogus --no-db t.bin
check_rc "unknown option" 2

# VM entry check: CR3_TARGET_COUNT above IA32_VMX_MISC's 4 (SDM 26.2.1.1)
run "$VMXSIM" --policy cr3cache --set cr3_target_count=5 --no-db t.bin
check_rc "cr3_target_count=5 fails VM entry" 4
check_contains "VM-instruction error 7" "$err" "VM-instruction error 7"
check_contains "names CR3_TARGET_COUNT" "$err" "CR3_TARGET_COUNT is 5"
check_eq "no result printed on VM-entry failure" "" "$out"
check_contains "... and no built-in CPU takes 5 CR3-target values" "$err" "; no built-in CPU profile takes it"
# EPT on the default CPU (a Core 2): the message names the profiles whose CPU has EPT, found by
# VM entry on each (the Core 2 profiles lack secondary controls; the others have them)
run "$VMXSIM" --policy ept --no-db t.bin
check_rc "ept on the default CPU fails VM entry" 4
check_contains "... and names the profiles that take it" "$err" \
  "; the built-in CPU profiles that take it: nehalem-2009, sapphirerapids-2023, skylake-2019, skylake-xen-2018 (--cpu NAME)"
run "$VMXSIM" --policy cr3cache --set cr3_target_count=4 --no-db t.bin
check_rc "cr3_target_count=4 runs" 0

# A PAE guest's shadow roots are 32-byte tables below 4 GiB (models/mmu/mmu.h); no address
# space of a generated guest, however many tasks it has, lies where they are: a ring of 3800
# PAE processes, each switched to twice, never hits the 4-entry CR3 cache by accident.
"$VMXSIM" gen lat_ctx --procs 3800 --iters 2 --paging pae -o ring-pae.bin > /dev/null
run "$VMXSIM" --policy cr3cache --set shadow_pages_max=16 --no-db --format json ring-pae.bin
check_eq "3800 PAE address spaces: no CR3-target hit, 7600 misses" "hits 0 misses 7600" \
  "$(printf '%s\n' "$out" | grep -o '"cr3_target_[a-z]*":[[:space:]]*[0-9]*' | sed 's/"cr3_target_\([a-z]*\)":[[:space:]]*/\1 /' | tr '\n' ' ' | sed 's/ $//')"

# a malformed CPU profile file names the file and the key
cat > bad.json <<'JSON'
{ "name": "bad", "params": { "clock_ghz": { "value": 2.0, "kind": "guessed", "source": "x" } } }
JSON
run "$VMXSIM" --policy shadowcache --cpu ./bad.json --no-db t.bin
check_rc "bad profile" 3
check_contains "bad profile: file, line and key" "$err" "./bad.json:1: params.clock_ghz"
printf '{ "name": \n' > broken.json
run "$VMXSIM" --policy shadowcache --cpu ./broken.json --no-db t.bin
check_rc "malformed profile JSON" 3
check_contains "malformed JSON: file and line" "$err" "broken.json:2: malformed JSON"

# a misspelt profile parameter is an error, not silently ignored
sed 's/"params": {/"params": { "vmreed": { "value": 1, "kind": "estimated", "source": "x" },/' \
  "$ROOT/models/cpus/core2-2007.json" > typo.json
run "$VMXSIM" --policy shadowcache --cpu ./typo.json --no-db t.bin
check_rc "unknown profile parameter" 3
check_contains "unknown parameter named with the file and line" "$err" "./typo.json:4: params.vmreed: unknown parameter"
check_contains "valid parameters listed" "$err" "vmread"
cp "$ROOT/models/cpus/core2-2007.json" copy.json
run "$VMXSIM" --policy shadowcache --cpu ./copy.json --no-db --format json t.bin
check_rc "a copy of a shipped profile loads from a path" 0

# a shadow pool smaller than the pinned roots plus one fault is refused up front
run "$VMXSIM" --policy prevroots --set shadow_pages_max=4 --no-db t.bin
check_rc "pool too small: usage error" 2
check_contains "pool too small: says the minimum" "$err" "shadow_pages_max 4 is too small for 1 vCPU with 64-bit paging and 3 previous roots: the pinned shadow roots need at least 5 pages"
run "$VMXSIM" --policy prevroots --set shadow_pages_max=5 --no-db t.bin
check_rc "the minimum pool runs" 0
run "$VMXSIM" --policy ept --cpu nehalem-2009 --set shadow_pages_max=0 --no-db t.bin
check_rc "EPT needs no shadow pool" 0
run "$VMXSIM" --policy ept --cpu core2-2007 --no-db t.bin
check_rc "EPT on a CPU without EPT fails VM entry" 4
check_contains "the failed VM entry names the control" "$err" '"enable EPT"'
check_contains "the failed VM entry names the CPU profile" "$err" "core2-2007"
check_contains "the failed VM entry gives the VM-instruction error" "$err" "error 7"

# several policies and CPU profiles: their product, replayed in one pass, equal to separate runs
run "$VMXSIM" --policy shadowcache,nocache --cpu core2-2007,core2-2008 --no-db --format csv t.bin
check_rc "two policies on two profiles" 0
check_eq "CSV of several runs: one header" \
  "$("$VMXSIM" --policy shadowcache --no-db --format csv t.bin | head -1)" "$(printf '%s\n' "$out" | head -1)"
many=$(printf '%s\n' "$out" | sed 1d)
want=""
for p in shadowcache nocache; do
  for c in core2-2007 core2-2008; do
    one=$("$VMXSIM" --policy $p --cpu $c --no-db --format csv t.bin | sed 1d)
    want="$want${want:+
}$one"
  done
done
check_eq "one pass gives each run what a separate run gives, in order" "$want" "$many"
run "$VMXSIM" --policy shadowcache,nocache --cpu core2-2007,core2-2008 -j 3 --no-db --format csv t.bin
check_eq "with threads (-j 3) too" "$want" "$(printf '%s\n' "$out" | sed 1d)"
run "$VMXSIM" --policy shadowcache,nocache --no-db --format json t.bin
check_contains "JSON of several runs: an array" "$(printf '%s\n' "$out" | head -1)" "["
check_eq "JSON array: one object per run" 2 "$(printf '%s\n' "$out" | grep -c '"policy":')"
run "$VMXSIM" --policy shadowcache,nocache --no-db --reports t.bin
check_eq "--reports: a table per run" 2 "$(printf '%s\n' "$out" | grep -c '^trace t.bin')"
# several runs in a table: side by side against the first, as compare prints stored runs
run "$VMXSIM" --policy shadowcache,nocache --cpu core2-2007,core2-2008 --no-db t.bin
check_rc "several runs, one table" 0
check_eq "... no report per run" 0 "$(printf '%s\n' "$out" | grep -c '^trace t.bin')"
check_eq "... the legend names each run's policy and cpu" "  A: policy shadowcache, cpu core2-2007
  B: policy shadowcache, cpu core2-2008
  C: policy nocache, cpu core2-2007
  D: policy nocache, cpu core2-2008" "$(printf '%s\n' "$out" | grep '^  [A-D]: ')"
stored=$("$VMXSIM" --policy nocache --cpu core2-2008 --no-db --format csv t.bin | awk -F, '$5 == "total" && $6 == "exits" { print $8 }')
check_eq "... and column D is what the run alone reports (total exits per op: 2 marks)" \
  "$(awk -v n="$stored" 'BEGIN { printf "%.3f", n / 2 }')" \
  "$(printf '%s\n' "$out" | awk '/^VM exits/ { on = 1 } on && $1 == "total" { print $5; exit }')"
# a part with '=' overrides a knob of the policy before it (quoted in CSV: the name holds a comma)
run "$VMXSIM" --policy shadowcache,cr3_target_count=2,nocache --no-db --format csv t.bin
one=$("$VMXSIM" --policy shadowcache --set cr3_target_count=2 --no-db --format csv t.bin | sed 1d)
check_eq "per-policy override equals --set" "$one" "$(printf '%s\n' "$out" | grep '"shadowcache,cr3_target_count=2"')"
run "$VMXSIM" --policy cr3_target_count=2,shadowcache --no-db t.bin
check_rc "an override before any policy" 2
check_contains "the override is named" "$err" "'cr3_target_count=2' overrides a knob, but no policy comes before it"
run "$VMXSIM" --policy shadowcache,ept --cpu nehalem-2009,core2-2007 --no-db t.bin
check_rc "one configuration failing VM entry stops the pass" 4
check_contains "it names the CPU and policy" "$err" "(CPU profile core2-2007, policy ept)"
run "$VMXSIM" --policy shadowcache,nosuch --no-db t.bin
check_rc "an unknown policy in the list" 2
check_contains "the failing configuration is named" "$err" "(policy nosuch, cpu core2-2007)"
run "$VMXSIM" --policy shadowcache --jobs 0 --no-db t.bin
check_rc "--jobs 0 is refused" 2
rm -f many.db
run "$VMXSIM" --policy shadowcache,nocache --cpu core2-2007,core2-2008 --db many.db t.bin
check_rc "several runs stored" 0
check_eq "each run is stored" 4 "$("$VMXSIM" runs --db many.db --format csv | sed 1d | wc -l | tr -d ' ')"

# ---- lists: an empty or repeated item is refused, as an empty preset name ("ept+") is ----
# (they ran: ",ept", "ept," and "ept,,ept" replayed ept once or twice, "ept,ept" twice)
for p in ,ept ept, ept,,ept "" ept,ept ept,vpid=on,ept,vpid=1 ept,prev_roots=1,prev_roots=2,ept,prev_roots=2; do
  run "$VMXSIM" --no-db --cpu nehalem-2009 --policy "$p" t.bin
  check_rc "--policy '$p' is refused" 2
  check_eq "--policy '$p': no result" "" "$out"
  case $p in
    *,,*|,*|*,|"") check_contains "--policy '$p': an empty item" "$err" "--policy '$p': an empty item" ;;
    *) check_contains "--policy '$p': named twice" "$err" "is named twice" ;;
  esac
done
run "$VMXSIM" --no-db --cpu nehalem-2009 --set vpid=on --policy ept,ept,vpid=1 t.bin
check_rc "a --set and an override naming one policy twice" 2
check_contains "... named by its one name" "$err" "policy ept,vpid=true is named twice"
for c in ,core2-2007 core2-2007, core2-2007,,core2-2008 core2-2007,core2-2007; do
  run "$VMXSIM" --no-db --cpu "$c" t.bin
  check_rc "--cpu '$c' is refused" 2
  check_contains "--cpu '$c': says why" "$err" "--cpu '$c': "
done
run "$VMXSIM" --no-db --cpu nehalem-2009 --policy ept,vpid=false,ept t.bin
check_rc "one preset under other overrides is no repeat" 0

# ---- a run is stored under its configuration's one name, however a value was spelled ----
rm -f spell.db
"$VMXSIM" --policy shadowcache --set cr4_guest_host_mask=0x00F0 --set rdtsc_exiting=on --db spell.db t.bin > /dev/null
"$VMXSIM" --policy shadowcache,rdtsc_exiting=1 --set cr4_guest_host_mask=0xf0 --db spell.db t.bin > /dev/null
"$VMXSIM" --policy shadowcache --set cr4_guest_host_mask=240 --set rdtsc_exiting=no --set rdtsc_exiting=yes \
  --db spell.db t.bin > /dev/null
check_eq "three spellings: one policy name, one run identity" \
  "3|1|1|shadowcache,cr4_guest_host_mask=0xf0,rdtsc_exiting=true" \
  "$(sqlite3 spell.db 'SELECT count(*), count(DISTINCT run_key), count(DISTINCT policy_json), max(policy) FROM runs')"
run "$VMXSIM" runs --db spell.db --policy shadowcache,rdtsc_exiting=yes,cr4_guest_host_mask=0XF0 --format csv
check_eq "runs --policy finds them under another spelling" 3 "$(printf '%s\n' "$out" | sed 1d | wc -l | tr -d ' ')"
printf '{"traces": ["t.bin"], "policies": [{"policy": "shadowcache", "knobs": {"cr4_guest_host_mask": "0x0f0", "rdtsc_exiting": true}}]}\n' > spell.json
run "$VMXSIM" sweep spell.json --db spell.db
check_rc "a sweep of that configuration" 0
check_contains "a sweep finds it stored, spelled otherwise" "$out" "0 run now, 1 stored before"
"$VMXSIM" --policy nocache --db spell.db t.bin > /dev/null
run "$VMXSIM" compare --db spell.db --trace t.bin --policy nocache,shadowcache,cr4_guest_host_mask=240,rdtsc_exiting=on
check_rc "compare finds a run under another spelling" 0
run "$VMXSIM" compare --db spell.db --trace t.bin --policy shadowcache,cr4_guest_host_mask=240,rdtsc_exiting=on,shadowcache,rdtsc_exiting=1,cr4_guest_host_mask=0xf0
check_rc "compare: one policy named twice is refused" 2
check_contains "... named by its one name" "$err" "policy shadowcache,cr4_guest_host_mask=0xf0,rdtsc_exiting=true is named twice"
for p in ,nocache nocache, nocache,,shadowcache; do
  run "$VMXSIM" compare --db spell.db --trace t.bin --policy "$p"
  check_rc "compare --policy '$p' is refused" 2
  check_contains "compare --policy '$p': an empty item" "$err" "an empty item"
done
run "$VMXSIM" compare --db spell.db --trace t.bin --policy nocache --policy nocache
check_rc "compare: --policy nocache twice is refused" 2

# ---- numbers are decimal or 0x hex, never octal: 010 was 8 threads, a width of 8 us ----
for o in "--jobs 010" "--vcpu 00" "--interval 010ms"; do
  run "$VMXSIM" --policy shadowcache --no-db $o t.bin
  check_rc "$o is refused" 2
  check_contains "$o: says why" "$err" "(a leading 0 is ambiguous: C would read it as octal; write the number without it)"
done
