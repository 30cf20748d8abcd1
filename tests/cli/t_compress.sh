# Compressed and piped input and output: gzip, xz and zstd traces and recordings, recognised
# by their first bytes; '-' for standard input (run, trace info/dump, import) and standard
# output (gen, import, trace asm); the header of a stream written with its count unknown.

"$VMXSIM" gen lat_ctx --procs 2 --iters 20 -o t.bin
# the report without its first CSV column (the trace's name)
report() { "$VMXSIM" --policy shadowcache --no-db --format csv "$1" | cut -d, -f2-; }
plain=$(report t.bin)
tools=""
for z in gzip xz zstd; do
  case $z in xz) pkg=xz-utils ;; *) pkg=$z ;; esac
  if ! command -v $z >/dev/null 2>&1; then skip "the $z tool not found (Debian package $pkg)"; continue; fi
  tools="$tools $z"
  case $z in gzip) ext=gz ;; xz) ext=xz ;; zstd) ext=zst ;; esac
  $z -c t.bin > t.bin.$ext
  check_eq "$z: replayed like the plain trace" "$plain" "$(report t.bin.$ext)"
  check_eq "$z: trace dump" "$("$VMXSIM" trace dump t.bin)" "$("$VMXSIM" trace dump t.bin.$ext)"
  run "$VMXSIM" trace info t.bin.$ext
  check_contains "$z: trace info names the compression" "$out" "version 1, 24-byte records, $z-compressed"
  check_eq "$z: from standard input" "$plain" "$($z -c t.bin | "$VMXSIM" --policy shadowcache --no-db --format csv - | cut -d, -f2-)"
  # recognised by its bytes, not its name
  cp t.bin.$ext disguised-$z.bin
  check_eq "$z: recognised by its first bytes, whatever the name" "$plain" "$(report disguised-$z.bin)"
  # truncated compressed data: a clear message naming the compressed offset
  size=$(wc -c < t.bin.$ext)
  head -c $((size / 2)) t.bin.$ext > cut.$ext
  run "$VMXSIM" --policy shadowcache --no-db cut.$ext
  check_rc "$z: truncated input is bad input" 3
  check_contains "$z: truncated input named with the compressed byte" "$err" "cut.$ext: $z data ends early, at compressed byte"
done
cp t.bin plain.gz
check_eq "a plain trace named .gz is read as plain" "$plain" "$(report plain.gz)"
case " $tools " in *" gzip "*)
  printf '\037\213\010\000\000\000\000\000\000\003garbage' > bad.gz
  run "$VMXSIM" trace info bad.gz
  check_rc "corrupt gzip data is bad input" 3
  check_contains "corrupt gzip data: file, format and compressed byte" "$err" "bad.gz: gzip data: corrupt near compressed byte"
  # the content hash: a trace and its compressed copy are one trace in the database
  "$VMXSIM" --policy nocache --db z.db t.bin > /dev/null
  "$VMXSIM" --policy nocache --db z.db t.bin.gz > /dev/null
  gzip -c t.bin | "$VMXSIM" --policy nocache --db z.db - > /dev/null
  check_eq "plain, gzip and standard input share one traces row" "1" "$(sqlite3 z.db 'SELECT count(*) FROM traces')"
  check_eq "... and three runs" "3" "$(sqlite3 z.db 'SELECT count(DISTINCT trace_id) || count(*) FROM runs' | cut -c2)"
  run "$VMXSIM" runs --db z.db --trace t.bin.gz
  check_eq "runs --trace FILE.gz matches by content" "4" "$(printf '%s\n' "$out" | wc -l | tr -d ' ')"
  # recorded samples: import reads them compressed, from a file or standard input
  run "$VMXSIM" import perf-script "$ROOT/traces/recorded/perf-pipe.txt.gz" -o pipe.bin
  check_rc "import of a gzip recording" 0
  gzip -dc "$ROOT/traces/recorded/perf-pipe.txt.gz" > pipe.txt
  "$VMXSIM" import perf-script pipe.txt -o pipe-plain.bin
  check_eq "import: gzip and plain give the same records" "$("$VMXSIM" trace dump pipe-plain.bin | grep -v '^@')" \
    "$("$VMXSIM" trace dump pipe.bin | grep -v '^@')"
  run sh -c "gzip -dc \"$ROOT/traces/recorded/perf-pipe.txt.gz\" | \"$VMXSIM\" import perf-script - -o - | \"$VMXSIM\" trace dump -"
  check_rc "import - -o - | trace dump -" 0
  check_eq "import - -o -: the same records" "$("$VMXSIM" trace dump pipe-plain.bin | grep -v '^@')" \
    "$(printf '%s\n' "$out" | grep -v '^@')"
  "$VMXSIM" import perf-script pipe.txt -o - > pipe-stdout.bin
  check_eq "import -o -: a finished header (flags 0: the count is in it)" "00" "$(od -An -tx1 -j15 -N1 pipe-stdout.bin | tr -d ' ')"
  check_eq "import -o -: the same records as -o FILE" "$("$VMXSIM" trace dump pipe-plain.bin | grep -v '^@')" \
    "$("$VMXSIM" trace dump pipe-stdout.bin | grep -v '^@')"
  ;;
esac

# gen -o -: a pipe gets a count-unknown header (version 2), a file the finished one
"$VMXSIM" gen lat_ctx --procs 2 --iters 20 -o - > redirected.bin
if cmp -s t.bin redirected.bin; then pass "gen -o - > FILE is byte-identical to gen -o FILE"
else fail "gen -o - > FILE is byte-identical to gen -o FILE" "$(od -An -tx1 -N32 redirected.bin)"; fi
"$VMXSIM" gen lat_ctx --procs 2 --iters 20 -o - | cat > piped.bin
check_eq "gen -o - | cat: format version 2, flag 'count unknown', count 0" "02 00 18 00 01 00 40 01 00 00 00 00 00 00 00 00" \
  "$(od -An -tx1 -j8 -N16 piped.bin | tr -s ' \n' ' ' | sed 's/^ //; s/ $//')"
check_eq "a count-unknown trace on disk replays like the original" "$plain" "$(report piped.bin)"
run "$VMXSIM" trace info piped.bin
check_contains "trace info says the count was not in the header" "$out" "(record count not in the header: written as a stream)"
check_eq "gen -o - | vmxsim -" "$plain" "$("$VMXSIM" gen lat_ctx --procs 2 --iters 20 -o - | "$VMXSIM" --policy shadowcache --no-db --format csv - | cut -d, -f2-)"
# a count-unknown stream cut short inside a record, and one cut at a record boundary
head -c $(( $(wc -c < piped.bin) - 10 )) piped.bin > cut-record.bin
run "$VMXSIM" --no-db - < cut-record.bin
check_rc "a stream cut inside a record" 3
check_contains "... names the record" "$err" "truncated record (the input ends 14 bytes into record"
n=$("$VMXSIM" trace info t.bin --format json | sed -n 's/^[[:space:]]*"records":[[:space:]]*\([0-9]*\),$/\1/p')
run sh -c "head -c $(( $(wc -c < t.bin) - 24 )) t.bin | \"$VMXSIM\" --no-db -"
check_rc "a stream shorter than its header's count" 3
check_contains "... says so" "$err" "<stdin>: byte 16: header says $n records but the input holds $((n - 1))"
run sh -c "{ cat t.bin; printf 'x'; } | \"$VMXSIM\" --no-db -"
check_rc "data after the announced records" 3
check_contains "... says so" "$err" "data after the $n records the header announces"

# the REPL: a compressed file restarts by reading it again; standard input cannot
case " $tools " in *" xz "*)
  run sh -c "printf 'continue\nreset\nstep 2\n' | \"$VMXSIM\" repl t.bin.xz"
  check_rc "repl of an xz trace" 0
  check_contains "repl of an xz trace: reset replays it from event 0" "$out" "restarted at event 0 under policy shadowcache
event 0 vcpu 0:"
  xz -c piped.bin > piped.bin.xz
  run sh -c "printf 'continue\n' | \"$VMXSIM\" repl piped.bin.xz"
  check_contains "repl of a count-unknown xz stream knows the count" "$out" "all $n events replayed"
  ;;
esac
run sh -c "\"$VMXSIM\" repl - < t.bin"
check_rc "repl - is refused" 2
check_contains "repl -: why" "$err" "standard input cannot be replayed again from event 0"
