# Numbers and listings: shortest round-trip numbers in CSV and JSON, CSV rows that name
# their run, every listing (policies, cpus, runs) as table, CSV and JSON, "1 mark"
# grammar, aligned columns, and one precision per column in the reproduce tables.

cat > one.txt <<'TXT'
@workload fmt
@init cr0=0x80050033 cr3=0x10000000 cr4=0x6f0
run 1000
cr3w 0x10100000
mark op
TXT
"$VMXSIM" trace asm one.txt -o one.bin

# ---- shortest round-trip numbers
# 3 marks make per-operation values that %.17g prints with noise digits
sed 's/^mark op$/mark op\nrun 7\nmark op\nrun 11\nmark op/' one.txt > three.txt
"$VMXSIM" trace asm three.txt -o three.bin
run "$VMXSIM" --policy shadowcache --format json --no-db three.bin
check_rc "json run" 0
us=$(printf '%s\n' "$out" | sed -n 's/^[[:space:]]*"us":[[:space:]]*\([0-9.e+-]*\),*$/\1/p')
shortest=$(awk -v v="$us" 'BEGIN { for (p = 1; p <= 17; p++) { s = sprintf("%." p "g", v); if (s + 0 == v + 0) break }; print s }')
check_eq "JSON per_op.us is the shortest text that reads back the same" "$shortest" "$us"
"$VMXSIM" --policy shadowcache --db f.db three.bin > /dev/null
"$VMXSIM" --policy nocache --db f.db three.bin > /dev/null
run "$VMXSIM" runs --db f.db --format csv
us=$(printf '%s\n' "$out" | awk -F, 'NR == 2 { print $(NF - 1) }')
shortest=$(awk -v v="$us" 'BEGIN { for (p = 1; p <= 17; p++) { s = sprintf("%." p "g", v); if (s + 0 == v + 0) break }; print s }')
check_eq "runs CSV us_per_op is the shortest round-trip text" "$shortest" "$us"
# 16 digits or more only where 15 do not read back the same value (1/3 needs 17; 9.19 does not)
needs16=$(awk -v v="$us" 'BEGIN { print (sprintf("%.15g", v) + 0 != v + 0) }')
case $us in *[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]*)
  if [ "$needs16" = 1 ]; then pass "runs CSV: no 16-digit noise"; else
    fail "runs CSV: no 16-digit noise" "actual: $us (15 digits read back the same)"; fi ;;
  *) pass "runs CSV: no 16-digit noise" ;; esac

# ---- CSV rows name their run: two runs concatenate into one table
"$VMXSIM" --policy shadowcache --format csv --no-db one.bin > a.csv
"$VMXSIM" --policy nocache --format csv --no-db one.bin > b.csv
check_eq "report CSV header" "trace,workload,policy,cpu,section,name,parent,count,cycles,avg,min,p5,p50,p95,max" "$(head -1 a.csv)"
check_contains "every row names trace, workload, policy, cpu" "$(sed -n 2p a.csv)" "one.bin,fmt,shadowcache,core2-2007,"
{ cat a.csv; tail -n +2 b.csv; } > both.csv
check_eq "concatenated: rows of both policies" "shadowcache nocache" \
  "$(awk -F, 'NR > 1 && !seen[$3]++ { printf "%s%s", sep, $3; sep = " " }' both.csv)"
check_eq "concatenated: every row has the header's columns" "15" \
  "$(awk -F, '{ print NF }' both.csv | sort -u | tr '\n' ' ' | sed 's/ $//')"

# ---- "1 mark", not "1 marks"
run "$VMXSIM" --policy shadowcache --no-db one.bin
check_contains "per operation (1 mark)" "$out" "per operation (1 mark):"
check_contains "per operation (3 marks)" "$("$VMXSIM" --policy shadowcache --no-db three.bin)" "per operation (3 marks):"

# ---- listings in three formats
for cmd in policies cpus; do
  run "$VMXSIM" $cmd --format json
  check_rc "$cmd --format json" 0
  printf '%s\n' "$out" > $cmd.json
  if command -v python3 >/dev/null 2>&1; then
    python3 -c "import json,sys; json.load(open('$cmd.json'))" && pass "$cmd JSON parses" || fail "$cmd JSON parses" "$out"
  fi
  run "$VMXSIM" $cmd --format csv
  check_rc "$cmd --format csv" 0
  run "$VMXSIM" $cmd --format=table
  check_rc "$cmd --format=table" 0
  run "$VMXSIM" $cmd --format xml
  check_rc "$cmd --format xml is a usage error" 2
  check_contains "$cmd --format xml: the valid formats" "$err" "expected table, csv or json"
done
run "$VMXSIM" policies --format csv
check_eq "policies CSV header" "kind,name,type,default,values,min,max,description" "$(printf '%s\n' "$out" | head -1)"
check_contains "policies CSV: a choice knob lists its values" "$out" "knob,dr_switch,choice,eager,eager|lazy,"
check_contains "policies CSV: a preset" "$out" "preset,shadowcache,,,,"
run "$VMXSIM" policies --format json
check_contains "policies JSON: presets" "$out" '"presets":'
check_contains "policies JSON: knob values" "$out" '"values":'
run "$VMXSIM" cpus --format csv
check_eq "cpus CSV header" "name,clock_ghz,default,description" "$(printf '%s\n' "$out" | head -1)"
check_contains "cpus CSV: the default profile" "$out" "core2-2007,2.4,1,"
run "$VMXSIM" runs --db f.db --format json
check_contains "runs JSON" "$out" '"policy":	"nocache"'

# ---- aligned columns: every description of `cpus` and every knob default start in one column
run "$VMXSIM" cpus
check_eq "cpus: descriptions start in one column" "1" \
  "$(printf '%s\n' "$out" | awk 'NR > 1 { match($0, /^ +[^ ]+ +[^ ]+ +/); print RLENGTH }' | sort -u | wc -l | tr -d ' ')"
run "$VMXSIM" policies
check_eq "policies: knob descriptions start in one column" "1" \
  "$(printf '%s\n' "$out" | awk '/^Knobs/ { k = 1; next } k && !NF { exit } k { match($0, /^ +[^ ]+ +[^ ]+ +/); print RLENGTH }' | sort -u | wc -l | tr -d ' ')"

# ---- one precision per column in reproduce's tables
run "$VMXSIM" reproduce --quick --no-db --only xen-pv-syscalls,cr3-cache-2008
check_rc "reproduce --quick" 0
bad=$(printf '%s\n' "$out" | awk '
  /^== / { table = $2; inrows = 0; next }
  /^ *$/ { inrows = (inrows == 1) ? 2 : inrows; next }
  table && inrows == 0 && /[a-z]/ { inrows = 1; next }     # the column header line
  inrows == 1 {
    n = split($0, f, /  +/)
    for (i = n; i >= 2 && f[i] ~ /^-?[0-9.]+\*?$/; i--) {
      v = f[i]; sub(/\*$/, "", v)
      d = index(v, ".") ? length(v) - index(v, ".") : 0
      col = n - i
      if ((table, col) in dec && dec[table, col] != d) print table ": column " col ": " v " vs " dec[table, col] " decimals"
      dec[table, col] = d
    }
  }')
check_eq "reproduce: every column has one number of decimals" "" "$bad"
