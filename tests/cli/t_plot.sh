# CLI tests for the charts: scripts/plot/plot.sh and reproduce --plots write PNG, SVG and PDF
# with units on the axes, human titles, no legend on a single series, log scales where the
# values span decades and the calibration points marked.
# Sourced by tests/cli/run.sh in a scratch directory; $VMXSIM is the program, $ROOT the repo.

PLOT="$ROOT/scripts/plot/plot.sh"

# is_png FILE: the 8-byte PNG signature \211 P N G \r \n \032 \n
is_png() { [ "$(od -An -tx1 -N8 "$1" 2>/dev/null | tr -d ' \n')" = "89504e470d0a1a0a" ]; }

# ring N: a text trace of N processes switching address spaces, with N in its metadata
ring() {
  printf '@workload ring\n@paging 64\n@meta {"generator": "t_plot", "procs": %d}\n' "$1"
  printf '@init cr0=0x80050033 cr3=0x1000 cr4=0x6f0\n'
  i=0
  while [ $i -lt 10 ]; do
    p=1
    while [ $p -le "$1" ]; do
      printf 'run 2000\ncr3w 0x%x\ntouch 0x400000 1 w\nmark switch\n' $((p * 4096))
      p=$((p + 1))
    done
    i=$((i + 1))
  done
}

for n in 2 4 8; do
  ring $n > ring$n.txt
  "$VMXSIM" trace asm ring$n.txt -o ring$n.bin
  for pol in nocache shadowcache cr3cache; do
    "$VMXSIM" --policy $pol --db plot.db ring$n.bin >/dev/null || fail "run $pol on ring$n.bin"
  done
done
check_eq "the small database has 9 runs" "9" "$(sqlite3 plot.db 'SELECT count(*) FROM runs')"

run "$PLOT" exits --db plot.db --trace ring4.bin -o exits.png
check_rc "exits plot succeeds" 0
check_eq "exits plot names its files: PNG, SVG, PDF, caption" "exits.png
exits.svg
exits.pdf
exits.caption.txt" "$out"
check_eq "exits plot: nothing on stderr" "" "$err"
is_png exits.png && pass "exits plot is a PNG" || fail "exits plot is a PNG" "$(od -c -N8 exits.png 2>&1)"

run "$PLOT" cycles --db plot.db -o cycles.png
check_rc "cycles plot succeeds (default: the latest trace)" 0
check_eq "cycles plot: nothing on stderr" "" "$err"
is_png cycles.png && pass "cycles plot is a PNG" || fail "cycles plot is a PNG" "$(od -c -N8 cycles.png 2>&1)"

run "$PLOT" param --db plot.db --param procs
check_rc "param plot succeeds" 0
check_eq "param plot default file names" "param-procs.png
param-procs.svg
param-procs.pdf
param-procs.caption.txt" "$out"
check_eq "param plot: nothing on stderr" "" "$err"
is_png param-procs.png && pass "param plot is a PNG" || fail "param plot is a PNG" "$(od -c -N8 param-procs.png 2>&1)"

# Data and messages behind the plots.
run "$PLOT" param --db plot.db --param nosuchkey -o none.png
check_rc "param with a key no trace has fails" 1
check_contains "param with a key no trace has says so" "$err" "'nosuchkey'"
[ ! -e none.png ] && pass "no PNG on failure" || fail "no PNG on failure"
run "$PLOT" exits --db plot.db --trace nosuch.bin
check_rc "an unknown trace fails" 1
check_contains "an unknown trace is named" "$err" "no stored run of trace nosuch.bin"
run "$PLOT" exits --db missing.db
check_rc "a missing database fails" 1
check_contains "a missing database is named" "$err" "missing.db does not exist"
run "$PLOT" param --db plot.db
check_rc "param without --param is a usage error" 2
run "$PLOT" exits --bogus
check_rc "an unknown option is a usage error" 2
run "$PLOT" --help
check_rc "--help succeeds" 0
check_contains "--help teaches by example" "$out" "scripts/plot/plot.sh param --param procs"

# every chart in three formats
is_svg() { head -c 400 "$1" | grep -q '<svg'; }
is_pdf() { [ "$(head -c 5 "$1")" = "%PDF-" ]; }
for f in exits cycles param-procs; do
  is_svg $f.svg && pass "$f.svg is SVG" || fail "$f.svg is SVG" "$(head -c 100 $f.svg)"
  is_pdf $f.pdf && pass "$f.pdf is PDF" || fail "$f.pdf is PDF" "$(head -c 20 $f.pdf)"
done
run "$PLOT" cycles --db plot.db -o named.png
check_eq "-o NAME.png: the ending is dropped, three files and the caption written" "named.png named.svg named.pdf named.caption.txt" "$(echo $out)"
# what the SVG says: units on the axes, human titles (text nodes of the SVG)
svg_text() { sed -n 's/.*<text[^>]*>\([^<]*\)<\/text>.*/\1/p; s/.*<tspan[^>]*>\([^<]*\)<\/tspan>.*/\1/p' "$1" | tr '\n' '|'; }
check_contains "exits: the y axis has its unit" "$(svg_text exits.svg)" "VM exits per operation"
# no title inside a figure: the caption file beside it has the title's text
check_not_contains "exits: no title inside the figure" "$(svg_text exits.svg)" "by exit reason"
check_eq "exits: the caption has the title, the trace and the CPU profile" \
  "VM exits per operation, by exit reason. Trace ring4.bin (ring), CPU profile $(sqlite3 plot.db "SELECT cpu FROM runs LIMIT 1")." \
  "$(cat exits.caption.txt)"
check_not_contains "param: no title inside the figure" "$(svg_text param-procs.svg)" "Time per operation"
check_contains "param: the caption has the title" "$(cat param-procs.caption.txt)" "Time per operation against procs. Workload ring"
check_contains "cycles: µs on the axis" "$(svg_text cycles.svg)" "µs per operation"
check_contains "param: µs on the axis" "$(svg_text param-procs.svg)" "µs per operation"
check_contains "param: the x axis says what the parameter is" "$(svg_text param-procs.svg)" "processes (procs)"

# reproduce --plots: bars.gp from the data directory; three formats; the calibrated point marked
run "$VMXSIM" reproduce --quick --no-db --only shadow-cache-2007,debugreg-2009,cr3-cache-2008 --plots figs
check_rc "reproduce --plots" 0
for f in shadow-cache-2007 debugreg-2009 debugreg-2009-debugger; do
  is_png figs/$f.png && pass "figs/$f.png is PNG" || fail "figs/$f.png is PNG"
  is_svg figs/$f.svg && pass "figs/$f.svg is SVG" || fail "figs/$f.svg is SVG"
  is_pdf figs/$f.pdf && pass "figs/$f.pdf is PDF" || fail "figs/$f.pdf is PDF"
done
check_contains "reproduce --plots says what it wrote" "$err" "vmxsim: wrote figs/shadow-cache-2007.png, .svg and .pdf"
t=$(svg_text figs/shadow-cache-2007.svg)
check_not_contains "reproduce: no title inside the figure" "$t" "lmbench lat_ctx"
check_contains "reproduce: the title in the caption file" "$(cat figs/shadow-cache-2007.caption.txt)" \
  "lmbench lat_ctx, 32-bit uniprocessor Core 2 guest, KVM January 2007 (µs per context switch)."
check_contains "reproduce: the caption says what * marks" "$(cat figs/shadow-cache-2007.caption.txt)" "* marks a calibration point"
check_not_contains "reproduce: the slug is not the title" "$t" "shadow-cache-2007:"
check_contains "reproduce: the unit on the axis, in µs" "$t" "µs per context switch"
check_contains "reproduce: calibration points in the legend" "$t" "* published"
check_eq "reproduce: values spanning decades get a log axis" "logx = 1" "$(grep '^logx' figs/shadow-cache-2007.gp)"
stars=$(printf '%s\n' "$out" | awk '/^== shadow-cache-2007/ { on = 1; next } /^== / { on = 0 } on' | grep -o '[0-9]\*' | wc -l | tr -d ' ')
check_eq "reproduce: every calibrated value of the table is in the marks file" "$stars" "$(tail -n +2 figs/shadow-cache-2007.marks | wc -l | tr -d ' ')"
# the first line of the marks file was read as column titles: one calibration point was not drawn
check_eq "reproduce: every calibrated value of the table has its * in the chart" "$stars" \
  "$(svg_text figs/shadow-cache-2007.svg | tr '|' '\n' | grep -cx '\*')"
# log only beyond a factor of 100: cr3-cache-2008's values span more than 10x but less than 100x
span=$(tail -n +2 figs/cr3-cache-2008.dat | cut -f2- | tr '\t' '\n' | awk '$1 > 0 { if (!n++ || $1 < lo) lo = $1; if ($1 > hi) hi = $1 } END { printf "%d", hi / lo }')
check_eq "reproduce: log axis exactly when the values span more than 100x (span $span)" \
  "logx = $([ "$span" -gt 100 ] && echo 1 || echo 0)" "$(grep '^logx' figs/cr3-cache-2008.gp)"
check_not_contains "reproduce: no title in the chart settings" "$(cat figs/shadow-cache-2007.gp)" "ttl"
check_not_contains "reproduce: no legend on a single-series chart" "$(svg_text figs/debugreg-2009.svg)" "cycles/exit"
check_contains "reproduce: a legend on a multi-series chart" "$t" "shadowcache"
# a chart of percentages (ipiv-2022's reductions) says so on its axis, not the table's unit alone
run "$VMXSIM" reproduce --quick --no-db --only ipiv-2022 --plots figs4
check_contains "reproduce: percentages on the axis as a share of the unit" "$(svg_text figs4/ipiv-2022.svg)" \
  "% of the cycles per round trip"
# the data directory: a copy of the program away from the tree finds bars.gp through
# $VMXSIM_DATADIR, and without it says where it looked
mkdir -p away/bin && cp "$(readlink -f "$VMXSIM")" away/bin/vmxsim
run away/bin/vmxsim reproduce --quick --no-db --only debugreg-2009 --plots figs2
check_contains "a missing chart script: where vmxsim looked" "$err" "the chart script plot/bars.gp is not installed (looked in"
check_contains "... and which variable to set" "$err" "set VMXSIM_DATADIR"
run env VMXSIM_DATADIR="$ROOT/scripts" away/bin/vmxsim reproduce --quick --no-db --only debugreg-2009 --plots figs3
check_rc "VMXSIM_DATADIR finds the chart scripts" 0
is_png figs3/debugreg-2009.png && pass "... and the chart is drawn" || fail "... and the chart is drawn" "$err"

# A REPL 'save' stores a partial run (the events replayed so far).  compare --trace and the bar
# charts take the latest run of each policy: a partial one is left out, with a note, unless
# --partial asks for it
cp plot.db part.db
printf 'step 5\nsave\nquit\n' | "$VMXSIM" repl --policy cr3cache --db part.db ring4.bin > /dev/null 2>&1
check_eq "the REPL stored a partial run" "1" "$(sqlite3 part.db 'SELECT count(*) FROM runs WHERE partial')"
run "$VMXSIM" compare --db part.db --trace ring4.bin --format csv
check_rc "compare --trace with a partial run stored" 0
check_contains "compare: the partial run is left out, and it says so" "$err" \
  "vmxsim: compare: left out 1 partial run of ring4.bin (saved in the REPL before the end of the trace); --partial takes them"
check_eq "compare: cr3cache's whole run (6) is compared, not the partial one (10)" "6" \
  "$(printf '%s\n' "$out" | awk -F, '$5 == "cr3cache" { print $4 }' | sort -u)"
run "$VMXSIM" compare --db part.db --trace ring4.bin --partial --format csv
check_eq "compare --partial: no note" "" "$err"
check_eq "compare --partial: the partial run (10) is taken" "10" \
  "$(printf '%s\n' "$out" | awk -F, '$5 == "cr3cache" { print $4 }' | sort -u)"
run "$PLOT" exits --db part.db --trace ring4.bin -o part.png
check_rc "exits plot with a partial run stored" 0
check_eq "exits plot: the partial run is left out, and it says so" \
  "plot.sh: left out 1 partial run(s) of that trace (saved in the REPL before its end); --partial takes them" "$err"
run "$PLOT" exits --db part.db --trace ring4.bin --partial -o part2.png
check_eq "exits plot --partial: no note" "" "$err"

# -o into a directory that does not exist: said plainly (it failed in mktemp)
run "$PLOT" exits --db plot.db --trace ring4.bin -o no-such-dir/x
check_rc "exits -o into a missing directory fails" 1
check_eq "... and says which directory" "plot.sh: -o no-such-dir/x: directory no-such-dir does not exist; create it first" "$err"

# ---- the rules every chart follows ----
# settings: what plot.sh and sweep.sh hand gnuplot (PLOT_SHOW_SETTINGS=1 prints them)
settings() { printf '%s\n' "$err" | sed -n "s/.*[ ;]$1=\\([^;]*\\);.*/\\1/p" | head -1; }

# a trace whose VM exits per operation span more than 100x between nocache (every page
# faults again after each CR3 write) and cr3cache (the shadow tables stay)
{ printf '@workload spiky\n@paging 64\n@meta {"generator": "t_plot", "procs": 2}\n@init cr0=0x80050033 cr3=0x1000 cr4=0x6f0\n'
  i=0; while [ $i -lt 400 ]; do printf 'run 2000\ncr3w 0x%x\ntouch 0x400000 200 w\nmark switch\n' $(((i % 2 + 1) * 4096)); i=$((i + 1)); done
} > spiky.txt
"$VMXSIM" trace asm spiky.txt -o spiky.bin
for pol in nocache cr3cache; do "$VMXSIM" --policy $pol --db spiky.db spiky.bin > /dev/null || fail "run $pol on spiky.bin"; done
# the span of the stored values, computed here from the database (not by the script)
span_of() { sqlite3 "$1" "SELECT CAST(max($2) / min($2) AS INTEGER) FROM runs WHERE $2 > 0"; }
log_of() { [ "$1" -gt 100 ] && echo 1 || echo 0; }
for db in plot.db spiky.db; do
  s=$(span_of $db "total_exits * 1.0 / marks")
  PLOT_SHOW_SETTINGS=1 run "$PLOT" exits --db $db --trace ring4.bin -o rule-exits
  [ $db = spiky.db ] && PLOT_SHOW_SETTINGS=1 run "$PLOT" exits --db $db -o rule-exits
  check_eq "exits ($db, totals span ${s}x): log axis exactly beyond 100x" "$(log_of "$s")" "$(settings logy)"
  s=$(span_of $db "(guest_cycles + vmm_cycles) * 1.0 / marks")
  PLOT_SHOW_SETTINGS=1 run "$PLOT" cycles --db $db -o rule-cycles
  [ $db = plot.db ] && s=$(sqlite3 plot.db "SELECT CAST(max(v) / min(v) AS INTEGER) FROM (SELECT (guest_cycles + vmm_cycles) * 1.0 / marks AS v FROM runs WHERE trace_name = 'ring8.bin')")
  check_eq "cycles ($db, totals span ${s}x): log axis exactly beyond 100x" "$(log_of "$s")" "$(settings logy)"
done
check_contains "a log axis: the caption says dots replace the bars" "$(cat rule-cycles.caption.txt)" "a dot per value instead of bars"
check_eq "no gnuplot title in any settings" "" "$(printf '%s\n' "$err" | grep -E 'ttl|title' || true)"

# param: the legend in the order the runs were stored; long policy names abbreviated with a key
for pol in "cr3cache,cr3_target_count=1" prevroots; do
  for n in 2 4; do "$VMXSIM" --policy "$pol" --db long.db ring$n.bin > /dev/null || fail "run $pol"; done
done
for n in 2 4; do "$VMXSIM" --policy nocache --db long.db ring$n.bin > /dev/null; done
PLOT_SHOW_SETTINGS=1 run "$PLOT" param --db long.db --param procs -o rule-param
check_rc "param with a long policy name" 0
check_eq "param: the legend in the stored order, the long name abbreviated" \
  "cr3cache (a)|prevroots|nocache|" "$(settings titles | tr -d "'\"" | tr '\t' '|')"
check_contains "param: the caption says what the abbreviation stands for" "$(cat rule-param.caption.txt)" \
  "Policies: (a) cr3cache,cr3_target_count=1."
s=$(span_of long.db "(guest_cycles + vmm_cycles) * 1.0 / marks")
check_eq "param (values span ${s}x): log y axis exactly beyond 100x" "$(log_of "$s")" "$(settings logy)"
check_eq "param (x spans 2x): linear x axis" "0" "$(settings logx)"
PLOT_SHOW_SETTINGS=1 run "$PLOT" exits --db long.db --trace ring4.bin -o rule-long
check_eq "exits: the bars in the stored order, the long name abbreviated" \
  "cr3cache (a)|prevroots|nocache" \
  "$(svg_text rule-long.svg | tr '|' '\n' | grep -xE 'cr3cache.*|prevroots|nocache' | paste -sd'|' -)"

# sweep.sh: the legend in the plan's order, although runs stored before the sweep (nocache,
# then the knob list's second value) come first in the database, and the sweep's two workers
# store its runs in any order; log or linear by the span
"$VMXSIM" gen lat_ctx --procs 2 --iters 50 -o pre.bin
"$VMXSIM" --policy nocache --cpu core2-2008 --db sweep.db pre.bin > /dev/null
"$VMXSIM" --policy cr3cache --set cr3_target_count=4 --cpu core2-2008 --db sweep.db pre.bin > /dev/null
cat > order.json <<'PLAN'
{"name": "order", "traces": [{"generator": "lat_ctx", "params": {"procs": [2, 4], "iters": 50}}],
 "policies": ["shadowcache", {"policy": "cr3cache", "knobs": {"cr3_target_count": [1, 4]}}, "nocache"],
 "cpus": ["core2-2008"], "cache": "cache"}
PLAN
"$VMXSIM" sweep order.json --db sweep.db --quiet > /dev/null 2>&1 || fail "the ordering sweep"
check_eq "sweep: nocache was stored first" "nocache" "$(sqlite3 sweep.db 'SELECT policy FROM runs ORDER BY id LIMIT 1')"
PLOT_SHOW_SETTINGS=1 run "$ROOT/scripts/plot/sweep.sh" --db sweep.db --param procs -o rule-sweep
check_rc "sweep.sh" 0
check_eq "sweep: the legend in the plan's order, long names abbreviated" \
  "shadowcache|cr3cache (a)|cr3cache (b)|nocache|" "$(settings titles | tr -d "'\"" | tr '\t' '|')"
check_contains "sweep: the caption keys the abbreviations" "$(cat rule-sweep.caption.txt)" \
  "Policies: (a) cr3cache,cr3_target_count=1; (b) cr3cache,cr3_target_count=4."
check_contains "sweep: the caption has the title" "$(cat rule-sweep.caption.txt)" "Microseconds per operation against procs. Workload lat_ctx, CPU profile core2-2008."
check_not_contains "sweep: no title inside the figure" "$(svg_text rule-sweep.svg)" "against procs"
s=$(span_of sweep.db "(guest_cycles + vmm_cycles) * 1.0 / marks")
check_eq "sweep (values span ${s}x): log y axis exactly beyond 100x" "$(log_of "$s")" "$(settings logy)"
