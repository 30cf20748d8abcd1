# CLI tests for `vmxsim regress`: pass/fail with the right diff, JUnit and JSON
# output, clear errors for bad case files, --update round trips, temporary traces.
# Sourced by tests/cli/run.sh in a scratch directory; $VMXSIM is the program, $ROOT the repo.

mkdir -p tmp
export TMPDIR="$PWD/tmp"       # generated traces go here; checked empty at the end

# A hand-written trace with known exits under shadowcache: 2 CR3 writes, CPUID, HLT.
cat > tiny.txt <<'EOF'
@workload tiny
@init cr0=0x80050033 cr3=0x1000 cr4=0x6f0
run 1000
cr3w 0x2000
run 1000
cr3w 0x1000
cpuid 0x1
hlt
mark op
EOF
mkdir -p cases/sub
cat > cases/tiny.json <<'EOF'
{
  "cycles_tolerance": 0.001,
  "description": "a hand-written trace",
  "policy": "shadowcache",
  "trace": "../tiny.txt"
}
EOF
cat > cases/sub/latctx.json <<'EOF'
{
  "generate": ["lat_ctx", "--procs", "2", "--size", "0", "--iters", "5"],
  "policy": "shadowcache+lazydr",
  "set": {"shadow_pages_max": 64}
}
EOF

# value FILE KEY: the number after "KEY": in a case file
value() { sed -n "s/^ *\"$2\": \([0-9]*\),*$/\1/p" "$1" | head -1; }
# row SECTION NAME EXPECTED ACTUAL DELTA: one line of the diff table
row() { printf '       %-11s %-30s %14s %14s  %s' "$@"; }

# ---- usage ----

run "$VMXSIM" regress --help
check_rc "--help exits 0" 0
check_contains "--help shows usage" "$out" "usage: vmxsim regress [DIR|FILE...] [--update] [--format table|json|junit] [-o FILE]"
check_contains "--help shows a JUnit example" "$out" "vmxsim regress --format junit -o vmxsim-regress.xml"
check_contains "--help shows the case format" "$out" '"cycles_tolerance": 0.001'
run "$VMXSIM" --help
check_contains "vmxsim --help lists regress" "$out" "  regress "
run "$VMXSIM" regress --bogus cases
check_rc "unknown option exits 2" 2
check_contains "unknown option hint" "$err" "regress: unknown option '--bogus'"
run "$VMXSIM" regress --format xml cases
check_rc "unknown format exits 2" 2
check_contains "unknown format hint" "$err" "unknown format 'xml' (table, json, junit)"
run "$VMXSIM" regress -o
check_rc "-o without a value exits 2" 2
run "$VMXSIM" regress nowhere
check_rc "missing path exits 3" 3
check_eq "missing path message" "vmxsim: nowhere: No such file or directory" "$err"
mkdir -p empty
run "$VMXSIM" regress empty
check_rc "directory without cases exits 3" 3
check_contains "directory without cases message" "$err" "empty: no case files (*.json)"

# ---- no expectations yet, then --update records them ----

run "$VMXSIM" regress cases
check_rc "cases without expectations are errors (3)" 3
check_contains "the error says how to record them" "$err" "cases/tiny.json: no \"expect\" yet; record the current results with 'vmxsim regress --update cases/tiny.json'"

run "$VMXSIM" regress --update cases
check_rc "--update succeeds" 0
check_contains "--update reports recorded files (recursively)" "$out" "recorded  cases/sub/latctx.json
recorded  cases/tiny.json"
check_contains "--update summary" "$out" "regress --update: 0 updated, 2 recorded, 0 unchanged, 0 errors (2 cases"
check_eq "recorded CR_ACCESS" "2" "$(value cases/tiny.json CR_ACCESS)"
check_eq "recorded breakdown row" "2" "$(value cases/tiny.json 'cr3 write')"
check_eq "recorded CPUID" "1" "$(value cases/tiny.json CPUID)"
check_eq "recorded HLT" "1" "$(value cases/tiny.json HLT)"
check_eq "recorded total_exits" "4" "$(value cases/tiny.json total_exits)"
check_eq "recorded marks counter" "1" "$(value cases/tiny.json marks)"
check_contains "other fields kept, keys sorted, 2-space indentation" "$(cat cases/tiny.json)" '{
  "cycles_tolerance": 0.001,
  "description": "a hand-written trace",
  "expect": {
    "counters": {'
check_contains "the layout ends with the kept fields" "$(cat cases/tiny.json)" '  },
  "policy": "shadowcache",
  "trace": "../tiny.txt"
}'
check_contains "arrays of scalars stay on one line" "$(cat cases/sub/latctx.json)" '"generate": ["lat_ctx", "--procs", "2", "--size", "0", "--iters", "5"],'

cp cases/tiny.json tiny.1; cp cases/sub/latctx.json latctx.1
run "$VMXSIM" regress --update cases
check_rc "second --update succeeds" 0
check_contains "second --update changes nothing" "$out" "0 updated, 0 recorded, 2 unchanged, 0 errors"
if cmp -s tiny.1 cases/tiny.json && cmp -s latctx.1 cases/sub/latctx.json; then pass "second --update: byte-identical files"
else fail "second --update: byte-identical files" "$(diff tiny.1 cases/tiny.json; diff latctx.1 cases/sub/latctx.json)"; fi

run "$VMXSIM" regress cases
check_rc "check after --update passes" 0
check_eq "one line per case, then the summary" "PASS      cases/sub/latctx.json
PASS      cases/tiny.json" "$(printf '%s\n' "$out" | sed '$d')"
check_contains "summary line" "$out" "regress: 2 passed, 0 failed, 0 errors (2 cases,"
run "$VMXSIM" regress -q cases
check_eq "-q leaves out passing cases" "regress: 2 passed" "$(printf '%s' "$out" | cut -c1-17)"

# ---- a deliberately changed expectation fails with the right diff ----

cycles=$(value cases/tiny.json cycles)
roots=$(value cases/tiny.json root_misses)
sed -e 's/"CR_ACCESS": 2,/"CR_ACCESS": 5,/' -e "s/\"root_misses\": $roots,/\"root_misses\": $((roots + 7)),/" \
    cases/tiny.json > broken.json
sed -i 's#"../tiny.txt"#"tiny.txt"#' broken.json
run "$VMXSIM" regress broken.json
check_rc "a changed expectation exits 6" 6
check_contains "FAIL line with the count" "$out" "FAIL      broken.json  (2 differences)"
check_contains "diff header" "$out" "$(row section name expected actual delta)"
check_contains "diff row for the exit reason" "$out" "$(row exits CR_ACCESS 5 2 -3)"
check_contains "diff row for the counter" "$out" "$(row counters root_misses $((roots + 7)) "$roots" -7)"
check_not_contains "unchanged rows are not listed" "$out" "cr3 write"
check_contains "failure summary" "$out" "regress: 0 passed, 1 failed, 0 errors"

# Missing reasons are expected to be 0: drop HLT from the expectations.
grep -v '"HLT": 1,' cases/tiny.json | sed 's#"../tiny.txt"#"tiny.txt"#' > nohlt.json
run "$VMXSIM" regress nohlt.json
check_rc "an unexpected exit reason fails" 6
check_contains "it is listed with expected 0" "$out" "$(row exits HLT 0 1 +1)"

# ---- cycles within and beyond the tolerance ----

within=$((cycles + cycles / 2000))          # +0.05%, tolerance 0.1%
sed -e "s/\"cycles\": $cycles,/\"cycles\": $within,/" -e 's#"../tiny.txt"#"tiny.txt"#' cases/tiny.json > within.json
run "$VMXSIM" regress within.json
check_rc "cycles within the tolerance pass" 0
check_contains "the pass line notes the drift" "$out" "within 0.1%)"
beyond=$((cycles + cycles / 200))           # +0.5%
sed -e "s/\"cycles\": $cycles,/\"cycles\": $beyond,/" -e 's#"../tiny.txt"#"tiny.txt"#' cases/tiny.json > beyond.json
run "$VMXSIM" regress beyond.json
check_rc "cycles beyond the tolerance fail" 6
check_contains "cycles row names the tolerance" "$out" "cycles      total (tolerance 0.1%)"

# ---- JUnit and JSON ----

run "$VMXSIM" regress --format junit -o report.xml broken.json cases
check_rc "junit run with a failure exits 6" 6
check_contains "the table still goes to stdout" "$out" "FAIL      broken.json"
xml=$(cat report.xml)
check_contains "junit: declaration" "$xml" '<?xml version="1.0" encoding="UTF-8"?>'
check_contains "junit: testsuite counts" "$xml" '<testsuite name="vmxsim regress" tests="3" failures="1" errors="0"'
check_contains "junit: passing testcase" "$xml" '<testcase classname="cases" name="tiny" file="cases/tiny.json"'
check_contains "junit: failure element" "$xml" '<failure type="regression" message="2 differences: exits CR_ACCESS expected 5, got 2, ...">'
check_contains "junit: the diff in the failure text" "$xml" "$(row exits CR_ACCESS 5 2 -3)"
check_contains "junit: closes" "$xml" "</testsuite>
</testsuites>"
if command -v xmllint >/dev/null 2>&1; then
  if xmllint --noout report.xml 2>xml.err; then pass "junit: well-formed (xmllint)"; else fail "junit: well-formed (xmllint)" "$(cat xml.err)"; fi
elif command -v python3 >/dev/null 2>&1; then
  if python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' report.xml 2>xml.err
  then pass "junit: well-formed (python3)"; else fail "junit: well-formed (python3)" "$(cat xml.err)"; fi
else
  skip "junit well-formedness: neither xmllint nor python3 found"
fi

printf '{"<&\\"\\u0001>": 1, "policy": "nocache", "trace": "tiny.txt"}\n' > xmlbad.json
run "$VMXSIM" regress --format junit xmlbad.json
check_rc "junit: an error case exits 3" 3
check_contains "junit: error element, markup escaped, control character replaced" "$out" \
  '<error type="error" message="xmlbad.json: unknown key &apos;&lt;&amp;&quot;?&gt;&apos;'
check_not_contains "junit: nothing but XML on stdout" "$out" "ERROR"

run "$VMXSIM" regress --format json broken.json
check_rc "json run exits 6" 6
flat=$(printf '%s' "$out" | tr -d ' \n')
check_contains "json: failing case" "$flat" '"file":"broken.json","policy":"shadowcache","seconds":'
check_contains "json: difference" "$flat" '{"actual":2,"delta":-3,"expected":5,"name":"CR_ACCESS","section":"exits"}'
check_contains "json: summary" "$flat" '"errors":0,"failed":1,"passed":0,'

run "$VMXSIM" regress -o table.txt cases
check_rc "-o with the table" 0
check_contains "-o writes the table to the file" "$(cat table.txt)" "PASS      cases/tiny.json"

# ---- --update after a change prints what changed, then checks pass ----

cp broken.json drift.json
run "$VMXSIM" regress --update drift.json
check_rc "--update of a drifted case succeeds" 0
check_contains "--update says what changed" "$out" "updated   drift.json  (2 changes)"
check_contains "--update diff: was/now" "$out" "$(row exits CR_ACCESS 5 2 -3)"
run "$VMXSIM" regress drift.json
check_rc "the updated case passes" 0

# A hand-formatted case (tabs, unsorted keys) is rewritten once, then stable.
printf '{"trace":"tiny.txt",\n\t"policy":"nocache", "expect": {"exits": {"CR_ACCESS": 2}}}\n' > hand.json
run "$VMXSIM" regress --update hand.json
check_contains "first --update of a hand-written case" "$out" "updated   hand.json"
cp hand.json hand.1
run "$VMXSIM" regress --update hand.json
check_contains "second --update: unchanged" "$out" "unchanged hand.json"
if cmp -s hand.1 hand.json; then pass "hand-written case: byte-identical after the second --update"
else fail "hand-written case: byte-identical after the second --update" "$(diff hand.1 hand.json)"; fi

# --update drops expectations this vmxsim does not know (a removed counter).
sed 's/"marks": 1,/"marks": 1, "retired_counter": 3,/' cases/tiny.json | sed 's#"../tiny.txt"#"tiny.txt"#' > retired.json
run "$VMXSIM" regress retired.json
check_rc "check: an unknown counter is an error" 3
line=$(grep -n retired_counter retired.json | cut -d: -f1)
check_contains "unknown counter message names file and line" "$err" "retired.json:$line: expect.counters: unknown counter 'retired_counter'"
run "$VMXSIM" regress --update retired.json
check_rc "--update: an unknown counter is dropped" 0
check_contains "--update names what it dropped" "$out" "dropped (unknown to this vmxsim): expect.counters.retired_counter"
check_not_contains "the counter is gone" "$(cat retired.json)" "retired_counter"

# ---- malformed cases: clear errors naming the file ----

bad_case() { # name file-content expected-stderr
  printf '%s\n' "$2" > bad.json
  run "$VMXSIM" regress bad.json
  check_rc "$1: exits 3" 3
  check_contains "$1: message" "$err" "vmxsim: $3"
  check_contains "$1: ERROR line" "$out" "ERROR     bad.json"
}
bad_case "bad JSON" '{
  "policy": "shadowcache",
  "trace": "tiny.txt"
  "expect": {}
}' "bad.json:4:3: invalid JSON near '\"expect\": {}'"
bad_case "truncated JSON" '{"policy": "shadowcache",' "bad.json:1:26: invalid JSON: unexpected end of file (an object, array or string is not closed)"
bad_case "empty file" '' "bad.json: empty file (expected a JSON object)"
bad_case "not an object" '[1, 2]' "bad.json: expected a JSON object at the top level"
bad_case "unknown key" '{
  "policy": "shadowcache",
  "trace": "tiny.txt",
  "polcy": "ept"
}' "bad.json:4: unknown key 'polcy' (expected cpu, cycles_tolerance, description, expect, generate, policy, set, trace)"
bad_case "unknown expect key" '{"policy": "shadowcache", "trace": "tiny.txt", "expect": {"exit": {}}}' \
  "bad.json:1: expect: unknown key 'exit' (expected counters, cycles, events, exits, total_exits)"
bad_case "unknown exit reason" '{"policy": "shadowcache", "trace": "tiny.txt", "expect": {"exits": {"CR_ACESS": 2}}}' \
  "bad.json:1: expect.exits: unknown exit reason or breakdown row 'CR_ACESS'"
bad_case "negative count" '{"policy": "shadowcache", "trace": "tiny.txt", "expect": {"total_exits": -1}}' \
  "bad.json:1: expect.total_exits: expected a non-negative integer"
bad_case "missing policy" '{"trace": "tiny.txt", "expect": {}}' 'bad.json: missing "policy" (a preset such as "shadowcache"'
bad_case "missing trace and generate" '{"policy": "ept"}' 'bad.json: missing "trace" (a trace file, relative to the case file) or "generate"'
bad_case "trace and generate" '{"policy": "ept", "trace": "t.bin", "generate": ["lat_ctx"]}' \
  'bad.json:1: give either "trace" or "generate", not both'
bad_case "duplicate key" '{"policy": "ept",
"policy": "nocache", "trace": "tiny.txt"}' "bad.json:1: duplicate key 'policy'"
bad_case "missing trace" '{"policy": "ept", "trace": "missing.bin", "expect": {}}' \
  "bad.json: trace missing.bin: No such file or directory"
bad_case "unknown policy" '{"policy": "shadowcache+lazyd", "trace": "tiny.txt", "expect": {}}' \
  "bad.json: unknown policy 'lazyd'; valid: "
bad_case "unknown knob" '{"policy": "ept", "set": {"vpidd": true}, "trace": "tiny.txt", "expect": {}}' \
  "bad.json: unknown knob 'vpidd'"
bad_case "unknown CPU" '{"policy": "ept", "cpu": "pentium", "trace": "tiny.txt", "expect": {}}' "bad.json: unknown CPU"
bad_case "-o in generate" '{"policy": "ept", "generate": ["lat_ctx", "-o", "x.bin"]}' \
  'bad.json:1: "generate": leave out -o: vmxsim regress writes the trace to a temporary file'
bad_case "generator error" '{"policy": "ept", "generate": ["lat_ctx", "--procs", "1", "--iters", "5"], "expect": {}}' \
  "bad.json: generate lat_ctx --procs 1 --iters 5 failed: gen lat_ctx: --procs"
printf 'cr5w 0x1\n' > bad.txt
bad_case "bad text trace (a word of it is not quoted: see below)" '{"policy": "ept", "trace": "bad.txt", "expect": {}}' \
  "bad.json: trace asm bad.txt failed: bad.txt:1: unknown event at column 1 (control registers: cr0, cr3, cr4, cr8)"

# Errors do not stop the other cases; the summary counts them.
run "$VMXSIM" regress bad.json cases
check_rc "an error among passing cases exits 3" 3
check_contains "the other cases still run" "$out" "regress: 2 passed, 0 failed, 1 error (3 cases"

# ---- the files a case names: anywhere the user can read, relative to the case file ----

run "$VMXSIM" regress --help
check_contains "--help states where a case's files may be" "$out" "A case may name any file you can read"
check_contains "--help says to run only trusted cases" "$out" "run only cases you trust"
check_contains "--help says their text is not quoted" "$out" "never quote"

# ../ and absolute paths, for the trace, a policy file and a CPU file alike
mkdir -p named/deep
printf '{"knobs": {"vpid": false}}\n' > named/plain.json
printf '{"trace": "../../tiny.txt", "policy": "../plain.json", "cpu": "%s"}\n' \
  "$ROOT/models/cpus/core2-2007.json" > named/deep/up.json
printf '{"trace": "%s/tiny.txt", "policy": "%s/named/plain.json+lazydr"}\n' "$PWD" "$PWD" > named/deep/abs.json
run "$VMXSIM" regress --update named/deep
check_rc "a case may name files with ../ and absolute paths" 0
check_contains "... both are recorded" "$out" "2 recorded, 0 unchanged, 0 errors"
run "$VMXSIM" regress named/deep
check_rc "... and pass" 0
check_eq "... with the exits of the trace they name" "4 4" \
  "$(value named/deep/up.json total_exits) $(value named/deep/abs.json total_exits)"

# A case reached through a symbolic link names its files from where the case file is.
mkdir -p links
ln -s ../named/deep/up.json links/up.json
run "$VMXSIM" regress links/up.json
check_rc "a symbolic link to a case: its paths are relative to the case file, not the link" 0
check_contains "... the link is the name shown" "$out" "PASS      links/up.json"

# ---- what a case names is read but never quoted: its text stays out of every message ----

printf 'hunter2-line-one of a private file\nhunter2-line-two\n' > private.txt
cp private.txt private-trace.txt
printf '{"knobs": {"hunter2_knob": "hunter2-value"}, "params": {"hunter2_param": 1}}\n' > private.json
printf '{"knobs": {"paging": "hunter2-paging"}}\n' > private-value.json
printf '{"base": "/hunter2/base/path", "knobs": {}}\n' > private-base.json
printf '{"knobs": {"vpid": hunter2}}\n' > private-syntax.json
hidden_case() { # name case-json file-named
  printf '%s\n' "$2" > hidden.json
  run "$VMXSIM" regress hidden.json
  check_rc "$1: exits 3" 3
  check_contains "$1: the message names the file" "$err" "vmxsim: hidden.json: "
  check_contains "$1: ... and the file it names" "$err" "$3"
  check_not_contains "$1: its text is not on standard error" "$err" "hunter2"
  check_not_contains "$1: nor on standard output" "$out" "hunter2"
  run "$VMXSIM" regress --format junit hidden.json
  check_not_contains "$1: nor in the JUnit report" "$out" "hunter2"
}
hidden_case "a text file as the trace" '{"policy": "ept", "trace": "private-trace.txt", "expect": {}}' \
  "trace asm private-trace.txt failed: private-trace.txt:1: unknown event at column 1"
hidden_case "a text file as the policy" '{"policy": "./private.txt", "trace": "tiny.txt", "expect": {}}' \
  "./private.txt:1:1: malformed JSON (expected a JSON object; its text is not shown)"
hidden_case "a text file as the CPU" '{"policy": "ept", "cpu": "./private.txt", "trace": "tiny.txt", "expect": {}}' \
  "./private.txt:1:1: malformed JSON"
hidden_case "a JSON file as the policy: an unknown knob" \
  '{"policy": "private.json", "trace": "tiny.txt", "expect": {}}' "private.json:1: unknown knob; valid knobs: paging,"
hidden_case "a JSON file as the policy: a bad value" \
  '{"policy": "private-value.json", "trace": "tiny.txt", "expect": {}}' \
  "private-value.json:1: knob paging: the value is not one of: shadow, ept"
hidden_case "a JSON file as the policy: the base it names" \
  '{"policy": "private-base.json", "trace": "tiny.txt", "expect": {}}' "private-base.json:1: \"base\": "
hidden_case "a JSON file as the policy: a syntax error" \
  '{"policy": "private-syntax.json", "trace": "tiny.txt", "expect": {}}' "private-syntax.json:1:20: malformed JSON"
hidden_case "a JSON file as the CPU: an unknown parameter" \
  '{"policy": "ept", "cpu": "private.json", "trace": "tiny.txt", "expect": {}}' \
  "private.json:1: a key of params: unknown parameter; valid: clock_ghz,"
cp private.txt private.bin
hidden_case "a text file as a binary trace" '{"policy": "ept", "trace": "private.bin", "expect": {}}' \
  "private.bin: byte 0: not a vmxsim trace"
# what the user names on the command line is the user's own: its messages still quote it
run "$VMXSIM" trace asm private-trace.txt -o private-out.bin
check_contains "trace asm still quotes the file it is given" "$err" "unknown event 'hunter2-line-one'"
run "$VMXSIM" --no-db --policy private.json "$ROOT/traces/lat_ctx-2p.bin"
check_contains "--policy FILE still quotes the file it is given" "$err" "unknown knob 'hunter2_knob'"

# ---- what is not a regular file is refused, not waited on ----

mkfifo named.fifo
printf '{"policy": "ept", "trace": "named.fifo", "expect": {}}\n' > fifo-trace.json
printf '{"policy": "ept", "trace": "named-fifo.txt", "expect": {}}\n' > fifo-text.json
ln -s named.fifo named-fifo.txt
printf '{"policy": "./named.fifo", "trace": "tiny.txt", "expect": {}}\n' > fifo-policy.json
printf '{"policy": "ept", "cpu": "/dev/null", "trace": "tiny.txt", "expect": {}}\n' > null-cpu.json
for c in fifo-trace fifo-text fifo-policy null-cpu; do
  run timeout 20 "$VMXSIM" regress $c.json
  check_rc "$c: refused at once (exit 3, not a wait)" 3
  check_contains "$c: ... as not a regular file" "$err" ", not a regular file"
done
check_contains "a device as the CPU: the message" "$err" "null-cpu.json: /dev/null: is a character device, not a regular file"
run timeout 20 "$VMXSIM" regress fifo-trace.json
check_contains "a FIFO as the trace: the message" "$err" "fifo-trace.json: named.fifo: is a FIFO, not a regular file"
mkfifo case.fifo.json
run timeout 20 "$VMXSIM" regress case.fifo.json
check_rc "a case file that is a FIFO is refused at once" 3
check_contains "... with the reason" "$err" "case.fifo.json: is a FIFO, not a regular file"
rm -f case.fifo.json named.fifo named-fifo.txt

# a symbolic link to a directory the scan is in would be followed for ever (two took 2^40 steps)
mkdir -p loop
cp named/deep/up.json loop/
sed -i 's#"../../tiny.txt"#"../tiny.txt"#; s#"../plain.json"#"../named/plain.json"#' loop/up.json
ln -s . loop/again
ln -s .. loop/parent
run timeout 20 "$VMXSIM" regress loop
check_rc "a directory with a link back into itself is refused (3), not scanned for ever" 3
check_contains "... the message names the loop" "$err" "loop/again: is loop again, a directory it is in (a loop of symbolic links)"
rm -rf loop

# ---- generated traces are temporary ----

check_eq "no temporary files are left" "" "$(ls -A tmp)"

# ---- the example case of `regress --help` stays true
run "$VMXSIM" regress --help
# the JSON between "  {" and "  }", without the counters line (it lists only some, "...")
printf '%s\n' "$out" | awk '/^  \{$/ { on = 1 } on { print } /^  \}$/ { exit }' > help-case.full
grep -v '"counters":' help-case.full > help-case.json
check_contains "the help's example has an expect section" "$(cat help-case.json)" '"expect": {'
run "$VMXSIM" regress help-case.json
check_rc "the example case of 'regress --help' passes (update its numbers in sim/regress/regress.c when the model moves)" 0
check_contains "the example case passes" "$out" "PASS      help-case.json"
cp help-case.json help-now.json
"$VMXSIM" regress --update help-now.json > /dev/null
for pair in $(sed -n 's/.*"counters": {\(.*\)}.*/\1/p' help-case.full | tr -d ' .' | tr ',' '\n'); do
  name=$(printf '%s' "$pair" | cut -d: -f1 | tr -d '"'); want=$(printf '%s' "$pair" | cut -d: -f2)
  [ -n "$name" ] || continue
  check_eq "the help's counter $name" "\"$name\": $want" "$(grep -o "\"$name\": [0-9]*" help-now.json)"
done

# ---- JUnit: the classname is the case's directory, so equal names in two directories differ
mkdir -p suite/alpha suite/beta
for d in alpha beta; do
  printf '{"trace": "../../tiny.txt", "policy": "shadowcache"}\n' > suite/$d/same.json
done
"$VMXSIM" regress --update suite > /dev/null
run "$VMXSIM" regress --format junit -o same.xml suite
check_rc "junit over two directories" 0
check_contains "junit: classname of alpha" "$(cat same.xml)" '<testcase classname="suite.alpha" name="same"'
check_contains "junit: classname of beta" "$(cat same.xml)" '<testcase classname="suite.beta" name="same"'
check_eq "junit: no two testcases share classname and name" "" \
  "$(sed -n 's/.*<testcase classname="\([^"]*\)" name="\([^"]*\)".*/\1 \2/p' same.xml | sort | uniq -d)"

# ---- a case with several problems reports every one of them
cat > many.json <<'JSON'
{
  "policy": 5,
  "colour": "red",
  "cycles_tolerance": 7,
  "expect": {"exits": {"NOPE": 1}, "events": "x"}
}
JSON
run "$VMXSIM" regress many.json
check_rc "a case with several problems is an error" 3
check_contains "the table counts them" "$out" "ERROR     many.json  (6 problems)"
for want in "many.json:3: unknown key 'colour'" 'many.json: missing "trace"' 'many.json:2: "policy" must be' \
            'many.json:4: "cycles_tolerance" must be' "many.json:5: expect.exits: unknown exit reason or breakdown row 'NOPE'" \
            'many.json:5: expect.events: expected a non-negative integer'; do
  check_contains "reported: $want" "$err" "vmxsim: $want"
done
