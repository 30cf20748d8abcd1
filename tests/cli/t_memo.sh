# CLI tests for a recording replayed again (sim/cli/stream_memo.h): its first conversion is
# remembered under the cache directory, and the next replay of the same file reads it once,
# with the same report, the same stored trace hash and the same summary; a damaged entry is
# ignored and written again; VMXSIM_NO_CACHE=1 keeps nothing.  The converted trace is kept
# beside its entry and read by the next replay instead of the recording; a damaged copy fails
# that replay and is dropped; VMXSIM_CACHE_MB bounds the copies, the least recently used dropped.
# Sourced by tests/cli/run.sh in a scratch directory; $VMXSIM is the program, $ROOT the repo.

XS="$ROOT/tests/data/xentrace-sample/sample.xentrace"
export XDG_CACHE_HOME="$PWD/cache"
entries() { ls cache/vmxsim/recordings/*.head 2>/dev/null | wc -l | tr -d ' '; }
copies() { ls cache/vmxsim/recordings/*.trace 2>/dev/null | wc -l | tr -d ' '; }
P="--policy shadowcache --cpu skylake-xen-2018"

# Only a file unchanged for a few seconds is remembered (its ctime, which nobody can set back):
# the checked-out fixture, unless it was checked out just now.
if [ $(($(date +%s) - $(stat -c %Z "$XS"))) -le 4 ]; then
  skip "a recording replayed again: $XS was checked out less than 5 s ago"
else
  run "$VMXSIM" $P --no-db "$XS"
  check_rc "memo: the first replay of the recording" 0
  first=$out
  check_eq "memo: its first conversion is remembered (one entry)" "1" "$(entries)"
  entry=$(ls cache/vmxsim/recordings/*.head)
  check_eq "memo: and a copy of the conversion is kept" "1" "$(copies)"
  copy=$(ls cache/vmxsim/recordings/*.trace)
  run "$VMXSIM" $P --no-db "$XS"
  check_eq "memo: the replay from the kept copy prints the same report" "$first" "$out"

  # A damaged copy (its length kept: a copy of another length is no copy, and converted anew):
  # the replay fails, naming it, and the copy and its entry are dropped.
  printf 'XXXXXXXX' | dd of="$copy" bs=1 seek=150000 conv=notrunc 2>/dev/null
  run "$VMXSIM" $P --no-db "$XS"
  check_rc "memo: a damaged kept copy fails the replay" 3
  check_contains "memo: the message names the copy" "$err" "$copy"
  check_eq "memo: and it is dropped with its entry" "0 0" "$(entries) $(copies)"
  run "$VMXSIM" $P --no-db "$XS"
  check_eq "memo: the next replay converts again, with the same report" "$first" "$out"
  VMXSIM_CACHE_MB=0 "$VMXSIM" $P --no-db -q "$XS" > /dev/null
  check_eq "memo: VMXSIM_CACHE_MB=0 keeps no copy (the entry stays)" "1 1" "$(entries) $(copies)"
  touch -d '1 hour ago' "$(ls cache/vmxsim/recordings/*.trace)"
  VMXSIM_CACHE_MB=0 "$VMXSIM" $P --no-db -q "$XS" > /dev/null
  check_eq "memo: and reads none (the copy is not used: not touched)" "yes" \
    "$([ -n "$(find cache/vmxsim/recordings -name '*.trace' -mmin +30)" ] && echo yes || echo no)"
  run "$VMXSIM" $P --no-db "$XS"
  check_eq "memo: the replay from the entry prints the same report" "$first" "$out"

  "$VMXSIM" $P -q --db memo.db "$XS" > /dev/null
  VMXSIM_NO_CACHE=1 "$VMXSIM" $P -q --db twice.db "$XS" > /dev/null
  check_eq "memo: the stored trace (hash, records, vCPUs, metadata) is the one of two conversions" \
    "$(sqlite3 twice.db 'SELECT hash, events, vcpus, metadata FROM traces')" \
    "$(sqlite3 memo.db 'SELECT hash, events, vcpus, metadata FROM traces')"

  VMXSIM_NO_CACHE=1 "$VMXSIM" summary "$XS" > summary-twice.txt
  "$VMXSIM" summary "$XS" > summary-memo.txt
  check_eq "memo: summary of the recording from the entry is the same" "$(cat summary-twice.txt)" "$(cat summary-memo.txt)"

  size=$(stat -c %s "$entry")
  head -c 100 "$entry" > cut && mv cut "$entry"
  run "$VMXSIM" $P --no-db "$XS"
  check_eq "memo: a damaged entry is ignored (the same report)" "$first" "$out"
  check_eq "memo: and written again whole" "$size" "$(stat -c %s "$entry")"

  rm -rf cache
  VMXSIM_NO_CACHE=1 "$VMXSIM" $P --no-db -q "$XS" > /dev/null
  check_eq "memo: VMXSIM_NO_CACHE=1 keeps nothing" "0" "$(entries)"

  # The XDG rule: a relative XDG_CACHE_HOME is ignored for $HOME/.cache; with neither,
  # nothing is remembered, and nothing is written into the current directory.
  mkdir -p nohome && cd nohome
  env -u HOME -u XDG_CACHE_HOME "$VMXSIM" $P --no-db "$XS" > out1.txt 2>&1
  env -u HOME -u XDG_CACHE_HOME "$VMXSIM" $P --no-db "$XS" > out2.txt 2>&1
  check_eq "memo: without HOME or XDG_CACHE_HOME the replays print the same" "$(cat out1.txt)" "$(cat out2.txt)"
  check_eq "memo: and leave nothing in the current directory" "out1.txt out2.txt" "$(ls | tr '\n' ' ' | sed 's/ $//')"
  env XDG_CACHE_HOME=relative HOME="$PWD/home" "$VMXSIM" $P --no-db -q "$XS" > /dev/null
  check_eq "memo: a relative XDG_CACHE_HOME is ignored for HOME's cache" "no relative/, 1 entry in HOME" \
    "$([ -e relative ] && echo "relative/ made" || echo "no relative/"), $(ls home/.cache/vmxsim/recordings/*.head 2>/dev/null | wc -l | tr -d ' ') entry in HOME"
  cd ..
fi

# A recording changed since it was remembered is another file: converted twice, and right.
cp "$XS" fresh.xentrace
run "$VMXSIM" $P --no-db fresh.xentrace
check_rc "memo: a new recording replays" 0
check_eq "memo: one written just now is not remembered (it may still be being written)" "0" "$(entries)"

# The metadata records the input as named: another spelling of the same file is another entry,
# and its stored trace is the one two conversions give for that spelling.
if [ $(($(date +%s) - $(stat -c %Z "$XS"))) -gt 4 ]; then
  rm -rf cache
  ln -s "$(dirname "$XS")" fixture
  "$VMXSIM" $P -q --no-db "$XS" > /dev/null
  "$VMXSIM" $P -q --db spelled.db fixture/sample.xentrace > /dev/null
  VMXSIM_NO_CACHE=1 "$VMXSIM" $P -q --db spelled-twice.db fixture/sample.xentrace > /dev/null
  check_eq "memo: two spellings of one recording, two entries" "2" "$(entries)"
  check_eq "memo: each spelling's stored trace is its own" \
    "$(sqlite3 spelled-twice.db 'SELECT hash, metadata FROM traces')" "$(sqlite3 spelled.db 'SELECT hash, metadata FROM traces')"

  # The copies' bound: each copy of the sample's conversion is 228,008 bytes, so 1 MiB holds
  # four; a fifth spelling's copy drops the least recently replayed: "$XS"'s, made second,
  # as the first, fixture/'s, was replayed again after the fourth.
  rm -rf cache
  ln -s fixture f2 && ln -s fixture f3 && ln -s fixture f4
  for p in fixture/sample.xentrace "$XS" f2/sample.xentrace f3/sample.xentrace; do
    VMXSIM_CACHE_MB=1 "$VMXSIM" $P -q --no-db "$p" > /dev/null
  done
  first_copy=$(ls -tr cache/vmxsim/recordings/*.trace | head -1)
  second_copy=$(ls -tr cache/vmxsim/recordings/*.trace | sed -n 2p)
  VMXSIM_CACHE_MB=1 "$VMXSIM" $P -q --no-db fixture/sample.xentrace > /dev/null   # its copy, used again
  VMXSIM_CACHE_MB=1 "$VMXSIM" $P -q --no-db f4/sample.xentrace > /dev/null
  check_eq "memo: VMXSIM_CACHE_MB=1: four copies kept of five, 5 entries" "4 5" "$(copies) $(entries)"
  check_eq "memo: the copy used again is kept, the least recently used dropped" "yes no" \
    "$([ -e "$first_copy" ] && echo yes || echo no) $([ -e "$second_copy" ] && echo yes || echo no)"
  run env VMXSIM_CACHE_MB=1 "$VMXSIM" $P --no-db "$XS"
  check_eq "memo: the spelling whose copy was dropped replays from its entry, and keeps a copy again" \
    "0 4 yes" "$rc $(copies) $([ -e "$second_copy" ] && echo yes || echo no)"
fi
