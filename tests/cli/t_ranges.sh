# Every user-supplied number has a range, and a value outside it is refused with the value,
# the range and where it came from (option, FILE:LINE, byte offset); nothing is clamped or
# rounded. The inputs are those a fuzzing campaign found accepted, changed or misreported.

cat > t.txt <<'EOF'
@init cr0=0x80050033 cr3=0x10000000 cr4=0x6f0
run 1000
cr3w 0x10100000
touch 0x400000 2 w
cr3w 0x10000000
EOF
"$VMXSIM" trace asm t.txt -o t.bin

# ---- policy knobs: --set ----

# knob=value expected-message: a usage error (2) naming the knob, the value and the range
refused_set() {
  run "$VMXSIM" --no-db --set "$1" t.bin
  check_rc "--set $1 is refused" 2
  check_contains "--set $1: value and range" "$err" "$2"
  check_eq "--set $1: no result" "" "$out"
}
refused_set shadow_pages_max=4294967295 "knob shadow_pages_max: '4294967295' is outside the range 0..1048576"
refused_set shadow_pages_max=50000000 "knob shadow_pages_max: '50000000' is outside the range 0..1048576"
refused_set tlb_entries=4294967295 "knob tlb_entries: '4294967295' is not a power of two in 4..16384"
refused_set tlb_entries=0 "knob tlb_entries: '0' is not a power of two in 4..16384"
refused_set tlb_entries=100 "knob tlb_entries: '100' is not a power of two in 4..16384"
refused_set prev_roots=20 "knob prev_roots: '20' is outside the range 0..8"
refused_set refill_high=2000000 "knob refill_high: '2000000' is outside the range 0..1048576"
refused_set cr3_target_count=512 "knob cr3_target_count: '512' is outside the range 0..511"
refused_set flood_threshold=4294967296 "knob flood_threshold: '4294967296' is outside the range 0..4294967295"
refused_set refill_low=5.5 "knob refill_low: '5.5' is not a whole number in 0..1048576"
refused_set tlb_entries=5.5 "knob tlb_entries: '5.5' is not a whole number in 4..16384"
# counts and sizes are decimal: 010 was octal 8 and 0x10 was 16, each a run of its own name
refused_set shadow_pages_max=010 "knob shadow_pages_max: '010' is not a whole number in 0..1048576 (a leading 0 is ambiguous: C would read it as octal"
refused_set shadow_pages_max=0x10 "knob shadow_pages_max: '0x10' is not a decimal whole number in 0..1048576 (only the mask knobs take 0x hex)"
refused_set tlb_entries=0x10 "knob tlb_entries: '0x10' is not a decimal whole number in 4..16384"
refused_set tlb_entries=many "knob tlb_entries: 'many' is not a whole number in 4..16384"
refused_set flood_threshold=00 "knob flood_threshold: '00' is not a whole number in 0..4294967295 (a leading 0"
# masks take decimal or 0x hex, never octal
refused_set cr4_guest_host_mask=0777 "knob cr4_guest_host_mask: '0777' is not a 64-bit mask: decimal, or 0x hex (a leading 0"
refused_set cr0_guest_host_mask=0x "knob cr0_guest_host_mask: '0x' is not a 64-bit mask: decimal, or 0x hex"

run "$VMXSIM" --no-db --policy shadowcache,prev_roots=20 t.bin
check_rc "an override inside --policy is checked the same" 2
check_contains "an override inside --policy: range" "$err" "'20' is outside the range 0..8"

# the ends of each range run; a CR3-target count the CPU lacks stays a VM-entry failure
for s in shadow_pages_max=1048576 tlb_entries=4 tlb_entries=16384 prev_roots=8 flood_threshold=0; do
  run "$VMXSIM" --no-db --set "$s" t.bin
  check_rc "--set $s (an end of the range) runs" 0
done
run "$VMXSIM" --no-db --set cr3_target_count=5 t.bin
check_rc "cr3_target_count above the CPU's 4 fails VM entry, as the CPU would" 4
check_contains "the failed VM entry names the count" "$err" "CR3_TARGET_COUNT is 5 but this CPU supports 4"

# ---- policy presets: names and files ----

for p in + shadowcache+ +lazydr shadowcache++lazydr; do
  run "$VMXSIM" --no-db --policy "$p" t.bin
  check_rc "--policy '$p' (an empty preset name) is refused" 2
  check_contains "--policy '$p': says why" "$err" "an empty preset name"
done

printf '{\n  "base": "shadowcache",\n  "knobs": {\n    "shadow_pages_max": 64.7\n  }\n}\n' > frac.json
run "$VMXSIM" --no-db --policy ./frac.json t.bin
check_rc "a fractional knob in a policy file is bad input" 3
check_contains "fractional knob: file, line, value and range" "$err" \
  "./frac.json:4: knob shadow_pages_max: '64.7' is not a whole number in 0..1048576"
printf '{\n  "knobs": {\n    "cr3_target_count": 2,\n    "prev_roots": -1\n  }\n}\n' > neg.json
run "$VMXSIM" --no-db --policy ./neg.json t.bin
check_rc "a negative knob in a policy file is bad input" 3
check_contains "negative knob: file and line" "$err" "./neg.json:4: knob prev_roots: '-1' is not a whole number in 0..8"
printf '{\n  "knobs": {\n    "tlb_entries": 48\n  }\n}\n' > tlb.json
run "$VMXSIM" --no-db --policy ./tlb.json t.bin
check_rc "a TLB size that is not a power of two in a policy file is bad input" 3
check_contains "TLB size: file and line" "$err" "./tlb.json:3: knob tlb_entries: '48' is not a power of two in 4..16384"

printf '{\n  "knobs": {\n    "vpid": tru\n  }\n}\n' > malformed.json
run "$VMXSIM" --no-db --policy ./malformed.json t.bin
check_rc "a malformed policy file is bad input (3), not a usage error" 3
check_contains "malformed policy file: file and line" "$err" "./malformed.json:3: malformed JSON"

mkdir -p adir
run "$VMXSIM" --no-db --policy adir/ t.bin
check_rc "--policy DIR/ is bad input" 3
check_contains "--policy DIR/ says it is a directory" "$err" "adir/: is a directory, not a JSON file"
run "$VMXSIM" --no-db --cpu adir/ t.bin
check_rc "--cpu DIR/ is bad input" 3
check_contains "--cpu DIR/ says it is a directory" "$err" "adir/: is a directory, not a JSON file"

# ---- CPU profile values ----

# profile_with KEY VALUE: core2-2007 with one value replaced, as prof.json
profile_with() {
  sed "/\"$1\": {/,/\"value\"/ s/\"value\": [0-9.]*/\"value\": $2/" "$ROOT/models/cpus/core2-2007.json" > prof.json
}
# line_of KEY: the line of KEY's "value" in prof.json
line_of() { awk -v k="\"$1\": {" 'index($0, k) { f = 1 } f && /"value"/ { print NR; exit }' prof.json; }
for kv in "cr3_targets_supported 600 0..511" "vmread 4294967296 0..4294967295" "vmx.ept 2 0..1" "vmwrite 10.5 0..4294967295"; do
  set -- $kv
  profile_with "$1" "$2"
  run "$VMXSIM" --no-db --cpu ./prof.json t.bin
  check_rc "profile $1 = $2 is bad input" 3
  check_contains "profile $1 = $2: file, line, value and range" "$err" \
    "./prof.json:$(line_of "$1"): params.$1: value $2 is not a whole number in $3"
done
profile_with clock_ghz 0
run "$VMXSIM" --no-db --cpu ./prof.json t.bin
check_rc "profile clock 0 is bad input" 3
check_contains "profile clock 0: file, line and range" "$err" \
  "./prof.json:$(line_of clock_ghz): params.clock_ghz: value 0 is outside the range (0, 10] GHz"
profile_with dr_read -3
run "$VMXSIM" --no-db --cpu ./prof.json t.bin
check_rc "a negative profile value is bad input" 3
check_contains "negative profile value: file and line" "$err" "./prof.json:$(line_of dr_read): params.dr_read: value -3 is negative"

# ---- trace fields ----

size=$(wc -c < t.bin)
cp t.bin v5.bin                                  # the last record's (6: after 3 @init) vCPU := 5; 1 vCPU
printf '\005' | dd of=v5.bin bs=1 seek=$((size - 22)) conv=notrunc 2>/dev/null
run "$VMXSIM" --no-db v5.bin
check_rc "a record for vCPU 5 in a 1-vCPU trace is bad input" 3
check_contains "the message names the record's vCPU and the header's count" "$err" \
  "v5.bin: byte $((size - 24)): record 6: vCPU 5 beyond the header's count 1"

cp t.bin touch.bin                               # record 5 (touch 2 pages) asks for 2^24 pages
touch_b=$(( size - 24 * 2 + 16 ))
printf '\000\000\000\001' | dd of=touch.bin bs=1 seek=$touch_b conv=notrunc 2>/dev/null
run "$VMXSIM" --no-db touch.bin
check_rc "a touch of 2^24 pages (one 24-byte record) is bad input" 3
check_contains "the touch bound: byte offset and limit" "$err" \
  "touch.bin: byte $((size - 48)): record 5 (touch): touch of 0 pages or more than 2^20"
printf 'touch 0x400000 1048577\n' > bigtouch.txt
run "$VMXSIM" trace asm bigtouch.txt -o bigtouch.bin
check_rc "asm: a touch above 2^20 pages is refused" 3
check_contains "asm: line and range" "$err" "bigtouch.txt:1: touch: page count 1048577 out of range 1..1048576"

# a 32-bit guest under EPT that touches more pages than 4 GiB of frames holds (SDM 4.3): the
# run is refused, named, and nothing is stored; the same pages with 64-bit paging replay
printf '@workload big\n@paging 32\n@vcpus 1\n@init cr0=0x80000011 cr3=0x1000 cr4=0x0\ntouch 0x0 1048576\nrun 100\n' > big32.txt
run "$VMXSIM" trace asm big32.txt -o big32.bin
check_rc "asm: a 32-bit trace touching 2^20 pages" 0
run "$VMXSIM" --db big.db --policy ept --cpu nehalem-2009 big32.bin
check_rc "EPT: a 32-bit guest touching more than 4 GiB of pages is bad input" 3
check_contains "EPT: the message names the trace, the record and the 4 GiB bound" "$err" \
  "big32.bin: byte 136: record 3: it touches more distinct pages than a guest with 32-bit paging has frames below 4 GiB"
run "$VMXSIM" runs --db big.db
check_contains "EPT: the refused run was not stored (no database made)" "$err" "big.db does not exist"
printf 'continue\n' > big32.cmd
run "$VMXSIM" repl big32.bin --policy ept --cpu nehalem-2009 --batch big32.cmd
check_contains "EPT: the REPL replays on and says once that a run would be refused" "$out" \
  "warning: big32.bin: since event 3: it touches more distinct pages than a guest with 32-bit paging has frames below 4 GiB"
# the record named is the touch that crossed the bound, not the first large one: records
# 0-2 are the @init, 4 and 6 touch 1,040,000 pages (and their page tables), 8 crosses
printf '@workload big\n@paging 32\n@vcpus 1\n@init cr0=0x80000011 cr3=0x1000 cr4=0x0\nrun 5\ntouch 0x0 1000000\nrun 100\ntouch 0xf5000000 40000\nrun 1\ntouch 0xff000000 4096\nrun 1\n' > cross32.txt
run "$VMXSIM" trace asm cross32.txt -o cross32.bin
run "$VMXSIM" --no-db --policy ept --cpu nehalem-2009 cross32.bin
check_rc "EPT: a trace crossing 4 GiB of frames at its third touch is bad input" 3
check_contains "EPT: the message names the record that crossed" "$err" "cross32.bin: byte 256: record 8: it touches more distinct pages"
# the replay stops at the block where the run became one to refuse: a bad record 20,000
# records on (in a later block) is never reached, so the refusal is what is said
{ cat big32.txt; i=0; while [ $i -lt 20000 ]; do echo 'run 1'; i=$((i + 1)); done; } > stop32.txt
run "$VMXSIM" trace asm stop32.txt -o stop32.bin
stop_size=$(wc -c < stop32.bin)
printf '\377' | dd of=stop32.bin bs=1 seek=$((stop_size - 24)) conv=notrunc 2>/dev/null
run "$VMXSIM" --no-db --policy ept --cpu nehalem-2009 stop32.bin
check_rc "EPT: a refused run with a bad record far after the crossing is bad input" 3
check_contains "EPT: the replay stopped at the crossing, before the bad record" "$err" \
  "stop32.bin: byte 136: record 3: it touches more distinct pages"
run "$VMXSIM" --no-db --policy shadowcache --cpu nehalem-2009 stop32.bin
check_contains "the bad record itself, under a policy that accepts the touches" "$err" "record 20004: unknown event type 255"
sed 's/@paging 32/@paging 64/' big32.txt > big64.txt
run "$VMXSIM" trace asm big64.txt -o big64.bin
run "$VMXSIM" --no-db --policy ept --cpu nehalem-2009 big64.bin
check_rc "EPT: the same pages under 64-bit paging replay" 0

# EPT maps each page on its first touch: 8 touches of 2^20 pages are 2^23 violations (time
# grows with the pages), but the pages mapped are kept as runs, and the views keep a bounded
# number of a block's exits, so memory does not: these 8 records of 24 bytes took 398 MB
# (models/mmu/README.md, "EPT")

# peak_rss OUT CMD...: runs CMD (stdout to OUT); $rc, and $rss its peak RSS in KiB
peak_rss() {
  _out=$1; shift
  if command -v /usr/bin/time > /dev/null 2>&1; then
    /usr/bin/time -f %M -o rss.txt "$@" > "$_out" 2> rss.err
    rc=$?
    rss=$(tail -n 1 rss.txt)
  else                                   # no GNU time: the peak (VmHWM) read from /proc until it ends
    "$@" > "$_out" 2> rss.err &
    _pid=$! rss=0
    while _h=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$_pid/status" 2>/dev/null) && [ -n "$_h" ]; do
      [ "$_h" -gt "$rss" ] && rss=$_h
      sleep 0.05
    done
    wait "$_pid"
    rc=$?
  fi
}
below_64mib() { awk -v k="$rss" 'BEGIN { print (k > 0 && k < 65536) ? "yes" : "no: " k " KiB" }'; }

if [ -n "${VMXSIM_SANITIZER:-}" ]; then
  skip "EPT memory on 8 touches of 2^20 pages: a sanitizer build ($VMXSIM_SANITIZER) uses more"
else
  printf '@paging 64\n' > touch8.txt
  for r in 1 2 3 4 5 6 7 8; do printf 'touch 0x%x 1048576 w\n' $((r << 40)) >> touch8.txt; done
  run "$VMXSIM" trace asm touch8.txt -o touch8.bin
  check_rc "asm: 8 touches of 2^20 pages at 1 TiB apart" 0
  # each touch: 2^20 pages, one guest page table per 512, one directory per 2^18, one PDPT
  # per 512 GiB (a touch each: they are 1 TiB apart); and the root, once
  per=$(( (1 << 20) + (1 << 20) / 512 + (1 << 20) / (1 << 18) + 1 ))
  want=$(( 8 * per + 1 ))
  peak_rss touch8.json "$VMXSIM" --no-db --policy ept --cpu nehalem-2009 --format json touch8.bin
  check_eq "EPT, 8 touches of 2^20 pages: replays" "0" "$rc"
  check_eq "EPT, 8 touches of 2^20 pages: a violation per page and guest page table" "$want" \
    "$(sed -n 's/.*"ept_violations":[^0-9]*\([0-9]*\).*/\1/p' touch8.json)"
  check_eq "EPT, 8 touches of 2^20 pages: peak RSS below 64 MiB" "yes" "$(below_64mib)"
  # with the views, fed on a thread of their own when there are two processors
  peak_rss touch8v.json "$VMXSIM" --no-db --policy ept --cpu nehalem-2009 --format json --views touch8.bin
  check_eq "EPT with --views, 8 touches of 2^20 pages: replays" "0" "$rc"
  check_contains "EPT with --views: every violation in the views" "$(tr -d ' \t\n' < touch8v.json)" \
    "\"EPT_VIOLATION\":{\"count\":$want,"
  check_eq "EPT with --views, 8 touches of 2^20 pages: peak RSS below 64 MiB" "yes" "$(below_64mib)"
  rm -f touch8.bin touch8.json touch8v.json
fi

# ---- generator options ----

run "$VMXSIM" gen lat_ctx --procs 2 --iters 1 --cross 0 -o cross0.bin
check_rc "gen lat_ctx --cross 0 (the documented default) is accepted" 0
run "$VMXSIM" gen lat_ctx --procs 2 --iters 1 --cpu-ghz 0 -o ghz0.bin
check_rc "gen --cpu-ghz 0 is refused" 2
check_contains "gen --cpu-ghz 0: option and range" "$err" "--cpu-ghz must be above 0 and at most 10 (got 0)"
run "$VMXSIM" gen lat_ctx --procs 5000 --iters 1 -o procs.bin
check_rc "gen --procs above its range is refused" 2
check_contains "gen --procs: option, range and value" "$err" "--procs must be between 2 and 4096 (got 5000)"

# ---- the ranges are listed ----

run "$VMXSIM" policies
check_contains "policies: a range column" "$out" "0..1048576"
check_contains "policies: the TLB's range" "$out" "powers of two 4..16384"
run "$VMXSIM" policies --format csv
check_contains "policies CSV: min and max columns" "$out" "kind,name,type,default,values,min,max,description"
check_contains "policies CSV: prev_roots' range" "$out" "knob,prev_roots,integer,0,,0,8,"
run "$VMXSIM" policies --format json
check_contains "policies JSON: max of a knob" "$out" '"max":	1048576'

# ---- an output in a directory that cannot be written: the reason, not ENOENT ----

ro_check() { # name command... : run as the unprivileged user, expect exit 3 or 5 and "Permission denied"
  name=$1; shift
  as_user "$@"
  # 74: an output file cannot be written; 5: the results database
  case $rc in 74|5) pass "$name: refused ($rc)" ;; *) fail "$name: refused with 74 or 5" "actual exit code: $rc" "stderr: $err" ;; esac
  check_contains "$name: says Permission denied" "$err" "Permission denied"
}
if [ "$(id -u)" != 0 ]; then
  mkdir ro && chmod 555 ro
  as_user() { run "$@"; }
elif command -v su >/dev/null 2>&1 && id nobody >/dev/null 2>&1; then
  # root may write anywhere: the test runs as nobody, who needs to reach this directory
  chmod 755 "$T" && mkdir ro && chmod 555 ro && chmod 644 t.txt t.bin
  as_user() { run su nobody -s /bin/sh -c "$(printf "'%s' " "$@")"; }
  as_user "$VMXSIM" trace info t.bin
  [ "$rc" = 0 ] || { skip "nobody cannot run $VMXSIM here: 4 read-only-directory checks"; as_user() { return 1; }; }
else
  skip "root without su or a nobody user: 4 read-only-directory checks"
  as_user() { return 1; }
fi
if as_user true; then
  ro_check "gen -o into a read-only directory" "$VMXSIM" gen lat_ctx --procs 2 --iters 1 -o ro/x.bin
  ro_check "trace asm -o into a read-only directory" "$VMXSIM" trace asm t.txt -o ro/x.bin
  ro_check "import -o into a read-only directory" "$VMXSIM" import perf-script "$ROOT/traces/recorded/perf-pipe.txt.gz" -o ro/x.bin
  ro_check "a database in a read-only directory" "$VMXSIM" --db ro/x.db t.bin
  check_eq "nothing was left in the read-only directory" "" "$(ls -A ro)"
fi
