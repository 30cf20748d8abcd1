# CLI tests for `vmxsim trace asm|dump|info`: round trips, summaries, and every bad-input message.
# Sourced by tests/cli/run.sh in a scratch directory; $VMXSIM is the program, $ROOT the repo.

BASIC="$ROOT/traces/examples/basic.txt"

# ---- round trip of the example trace ----

run "$VMXSIM" trace asm "$BASIC" -o basic.bin
check_rc "asm basic.txt succeeds" 0
check_eq "asm prints nothing" "" "$out$err"

run "$VMXSIM" trace dump basic.bin
check_rc "dump basic.bin succeeds" 0
printf '%s\n' "$out" > dump1.txt
check_contains "dump starts with the header" "$out" "@workload basic
@paging 64
@vcpus 2
@meta {\"origin\": \"hand-written\", \"purpose\": \"exercises every mnemonic\"}
@init cr0=0x80050033 cr3=0x1000 cr4=0x6f0 cr8=0x0
@init vcpu=1 cr0=0x80050033 cr3=0x1000 cr4=0x6f0"
check_contains "dump normalises spellings" "$out" "cpuid 0x7 +120"
check_contains "dump splits a long run" "$out" "run 4294967295
run 1705032705"
check_contains "dump marks vCPU changes" "$out" "hlt +50
vcpu 1
run 1200"

run "$VMXSIM" trace asm dump1.txt -o basic2.bin
check_rc "re-asm of the dump succeeds" 0
if cmp -s basic.bin basic2.bin; then pass "re-assembled binary is byte-identical"
else fail "re-assembled binary is byte-identical" "cmp: $(cmp basic.bin basic2.bin 2>&1)"; fi

run "$VMXSIM" trace dump basic2.bin -o dump2.txt
check_rc "dump -o succeeds" 0
check_eq "dump -o writes nothing to stdout" "" "$out"
check_eq "dump(asm(dump(x))) == dump(x)" "$(cat dump1.txt)" "$(cat dump2.txt)"

run "$VMXSIM" trace asm - -o stdin.bin < "$BASIC"
check_rc "asm reads - as stdin" 0
if cmp -s basic.bin stdin.bin; then pass "asm from stdin gives the same binary"
else fail "asm from stdin gives the same binary" "cmp: $(cmp basic.bin stdin.bin 2>&1)"; fi

: > empty.txt
run "$VMXSIM" trace asm empty.txt -o empty.bin
check_rc "asm of an empty text succeeds" 0
run "$VMXSIM" trace dump empty.bin
check_eq "an empty trace dumps to its header" "@paging 64
@vcpus 1" "$out"

# A raw line can spell a record the reader refuses (a fuzz input: CR2 as `raw crr`): the
# assembler refuses it at its line, and writes no trace.
printf 'hlt\nraw\tcrr 2\t2\t4\n' > badraw.txt
run "$VMXSIM" trace asm badraw.txt -o badraw.bin
check_rc "asm of an impossible raw record: exit 3" 3
check_contains "it is named with its line" "$err" "badraw.txt:2: crr record not valid: control register not 0, 3, 4 or 8"
if [ -e badraw.bin ]; then fail "no trace is written" "badraw.bin exists"; else pass "no trace is written"; fi

# ---- info ----

run "$VMXSIM" trace info basic.bin
check_rc "info succeeds" 0
check_contains "info: workload" "$out" "workload:    basic"
check_contains "info: records" "$out" "records:     55"
check_contains "info: cycles per vCPU" "$out" "cycles:      6000003770 native (vcpu 0: 2570, vcpu 1: 6000001200)"
check_contains "info: marks by label" "$out" "marks:       3 (iteration 2, done-16-bytes!! 1)"
check_contains "info: pretty metadata" "$out" "\"origin\": \"hand-written\","
check_contains "info: CR writes by register" "$out" "  cr3w       2"
check_contains "info: DR writes by register" "$out" "  drw7       1"

run "$VMXSIM" trace info basic.bin --format json
check_rc "info --format json succeeds" 0
flat=$(printf '%s' "$out" | tr -d ' \t\n')
check_contains "json: records" "$flat" '"records":55,'
check_contains "json: vcpu cycles" "$flat" '"vcpu_cycles":[2570,6000001200]'
check_contains "json: metadata object" "$flat" '"metadata":{"origin":"hand-written","purpose":"exerciseseverymnemonic"}'
check_contains "json: event counts" "$flat" '"cr3w":2,"cr4w":1,"cr8w":1,"cr0r":1'
check_contains "json: mark labels" "$flat" '"mark_labels":{"iteration":2,"done-16-bytes!!":1}'

# ---- corrupt binaries, crafted from a small good one ----
# small.bin: metadata "{}" (2 bytes), records at byte 66 (run) and 90 (hlt); 114 bytes.

printf '@meta {}\nrun 1\nhlt\n' > small.txt
run "$VMXSIM" trace asm small.txt -o small.bin
check_eq "small.bin has the expected size" "114" "$(wc -c < small.bin | tr -d ' ')"

bad_binary() { # name file expected-message-fragment
  for sub in dump info; do
    run "$VMXSIM" trace $sub "$2"
    check_rc "$1: $sub exits 3" 3
    check_contains "$1: $sub message" "$err" "vmxsim: $2: $3"
  done
}

head -c 40 small.bin > short-header.bin
bad_binary "truncated header" short-header.bin "byte 40: truncated header (64 bytes needed)"

head -c 100 small.bin > short-record.bin
bad_binary "truncated record" short-record.bin "byte 90: truncated record (file ends 10 bytes into record 1)"

{ printf 'XMXTRACE'; tail -c +9 small.bin; } > magic.bin
bad_binary "wrong magic" magic.bin "byte 0: not a vmxsim trace (bad magic; text traces must first be assembled with 'vmxsim trace asm')"

cp small.bin version.bin
printf '\003' | dd of=version.bin bs=1 seek=8 conv=notrunc 2>/dev/null
bad_binary "future version" version.bin "byte 8: format version 3 is newer than this vmxsim understands (2); upgrade vmxsim"

cp small.bin type.bin
printf '\310' | dd of=type.bin bs=1 seek=90 conv=notrunc 2>/dev/null
bad_binary "unknown event type" type.bin "byte 90: record 1: unknown event type 200"

cp small.bin metalen.bin
printf '\377\377\377\377' | dd of=metalen.bin bs=1 seek=24 conv=notrunc 2>/dev/null
bad_binary "absurd metadata length" metalen.bin "byte 24: metadata length 4294967295 exceeds the file (114 bytes) or the 16777216-byte limit"

bad_binary "text given to dump" small.txt "byte 0: not a vmxsim trace"

run "$VMXSIM" trace dump missing.bin
check_rc "dump of a missing file exits 3" 3
check_eq "dump of a missing file: message" "vmxsim: missing.bin: No such file or directory" "$err"

# ---- malformed text ----

printf 'run 1\n# comment\ncr5w 0x1\n' > bad.txt
run "$VMXSIM" trace asm bad.txt -o bad.bin
check_rc "malformed text exits 3" 3
check_eq "malformed text: FILE:LINE: message" "vmxsim: bad.txt:3: unknown event 'cr5w' (control registers: cr0, cr3, cr4, cr8)" "$err"
if [ -e bad.bin ]; then fail "malformed text leaves no output file" "bad.bin exists"; else pass "malformed text leaves no output file"; fi
check_eq "no temporary file is left either" "" "$(ls -A | grep -F .vmxsim-tmp.)"

cp small.bin keep.bin
run "$VMXSIM" trace asm bad.txt -o keep.bin
check_rc "failed asm over an existing file exits 3" 3
if cmp -s small.bin keep.bin; then pass "failed asm leaves an existing output untouched"
else fail "failed asm leaves an existing output untouched" "keep.bin changed"; fi

# -o - streams to standard output (the header first, its count unknown); an existing file keeps its mode
printf 'hlt\n' > ok.txt
"$VMXSIM" trace asm ok.txt -o - | cat > ok-stream.bin
check_eq "asm -o - | cat: the records run to the end (format version 2)" "02 00" "$(od -An -tx1 -j8 -N2 ok-stream.bin | sed 's/^ //')"
"$VMXSIM" trace asm ok.txt -o ok-file.bin
check_eq "asm -o - reads back as the same trace" "$("$VMXSIM" trace dump ok-file.bin)" "$("$VMXSIM" trace dump ok-stream.bin)"
"$VMXSIM" trace asm ok.txt -o - > ok-redirect.bin
if cmp -s ok-file.bin ok-redirect.bin; then pass "asm -o - > FILE: the header is finished in place (version 1, byte-identical)"
else fail "asm -o - > FILE: byte-identical to -o FILE" "$(od -An -tx1 -N32 ok-redirect.bin)"; fi
[ -e ./- ] && fail "asm -o - writes no file named -" "./- exists" || pass "asm -o - writes no file named -"
printf 'hlt\nvcpu 1\nhlt\n' > grow.txt
run sh -c "\"$VMXSIM\" trace asm grow.txt -o - | cat > /dev/null"
check_contains "asm -o -: a vCPU count that grows after the header is an error" "$err" \
  "vCPU 1 beyond the header's count 1, which went to standard output first (declare the vCPUs up front, e.g. @vcpus in a text trace)"
cp small.bin mode.bin && chmod 640 mode.bin
run "$VMXSIM" trace asm ok.txt -o mode.bin
check_rc "asm over an existing file" 0
check_eq "asm over an existing file keeps its mode" "640" "$(stat -c %a mode.bin)"

printf 'drw 9 0x1\n' > bad.txt
run "$VMXSIM" trace asm bad.txt -o bad.bin
check_eq "out-of-range operand message" "vmxsim: bad.txt:1: drw: debug register 9 out of range 0..7" "$err"

printf 'hlt\n@paging 32\n' > bad.txt
run "$VMXSIM" trace asm bad.txt -o bad.bin
check_eq "late header directive message" "vmxsim: bad.txt:2: @paging: header directives must come before the first event" "$err"

printf '@meta {\n@meta "a": x\n@meta }\n' > bad.txt
run "$VMXSIM" trace asm bad.txt -o bad.bin
check_rc "bad metadata JSON exits 3" 3
check_eq "bad metadata JSON names its line" "vmxsim: bad.txt:2: @meta: invalid JSON at column 12: 'x'" "$err"

run "$VMXSIM" trace asm - -o bad.bin < bad.txt
check_contains "stdin errors are named <stdin>" "$err" "vmxsim: <stdin>:2: @meta:"

printf 'run 1\nhlt\000garbage\n' > nul.txt
run "$VMXSIM" trace asm nul.txt -o nul.bin
check_rc "a NUL byte in the text exits 3" 3
check_eq "a NUL byte in the text: FILE:LINE: message" \
  "vmxsim: nul.txt:2: NUL byte at column 4 (a binary file? 'vmxsim trace dump' turns a binary trace into text)" "$err"
if [ -e nul.bin ]; then fail "a NUL byte leaves no output file" "nul.bin exists"; else pass "a NUL byte leaves no output file"; fi

run "$VMXSIM" trace asm small.bin -o twice.bin
check_rc "asm of a binary trace exits 3" 3
check_contains "asm of a binary trace: the message says so" "$err" "vmxsim: small.bin:1: NUL byte at column 10 (a binary file?"

run "$VMXSIM" trace asm missing.txt -o out.bin
check_rc "asm of a missing file exits 3" 3
check_eq "asm of a missing file: message" "vmxsim: missing.txt: No such file or directory" "$err"

# ---- usage ----

run "$VMXSIM" trace
check_rc "trace without a subcommand exits 2" 2
run "$VMXSIM" trace --help
check_rc "trace --help exits 0" 0
check_contains "trace --help shows an example" "$out" "vmxsim trace asm traces/examples/basic.txt -o basic.bin"
for sub in asm dump info; do
  run "$VMXSIM" trace $sub --help
  check_rc "trace $sub --help exits 0" 0
  check_contains "trace $sub --help has usage and example" "$out" "usage: vmxsim trace $sub"
  check_contains "trace $sub --help has an example" "$out" "example:"
done
run "$VMXSIM" trace frob
check_rc "unknown subcommand exits 2" 2
check_eq "unknown subcommand hint" "vmxsim: trace: unknown subcommand 'frob' (asm, dump, info); see 'vmxsim trace --help'" "$err"
run "$VMXSIM" trace asm "$BASIC"
check_rc "asm without -o exits 2" 2
check_eq "asm without -o hint" "vmxsim: trace asm: missing -o OUT.bin; see 'vmxsim trace asm --help'" "$err"
run "$VMXSIM" trace dump --bogus basic.bin
check_rc "unknown option exits 2" 2
check_contains "unknown option hint" "$err" "unknown option '--bogus'"
run "$VMXSIM" trace info basic.bin --format xml
check_rc "unknown info format exits 2" 2
check_contains "unknown info format hint" "$err" "unknown format 'xml' (table, json)"
