# CLI tests for the measurement recipes of workloads/record/measure: the ring program, the
# lackey page counter (on a hand-made trace, and on a short lackey run where valgrind is
# installed) and the scheduling analyzer (on a hand-made sequence worked out by hand and on a
# short committed recording, checked against counts taken from it with awk).
# Sourced by tests/cli/run.sh in a scratch directory; $ROOT is the repo.

M="$ROOT/workloads/record/measure"
DATA="$ROOT/tests/cli/measure"
CC=${CC:-cc}

# ---- ring.c ----

# shellcheck disable=SC2086  # CC may hold flags
if $CC -std=c11 -O2 -Wall -Wextra -Werror -o ring "$M/ring.c" 2>cc.err; then
  pass "ring.c builds warning-free"
  run ./ring 3 30
  check_rc "ring 3 30 runs" 0
  check_contains "ring prints its marker" "$out" "ring: marker 0x"
  run ./ring -s 64 2 5
  check_rc "ring -s 64 2 5 runs" 0
  run ./ring 1 5
  check_rc "ring of 1 process is refused" 2
  check_contains "ring says its usage" "$err" "usage: ring [-s KB] NPROCS PASSES"
else
  fail "ring.c builds warning-free" "$(head -5 cc.err)"
fi

if ! command -v python3 >/dev/null 2>&1; then
  skip "python3 not installed: the page counter and the analyzer are not tested"
  return 0
fi

# ---- pagecount.py on a hand-made lackey trace ----
# Marker 0x110000. Pass 1: page 0x109 (instruction), 0x7ff000 (data). Pass 2: an instruction
# fetch and a modify that cross page boundaries: pages 0x109, 0x10a, 0x7ff000, 0x7ff001.
# Pass 3: 0x109 and 0x7ff000. Pass 4 never ends (the exit): not counted.
cat > lk.1 <<'EOF'
==1== Lackey, an example Valgrind tool
I  00108000,3
 L 00110000,1
I  00109000,4
 S 7ff000010,4
 L 00110000,1
I  00109000,4
I  00109ffe,4
 M 7ff000ffe,4
 L 00110000,1
I  00109000,4
 L 7ff000010,4
 L 00110000,1
I  0010b000,2
==1== 
EOF
run python3 "$M/pagecount.py" --warmup 1 0x110000 lk.1
check_rc "pagecount: hand-made trace" 0
check_contains "pagecount: 3 passes, 2 steady ones of 4 and 2 pages" "$out" "lk.1: 3 passes; steady passes 2..3: from 2 to 4 pages"
check_contains "pagecount: range over the steady passes" "$out" "user pages per pass: 2-4"
run python3 "$M/pagecount.py" --warmup 2 0x110000 lk.1
check_contains "pagecount --warmup 2: the last pass alone" "$out" "steady passes 3..3: 2 pages (1 instruction, 1 data)"
check_contains "pagecount --warmup 2: one count" "$out" "user pages per pass: 2"
run python3 "$M/pagecount.py" --warmup 5 0x110000 lk.1
check_rc "pagecount: no steady pass is a failure" 1
check_contains "pagecount: says none was steady" "$out" "lk.1: 3 passes, none steady"
run python3 "$M/pagecount.py" zz lk.1
check_rc "pagecount: a marker that is no address" 1
check_contains "pagecount: names the bad marker" "$err" "marker 'zz' is not a hexadecimal address"
run python3 "$M/pagecount.py" 0x110000 missing.log
check_rc "pagecount: a missing trace" 1
check_contains "pagecount: names the missing trace" "$err" "missing.log"

# ---- userpages.sh: a short lackey run of the native build ----
if command -v valgrind >/dev/null 2>&1; then
  run "$M/userpages.sh" --bits 64 -n 8
  check_rc "userpages.sh --bits 64 -n 8" 0
  pages=$(printf '%s\n' "$out" | sed -n 's/^64-bit: user pages per pass: \([0-9]*\)$/\1/p')
  if [ -n "$pages" ] && [ "$pages" -ge 3 ] && [ "$pages" -le 12 ]; then
    pass "userpages: one count, 3 to 12 pages per pass"
  else
    fail "userpages: one count, 3 to 12 pages per pass" "expected: 64-bit: user pages per pass: N (3..12)" "actual: $out"
  fi
  # a compiler without 32-bit support: the 32-bit build is skipped, with a message
  # shellcheck disable=SC2016  # the wrapper's own $a and $@
  printf '#!/bin/sh\nfor a; do [ "$a" = -m32 ] && exit 1; done\nexec %s "$@"\n' "$CC" > no32cc
  chmod +x no32cc
  run env CC=./no32cc "$M/userpages.sh" --bits 32
  check_rc "userpages: no -m32 is no failure" 0
  check_contains "userpages: says why 32-bit is skipped" "$out" "32-bit: skipped: './no32cc -m32' cannot build ring.c (Debian: apt-get install gcc-multilib)"
else
  skip "valgrind not installed: no lackey run"
fi
run "$M/userpages.sh" -s big
check_rc "userpages: a size that is no number" 2

# ---- sched_analyze.py on the hand-made sequence (worked out in its header) ----
run python3 "$M/sched_analyze.py" "$DATA/handmade.txt"
check_rc "analyze: hand-made sequence" 0
while IFS= read -r line; do
  check_contains "analyze hand-made: $line" "$out" "$line"
done <<'EOF'
messages: 6 (100-byte reads of sched-messaging); 2 senders, 3 receivers
context switches per message: 1.6667 (1.5000 with a workload task; 1 inferred)
CR3 switches per message: 1.1667 between workload processes (1.3333 counting other programs)
transitions: S>R 42.9% R>S 42.9% R>R 14.3% S>S 0.0% other 0.0% (7)
receivers between two sender runs: 1: 66.7% 2: 33.3% 3+: 0.0% (3)
same sender resumes: 33.3%
sender switch-outs preempted: 50.0% (2)
messages per sender run: mean 2.0, message-weighted median 2 (3)
messages per receiver wake-up: mean 1.5, message-weighted median 2 (4); receiver wake-ups per message 0.3333
CR3 cache hit rate: RR4 0.286; LRU k=2 0.143 k=3 0.143 k=4 0.143 k=5 0.429 k=6 0.429 k=7 0.429 k=8 0.429 (7)
EOF

# ---- sched_analyze.py on a short recording ----
REC="$DATA/messaging-pipes.txt.gz"
run python3 "$M/sched_analyze.py" "$REC"
check_rc "analyze: recording" 0
# messages and switches in the phase (first to last message line), counted with awk
counts=$(gzip -dc "$REC" | awk '
  /^#/ { next }
  { line[++n] = $0 }
  /sched-messaging .*raw_syscalls:sys_exit: NR [01] = 100$/ { if (!first) first = n; last = n }
  END {
    for (i = first; i <= last; i++) {
      if (line[i] ~ /sched-messaging .*raw_syscalls:sys_exit: NR 0 = 100$/) msgs++
      if (line[i] ~ /sched:sched_switch:/) sw++
    }
    printf "%d %.4f", msgs, sw / msgs
  }')
msgs=${counts% *}; sw=${counts#* }
check_contains "analyze recording: messages as counted by awk" "$out" "messages: $msgs (100-byte reads"
check_contains "analyze recording: switches per message as counted by awk" "$out" "context switches per message: $sw ("
while IFS= read -r line; do
  check_contains "analyze recording: $line" "$out" "$line"
done <<'EOF'
messages: 400 (100-byte reads of sched-messaging); 20 senders, 20 receivers; 67.77 us per message
context switches per message: 0.7200 (0.6875 with a workload task; 0 inferred)
CR3 switches per message: 0.6325 between workload processes (0.7200 counting other programs)
transitions: S>R 9.5% R>S 9.5% R>R 75.5% S>S 3.2% other 2.4% (253)
receivers between two sender runs: 1: 31.8% 2: 13.6% 3+: 54.5% (22)
same sender resumes: 27.3%
sender switch-outs preempted: 100.0% (15)
messages per sender run: mean 12.1, message-weighted median 20 (33)
messages per receiver wake-up: mean 1.9, message-weighted median 4 (205); receiver wake-ups per message 0.4675
CR3 cache hit rate: RR4 0.308; LRU k=2 0.059 k=3 0.123 k=4 0.213 k=5 0.502 k=6 0.530 k=7 0.545 k=8 0.577 (253)
EOF

# pooled: the same recording twice gives the same shares and twice the counts
run python3 "$M/sched_analyze.py" "$REC" "$REC"
check_contains "analyze: two recordings pooled" "$out" "recordings: 2; messages: 800"
check_contains "analyze: pooled shares unchanged" "$out" "CR3 cache hit rate: RR4 0.308; LRU k=2 0.059"
check_contains "analyze: pooled counts doubled" "$out" "(506)"

# messaging.sh --analyze runs the analyzer over the recordings in a directory, no perf needed
mkdir rec && cp "$REC" rec/pipes-unpinned-r1.txt.gz
run "$M/messaging.sh" --analyze -d rec pipes-unpinned
check_rc "messaging.sh --analyze" 0
check_contains "messaging.sh: names the configuration" "$out" "== pipes-unpinned (pipes, on any of"
check_contains "messaging.sh: the analysis" "$out" "CR3 switches per message: 0.6325"
run "$M/messaging.sh" --analyze -d rec sockets-pinned
check_rc "messaging.sh: no recordings is a failure" 1
check_contains "messaging.sh: says so" "$out" "== sockets-pinned: no recordings in rec"
run "$M/messaging.sh" -l many
check_rc "messaging.sh: loops that are no number" 2
check_contains "messaging.sh: says which option" "$err" "-l takes a whole number, not 'many'"

# ---- bad input ----
printf 'p 7/7 [000] 5.000001: raw_syscalls:sys_exit: NR 0 = 100\nthis is not perf\n' > bad.txt
run python3 "$M/sched_analyze.py" bad.txt
check_rc "analyze: a line that is no event" 1
check_contains "analyze: names file and line" "$err" "sched_analyze: bad.txt:2: not a perf script event line: 'this is not perf'"
printf 'p 7/7 [000] 5.000001: sched:sched_switch: prev_pid=7 prev_state=R ==> next_pid=8\n' > noname.txt
run python3 "$M/sched_analyze.py" noname.txt
check_rc "analyze: a switch without next_comm" 1
check_contains "analyze: names the field" "$err" "noname.txt:1: sched_switch without next_comm= and next_pid="
gzip -dc "$REC" | grep -v sys_exit > nomsg.txt
run python3 "$M/sched_analyze.py" nomsg.txt
check_rc "analyze: a recording without messages" 1
check_contains "analyze: says what is missing" "$err" "nomsg.txt: no 100-byte read or write of a task named sched-messaging"

# ---- kbuild_objects.py: a hand-made kernel tree whose objects are worked out by hand ----

mkdir -p ktree/sub ktree/dir2
printf '%s\n' 'CONFIG_FOO=y' '# CONFIG_BAR is not set' 'CONFIG_NAME="x"' > ktree.config
# top: obj-y, an option that is y and one that is not, a composite object of two parts,
# a subdirectory, an ifdef block with a tab-indented line (not a recipe: no rule before
# it), a rule whose recipe must be skipped, and a lib-y object
printf '%s\n' 'obj-y := a.o b.o' 'obj-$(CONFIG_FOO) += foo.o' 'obj-$(CONFIG_BAR) += bar.o' \
  'obj-y += comp.o sub/' 'comp-y := c1.o c2.o' 'ifdef CONFIG_FOO' '	obj-y += tabbed.o' 'endif' \
  'ifeq ($(CONFIG_BAR),y)' 'obj-y += never.o' 'else' 'obj-y += other.o' 'endif' \
  '$(obj)/a.o: gen.h' '	obj-y += recipe.o' 'lib-y += l.o' > ktree/Makefile
# sub: Kbuild is read before Makefile; functions and a substitution reference
printf '%s\n' 'obj-y := $(patsubst %.c,%.o,s1.c s2.c) $(if $(CONFIG_FOO),s3.o)' \
  'imgs := 32' 'obj-y += $(imgs:%=img-%.o)' 'extra-y += head.o vmlinux.lds' > ktree/sub/Kbuild
printf '%s\n' 'obj-y := wrong.o' > ktree/sub/Makefile
printf '%s\n' 'obj-y := d.o a.o' > ktree/dir2/Makefile
run python3 "$M/kbuild_objects.py" --config ktree.config --list --per-dir ktree . dir2
check_rc "kbuild_objects.py on a hand-made tree" 0
check_eq "kbuild_objects.py: the objects, worked out by hand" \
  "a.o b.o foo.o c1.o c2.o tabbed.o other.o l.o sub/s1.o sub/s2.o sub/s3.o sub/img-32.o sub/head.o dir2/d.o dir2/a.o" \
  "$(printf '%s\n' "$out" | grep '\.o$' | tr '\n' ' ' | sed 's/ $//')"
check_contains "kbuild_objects.py: per directory" "$out" "    8 ."
check_contains "kbuild_objects.py: the total" "$out" "total 15"
run python3 "$M/kbuild_objects.py" --config missing.config ktree .
check_rc "kbuild_objects.py: a missing configuration" 2
check_contains "kbuild_objects.py: names the missing file" "$err" "missing.config"
