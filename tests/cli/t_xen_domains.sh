# CLI tests for xentrace recordings of a Xen host: exits attributed to the (domain, vCPU) the
# scheduler's records put on each pCPU, as xenalyze attributes them (tests/data/xentrace-host:
# two guests of four vCPUs, a PVH dom0, the idle domain, migrating vCPUs, lost records), the
# --domain option, lost-record markers and a recording with the scheduler's records only.
# Sourced by tests/cli/run.sh in a scratch directory; $VMXSIM is the program, $ROOT the repo.

XH="$ROOT/tests/data/xentrace-host"
HOST="$XH/host.xentrace"

if [ -x "${GEN_XENTRACE:-}" ]; then
  "$GEN_XENTRACE" -d 2 -v 4 -0 2 -c 4 -n 800 -l 2 -w 2048 -s 1 -o regen.xentrace
  if cmp -s regen.xentrace "$HOST"; then pass "host fixture: the committed file is what make-fixture.sh writes"
  else fail "host fixture: the committed file is what make-fixture.sh writes" "cmp: $(cmp regen.xentrace "$HOST" 2>&1)"; fi
else
  skip "host fixture: GEN_XENTRACE is not set (make cli builds it)"
fi

# xenalyze's per-vCPU sections as "dDvN NAME COUNT AVG P5 P50 P95": exit reasons and I/O ports
awk '
  /^\|-- Domain [0-9]+ --\|/ { dom = $3; vcpu = ""; next }
  /^-- v[0-9]+ --/ { vcpu = substr($2, 2); next }
  /^Exit reasons:/ { on = 1; next }
  /^Guest interrupt counts:/ { on = 0 }
  /^IO address summary:/ { io = 1; next }
  /^(MMIO address summary:|-- v|\|-- Domain)/ { io = 0 }
  function row(name, i) { gsub(/[{}|]/, " "); n = split($0, f, " ");
    printf "d%sv%s %s %s %s %s %s %s\n", dom, vcpu, name, f[i], f[i + 3], f[i + 5], f[i + 6], f[i + 7] }
  on && vcpu != "" && /^ [A-Z_]+ / { row($1, 2) }
  io && vcpu != "" && /:\[[rw]\]/ { split($1, p, ":"); row("port_0x" p[1] (p[2] == "[w]" ? "_out" : "_in"), 2) }
' "$XH/xenalyze-summary.txt" > expected-all.txt
vcpus=$(awk '{ print $1 }' expected-all.txt | sort -u)
check_eq "host: xenalyze counts exits for the ten vCPUs of dom0 and the two guests" \
  "d0v0 d0v1 d1v0 d1v1 d1v2 d1v3 d2v0 d2v1 d2v2 d2v3" "$(echo $vcpus)"
for v in $vcpus; do
  d=${v#d}; d=${d%v*}; n=${v#*v}
  run "$VMXSIM" summary --domain "$d" --vcpu "$n" --format csv "$HOST"
  actual=$(printf '%s\n' "$out" | awk -F, -v who="$v" '$2 == "reason" || $2 == "port" {
      name = $3; if ($2 == "port") { sub(/^port /, "port_", name); sub(/ /, "_", name) }
      print who, name, $5, $7, $9, $10, $11 }' | sort)
  check_eq "host: $v's exits equal xenalyze's (count, average, p5, p50, p95 per reason and port)" \
    "$(grep "^$v " expected-all.txt | sort)" "$actual"
done

run "$VMXSIM" import xentrace "$HOST" -o host.trace
check_rc "host: imports" 0
check_contains "host: the lost-record markers are reported" "$err" "the recording lost data: 'pCPU"
info=$("$VMXSIM" trace info --format json host.trace | tr -d ' \t\n')
check_contains "host: ten vCPUs, named by domain" "$info" '"vcpus":10,'
check_contains "host: the vCPUs' names in the metadata" "$info" '{"name":"d2v3","domain":2,"vcpu":3}'
check_contains "host: the lost-record markers counted" "$info" '"lost_records":{"markers":2,"records":'
check_contains "host: the domains with their vCPUs" "$info" '"domains":[{"domain":0,"vcpus":2,"exits":'

run "$VMXSIM" summary host.trace
check_rc "host: a summary of every domain" 0
check_contains "host: its vCPU rows are named by domain" "$out" " d1v3 "
check_contains "host: shares are of the vCPUs' time" "$out" "cycles recorded x 10 vCPUs"
check_eq "host: no share above 100%" "" \
  "$(printf '%s\n' "$out" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /%$/ && $i + 0 > 100) print }')"
# a span shorter than a vCPU's exits is not this recording's: bad input, not a share above 100%
"$VMXSIM" trace dump host.trace -o host.txt
sed '/^@meta/s/"span_cycles":[0-9]*/"span_cycles":1000/' host.txt > short-span.txt
"$VMXSIM" trace asm short-span.txt -o short-span.trace
run "$VMXSIM" summary short-span.trace
check_rc "host: a metadata span shorter than a vCPU's exits is bad input" 3
check_contains "host: ... saying so" "$err" 'metadata "span_cycles" 1000 is shorter than the measured exits of d'
run "$VMXSIM" summary --domain 2 --format json host.trace
flat=$(printf '%s' "$out" | tr -d ' \t\n')
check_contains "host: --domain 2 holds domain 2's vCPUs only" "$flat" '"vcpu":{"d2v0":'
check_not_contains "host: ... and no other's" "$flat" '"d1v'
total=$(grep '^d2v' expected-all.txt | awk '$2 ~ /^[A-Z_]+$/ { s += $3 } END { print s }')
check_contains "host: --domain 2 counts xenalyze's exits of domain 2" "$flat" "\"total_exits\":$total,"

# run --views names the vCPU rows as summary does (by domain and vCPU, the trace's vCPU 0 being
# the domain's first scheduled one): each name with the same measured count and average, in the
# table, the JSON and the stored views
"$VMXSIM" summary --domain 1 "$HOST" | awk '$1 ~ /^d[0-9]+v[0-9]+$/ { print $1, $2, $5 }' > summary-vcpus.txt
run "$VMXSIM" run --db views.db --views --domain 1 "$HOST"
check_rc "host: run --views --domain 1" 0
check_eq "host: run --views has summary's four vCPU rows" 4 "$(wc -l < summary-vcpus.txt | tr -d ' ')"
check_eq "host: run --views names the vCPUs as summary does" "$(cat summary-vcpus.txt)" \
  "$(printf '%s\n' "$out" | sed -n '/by address space and vCPU:/,$p' | awk '$1 ~ /^d[0-9]+v[0-9]+$/ { print $1, $2, $3 }')"
check_eq "host: ... and stores them so" "$(cut -d' ' -f1 summary-vcpus.txt | paste -sd' ' -)" \
  "$(sqlite3 views.db "SELECT name FROM views WHERE view = 'vcpu' AND source = 'simulated' ORDER BY seq" | paste -sd' ' -)"
flat=$("$VMXSIM" run --no-db --views --domain 1 --format json "$HOST" | tr -d ' \t\n')
check_contains "host: ... and in JSON" "$flat" "\"vcpu\":{\"$(head -1 summary-vcpus.txt | cut -d' ' -f1)\":"
check_not_contains "host: ... not as 'vcpu N'" "$flat" '"vcpu 0"'

run "$VMXSIM" summary --vcpu 1 host.trace
check_rc "host: --vcpu without --domain is a usage error" 2
check_contains "host: ... naming the domains" "$err" "--vcpu 1: the trace holds domains 0, 1, 2: give --domain D too"
run "$VMXSIM" summary --domain 7 host.trace
check_rc "host: a domain not there is a usage error" 2
check_contains "host: ... naming those there" "$err" "--domain 7: the trace holds domains 0, 1, 2"
run "$VMXSIM" summary --domain 1 --vcpu 9 host.trace
check_rc "host: a vCPU not there is a usage error" 2
check_contains "host: a vCPU not there names the domain's" "$err" "--vcpu 9: domain 1 has vCPUs 0, 1, 2, 3"
run "$VMXSIM" summary --domain 1 "$ROOT/traces/recorded/xentrace-excerpt.bin"
check_rc "host: --domain on a recording without scheduler records is a usage error" 2
check_contains "host: ... saying why" "$err" "the trace names no domains"
run "$VMXSIM" summary --domain 70000 host.trace
check_rc "host: --domain beyond 16 bits is a usage error" 2

# a truncated host recording: refused at the record the file ends in, or read up to it
size=$(wc -c < "$HOST")
head -c $((size - 6)) "$HOST" > cut.xentrace
run "$VMXSIM" import xentrace cut.xentrace -o cut.trace
check_rc "host: a truncated recording is bad input" 3
check_contains "host: ... at the byte of the record it ends in" "$err" "cut.xentrace: byte $((size - 12)): truncated record: the file ends 6 bytes into it"
run "$VMXSIM" import xentrace cut.xentrace -o cut.trace --skip-bad
check_rc "host: ... and with --skip-bad imports what comes before" 0
# a pCPU beyond the 256 followed, in a CPU change of the host file
printf '\003\360\001\040\000\001\000\000\000\000\000\000' > big-cpu.bin   # 0x2001f003 {cpu 256, 0 bytes}
cat "$HOST" big-cpu.bin > big-cpu.xentrace
run "$VMXSIM" import xentrace big-cpu.xentrace -o big-cpu.trace
check_rc "host: a pCPU above 255 is bad input" 3
check_contains "host: ... at its byte" "$err" "big-cpu.xentrace: byte $size: more than 256 physical CPUs"
run "$VMXSIM" import xentrace big-cpu.xentrace -o big-cpu.trace --skip-bad
exits_of() { "$VMXSIM" trace info --format json "$1" | tr -d ' \t\n' | grep -o '"exits":[0-9]*,"entries"'; }
check_eq "host: ... and with --skip-bad every exit before it is read" "$(exits_of host.trace)" "$(exits_of big-cpu.trace)"

# a replay takes one guest: with two, --domain is needed
run "$VMXSIM" --no-db --policy shadowcache -q "$HOST"
check_rc "host: a replay of two guests needs --domain" 2
check_contains "host: ... listing them" "$err" "holds 2 guest domains (1, 2): give --domain D"
run "$VMXSIM" --no-db --policy shadowcache --domain 2 "$HOST"
check_rc "host: a replay of domain 2" 0
check_contains "host: ... of its four vCPUs" "$out" "4 vCPU"
run "$VMXSIM" --no-db --policy shadowcache -q host.trace
check_rc "host: a replay of a trace imported with three domains is a usage error" 2
check_contains "host: ... naming them and what to do" "$err" "the trace holds domains 0, 1, 2: a replay takes one: import the recording again with 'vmxsim import xentrace --domain D'"
run "$VMXSIM" import xentrace --domain 2 "$HOST" -o d2.trace
check_rc "host: import --domain 2" 0
check_contains "host: ... keeps domain 2's four vCPUs" "$("$VMXSIM" trace info --format json d2.trace | tr -d ' \t\n')" '"domains":[{"domain":2,"vcpus":4,'
run "$VMXSIM" --no-db --policy shadowcache -q d2.trace
check_rc "host: ... which replays" 0
run "$VMXSIM" --no-db --policy shadowcache -q --domain 1 d2.trace
check_rc "host: --domain 1 on a trace of domain 2 is a usage error" 2
if [ -x "${GEN_XENTRACE:-}" ]; then
  "$GEN_XENTRACE" -d 1 -v 3 -0 2 -c 2 -n 300 -o one-guest.xentrace
  run "$VMXSIM" --no-db --policy shadowcache one-guest.xentrace
  check_rc "one guest beside dom0: replays without --domain" 0
  check_contains "one guest beside dom0: ... the guest's three vCPUs, dom0's apart" "$out" "3 vCPU"
  run "$VMXSIM" --no-db --policy shadowcache --domain 0 one-guest.xentrace
  check_contains "one guest beside dom0: --domain 0 replays dom0's two" "$out" "2 vCPU"
else
  skip "one guest beside dom0: GEN_XENTRACE is not set (make cli builds it)"
fi

# the scheduler's records without the HVM class: the file is right, the recording lacks exits
if [ -x "${GEN_XENTRACE:-}" ]; then
  "$GEN_XENTRACE" -d 1 -v 2 -c 2 -n 100 -x -o sched-only.xentrace
  run "$VMXSIM" summary sched-only.xentrace
  check_rc "scheduler-only recording: no exits is bad input" 3
  check_contains "scheduler-only recording: says what the file holds and what to record" "$err" \
    "scheduler records and no HVM exit records: was it taken with the HVM class enabled"
  run "$VMXSIM" import xentrace sched-only.xentrace -o sched-only.trace
  check_rc "scheduler-only recording: imports (the coverage warnings say what it lacks)" 0
else
  skip "scheduler-only recording: GEN_XENTRACE is not set (make cli builds it)"
fi

# Each domain replayed under the host's configuration (shadow paging: its CR3 writes exit;
# the fixture's README): every recorded reason simulated as often as measured, but for the
# exits the recording left open (a vCPU blocked in HLT, or preempted, when it ended), which
# the table counts in a note; the two sides differ by exactly that many.
for d in 0 1 2; do
  run "$VMXSIM" --no-db --policy shadowcache --cpu skylake-xen-2018 --domain "$d" "$HOST"
  check_rc "host config, domain $d: replays" 0
  table=$(printf '%s\n' "$out" | awk '/^measured \(the recording\)/ { on = 1; next } /^ by address space/ { on = 0 } on')
  open=$(printf '%s\n' "$table" | sed -n 's/^ (\([0-9]*\) recorded exits\{0,1\} ha[sv]e* no measured time.*/\1/p')
  diff=$(printf '%s\n' "$table" | awk '$1 ~ /^[A-Z_]+$/ && $1 != "VM-EXIT" { d += $4 - $2 } END { print d + 0 }')
  check_eq "host config, domain $d: simulated - measured = the open exits the note counts" "${open:-0}" "$diff"
  check_eq "host config, domain $d: only HLT and EXTERNAL_INTERRUPT (where a vCPU can be left) differ" "" \
    "$(printf '%s\n' "$table" | awk '$1 ~ /^[A-Z_]+$/ && $1 != "VM-EXIT" && $2 != $4 && $1 != "HLT" && $1 != "EXTERNAL_INTERRUPT" { print $1 }')"
  check_eq "host config, domain $d: no reason is left not re-decided" "" "$(printf '%s\n' "$table" | grep 'not re-decided')"
done
run "$VMXSIM" --no-db --format json --policy shadowcache --cpu skylake-xen-2018 --domain 1 "$HOST"
check_contains "host config: JSON counts the open exits" "$(printf '%s' "$out" | tr -d ' \t\n')" '"unmeasured_exits":5,'
