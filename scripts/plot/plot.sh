#!/bin/sh
# Plots vmxsim results from the SQLite database as PNG, SVG and PDF files: it
# queries the database with the sqlite3 tool into tab-separated files and hands
# them to the gnuplot scripts beside it.  See scripts/plot/README.md.
set -eu

usage() {
  cat <<'USAGE'
usage: scripts/plot/plot.sh exits  [--db FILE] [--trace T] [--cpu C] [--partial] [-o OUT]
       scripts/plot/plot.sh cycles [--db FILE] [--trace T] [--cpu C] [--partial] [-o OUT]
       scripts/plot/plot.sh param  --param KEY [--db FILE] [--workload W] [--cpu C] [-o OUT]

  exits    VM exits by reason, one stacked bar per policy (per operation when the
           trace has marks), from the latest run of trace T under each policy
  cycles   cycles split into guest and hypervisor, one stacked bar per policy
           (microseconds per operation when the trace has marks)
  param    microseconds per operation against the trace metadata parameter KEY
           (e.g. procs for lat_ctx traces), one line per policy

  --db FILE      results database (default vmxsim.db)
  --trace T      trace name as given to vmxsim, or its last path component
                 (default: the trace of the latest run)
  --cpu C        CPU profile (default: that of the latest matching run)
  --partial      also runs the REPL's 'save' stored before the end of their trace (left
                 out by default, with a note: they cover part of it)
  --workload W   param: traces of workload W (default: that of the latest run with KEY)
  -o OUT         output: OUT.png, OUT.svg and OUT.pdf (a .png, .svg or .pdf ending is
                 dropped; default exits, cycles, param-KEY) and OUT.caption.txt; each
                 is printed

The figures have no title: OUT.caption.txt says what each shows (the title it would have
had, the trace or workload, the CPU profile, and what an abbreviated policy name such as
"cr3cache (a)" stands for).  Policies are in the order their runs were stored.  A log axis
is used when the values span more than a factor of 100, a linear one otherwise; bars only
on a linear axis from zero (exits and cycles draw dots on a log axis).

example:
  for p in 2 4 8 16; do vmxsim gen lat_ctx --procs $p --iters 200 -o lat_ctx-$p.bin
    for pol in nocache shadowcache cr3cache; do vmxsim --policy $pol lat_ctx-$p.bin >/dev/null; done
  done
  scripts/plot/plot.sh exits --trace lat_ctx-4.bin
  scripts/plot/plot.sh param --param procs
USAGE
}

die() { echo "plot.sh: $*" >&2; exit "${rc:-1}"; }
usage_error() { rc=2 die "$* (see --help)"; }

here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 1 ] || { usage >&2; exit 2; }
kind=$1; shift
case $kind in
  exits|cycles|param) ;;
  -h|--help) usage; exit 0 ;;
  *) usage_error "unknown plot '$kind': exits, cycles or param" ;;
esac

db=vmxsim.db trace= cpu= param= workload= out= whole="AND partial = 0"
while [ $# -gt 0 ]; do
  case $1 in
    --db) db=${2?}; shift ;;
    --trace) trace=${2?}; shift ;;
    --cpu) cpu=${2?}; shift ;;
    --param) param=${2?}; shift ;;
    --workload) workload=${2?}; shift ;;
    -o|--output) out=${2?}; shift ;;
    --partial) whole= ;;
    -h|--help) usage; exit 0 ;;
    *) usage_error "unknown option '$1'" ;;
  esac
  shift
done

command -v sqlite3 >/dev/null || die "needs the sqlite3 tool (Debian package sqlite3; scripts/setup.sh installs it)"
command -v gnuplot >/dev/null || die "needs gnuplot (Debian package gnuplot-nox; scripts/setup.sh installs it)"
[ -f "$db" ] || die "results database $db does not exist (vmxsim stores runs there; --db chooses another)"

# SQL string literal of $1.
sq() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/''/g")"; }
# gnuplot string literal of $1: double-quoted, \ and " escaped, newlines as \n.
gq() { printf '"%s"' "$(printf '%s\n' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g' | awk '{ printf "%s%s", (NR > 1 ? "\\n" : ""), $0 }')"; }
. "$here/lib.sh"     # query (read-only), $tmp, begin_output / finish_output, draw

# ---- bars: the latest run of one trace under each policy ----

# Sets $ids (comma-separated run ids) and $title for exits and cycles.
select_runs() {
  if [ -n "$trace" ]; then
    hash=$(query "SELECT trace_hash FROM run_summary WHERE trace = $(sq "$trace")
                  OR substr(trace, -length($(sq "$trace")) - 1) = '/' || $(sq "$trace") ORDER BY id DESC LIMIT 1")
    [ -n "$hash" ] || die "no stored run of trace $trace in $db"
  else
    hash=$(query "SELECT trace_hash FROM run_summary ORDER BY id DESC LIMIT 1")
    [ -n "$hash" ] || die "no runs stored in $db"
  fi
  [ -n "$cpu" ] || cpu=$(query "SELECT cpu FROM run_summary WHERE trace_hash = $(sq "$hash") ORDER BY id DESC LIMIT 1")
  ids=$(query "SELECT group_concat(id) FROM (SELECT max(id) AS id FROM run_summary
               WHERE trace_hash = $(sq "$hash") AND cpu = $(sq "$cpu") $whole GROUP BY policy ORDER BY min(id))")
  left=$(query "SELECT count(*) FROM run_summary WHERE trace_hash = $(sq "$hash") AND cpu = $(sq "$cpu") AND partial")
  if [ -n "$whole" ] && [ "${left:-0}" -gt 0 ]; then
    echo "plot.sh: left out $left partial run(s) of that trace (saved in the REPL before its end); --partial takes them" >&2
  fi
  [ -n "$ids" ] || die "no whole stored run of that trace on cpu $cpu"
  title=$(query "SELECT 'Trace ' || trace || CASE WHEN workload != '' THEN ' (' || workload || ')' ELSE '' END
                 || ', CPU profile ' || cpu FROM run_summary WHERE id IN ($ids) LIMIT 1")
  per_op=$(query "SELECT min(marks) > 0 FROM run_summary WHERE id IN ($ids)")
}

# bar_inputs: abbreviates the policy column of $tmp/data.tsv (short_labels; the key in
# $tmp/key) and sets $logy (the totals span more than 100x: a dot plot on a log axis, as
# stacked bars need a linear axis from zero) and $ymax (room above the tallest bar for its
# value, under the legend).
bar_inputs() {
  tail -n +2 "$tmp/data.tsv" | cut -f1 > "$tmp/labels"
  short_labels "$tmp/labels" "$tmp/short" "$tmp/key"
  { head -1 "$tmp/data.tsv"; tail -n +2 "$tmp/data.tsv" | cut -f2- | paste "$tmp/short" -; } > "$tmp/bars.tsv"
  awk -F '\t' -v OFS='\t' 'NR > 1 { t = 0; for (c = 2; c <= NF; c++) t += $c; print $1, t }' "$tmp/bars.tsv" > "$tmp/totals"
  logy=$(log_span "$tmp/totals" 2)
  nrows=$(wc -l < "$tmp/totals" | tr -d ' ')
  ymax=$(awk -F '\t' '$2 > m { m = $2 } END { print (m > 0 ? m : 1) * 1.18 }' "$tmp/totals")
}

# caption HEAD: the figure's caption: HEAD (what was its title), the trace and CPU
# profile, and the key of abbreviated policy names.
caption() {
  c="$1. $title."
  [ ! -s "$tmp/key" ] || c="$c Policies: $(paste -sd';' "$tmp/key" | sed 's/;/; /g')."
  [ "$logy" = 0 ] || c="$c Logarithmic axis (the values span more than a factor of 100): a dot per value instead of bars."
  write_caption "$c"
}

plot_exits() {
  select_runs
  if [ "$per_op" = 1 ]; then value="e.count * 1.0 / r.marks"; ylabel="VM exits per operation"
  else value="e.count"; ylabel="VM exits"; fi
  # Long form (policy, reason, value), pivoted to one column per reason for gnuplot; the
  # policies in the order their runs were first stored ($ids is in that order).
  query "SELECT name FROM exits WHERE run_id IN ($ids) AND parent IS NULL GROUP BY name ORDER BY min(reason)" \
    > "$tmp/reasons"
  query "SELECT r.policy, e.name, $value FROM exits e JOIN run_summary r ON r.id = e.run_id
         WHERE e.run_id IN ($ids) AND e.parent IS NULL ORDER BY instr(',$ids,', ',' || r.id || ',')" > "$tmp/long"
  awk -F '\t' -v OFS='\t' '
    NR == FNR { reason[++nr] = $1; next }
    !($1 in seen) { seen[$1] = 1; pol[++np] = $1 }
    { v[$1, $2] = $3 }
    END {
      line = "policy"; for (i = 1; i <= nr; i++) line = line OFS reason[i]; print line
      for (p = 1; p <= np; p++) {
        line = pol[p]; for (i = 1; i <= nr; i++) line = line OFS ((pol[p], reason[i]) in v ? v[pol[p], reason[i]] : 0)
        print line
      }
    }' "$tmp/reasons" "$tmp/long" > "$tmp/data.tsv"
  ncols=$(head -1 "$tmp/data.tsv" | awk -F '\t' '{ print NF }')
  [ "$ncols" -gt 1 ] || die "the selected runs have no VM exits"
  if [ "$per_op" = 1 ]; then head="VM exits per operation, by exit reason"; else head="VM exits by exit reason"; fi
  bar_inputs
  draw exits.gp "datafile=$(gq "$tmp/bars.tsv"); ncols=$ncols; ylab=$(gq "$ylabel"); logy=$logy; ymax=$ymax; nrows=$nrows"
  caption "$head"
}

plot_cycles() {
  select_runs
  if [ "$per_op" = 1 ]; then scale="(r.marks * r.clock_ghz * 1000.0)"; ylabel="µs per operation"
  else scale="1e6"; ylabel="million cycles"; fi
  { printf 'policy\tguest\thypervisor\n'
    query "SELECT policy, guest_cycles / $scale, vmm_cycles / $scale FROM run_summary r WHERE id IN ($ids)
           ORDER BY instr(',$ids,', ',' || id || ',')"
  } > "$tmp/data.tsv"
  bar_inputs
  draw cycles.gp "datafile=$(gq "$tmp/bars.tsv"); ylab=$(gq "$ylabel"); logy=$logy; ymax=$ymax; nrows=$nrows"
  caption "Guest and hypervisor time per policy"
}

# ---- lines: us/op against a metadata parameter, one line per policy ----

plot_param() {
  [ -n "$param" ] || usage_error "param needs --param KEY (a key of the trace metadata, e.g. procs)"
  case $param in *[!A-Za-z0-9_.]*) usage_error "--param $param: letters, digits, '_' and '.' only" ;; esac
  x="CASE WHEN json_valid(metadata) THEN json_extract(metadata, '\$.$param') END"
  has="$x IS NOT NULL AND us_per_op IS NOT NULL"
  [ -n "$workload" ] || workload=$(query "SELECT workload FROM run_summary WHERE $has ORDER BY id DESC LIMIT 1")
  [ -n "$workload" ] || die "no stored run of a trace whose metadata has '$param' and marks"
  [ -n "$cpu" ] || cpu=$(query "SELECT cpu FROM run_summary WHERE $has AND workload = $(sq "$workload") ORDER BY id DESC LIMIT 1")
  where="$has AND workload = $(sq "$workload") AND cpu = $(sq "$cpu") $whole"
  # The latest run of each (trace, policy); one file per policy, in order of first appearance.
  query "SELECT policy, $x, us_per_op FROM run_summary WHERE id IN
           (SELECT max(id) FROM run_summary WHERE $where GROUP BY trace_hash, policy)
         ORDER BY policy, 2" > "$tmp/long"
  [ -s "$tmp/long" ] || die "no stored run of workload $workload on cpu $cpu has '$param' in its metadata"
  query "SELECT policy FROM run_summary WHERE $where GROUP BY policy ORDER BY min(id)" > "$tmp/policies"
  short_labels "$tmp/policies" "$tmp/short" "$tmp/key"
  files= titles= i=0
  while IFS= read -r pol; do
    i=$((i + 1))
    awk -F '\t' -v p="$pol" -v OFS='\t' '$1 == p { print $2, $3 }' "$tmp/long" | sort -g > "$tmp/p$i.tsv"
    files="$files $tmp/p$i.tsv"
  done < "$tmp/policies"
  titles=$(tr '\n' '\t' < "$tmp/short")
  # Logarithmic axes when the values are positive and span more than a factor of 100 (the
  # rule of every chart: small values stay readable beside large ones), linear otherwise.
  logx=$(log_span "$tmp/long" 2)
  logy=$(log_span "$tmp/long" 3)
  case $param in
    procs) xlab="processes ($param)" ;;
    size) xlab="working set per process, KB ($param)" ;;
    vcpus) xlab="vCPUs ($param)" ;;
    groups) xlab="groups of processes ($param)" ;;
    *) xlab=$param ;;
  esac
  xs=$(cut -f2 "$tmp/long" | sort -gu)
  integer=$(printf '%s\n' "$xs" | awk '$1 != int($1) { f = 1 } END { print f ? 0 : 1 }')
  draw param.gp "files=$(gq "$files"); titles=$(gq "$titles"); logx=$logx; logy=$logy; xlab=$(gq "$xlab");
                 integer=$integer; xtics=$(gq "$(printf '%s\n' "$xs" | paste -sd, -)")"
  c="Time per operation against $param. Workload $workload, CPU profile $cpu."
  [ ! -s "$tmp/key" ] || c="$c Policies: $(paste -sd';' "$tmp/key" | sed 's/;/; /g')."
  write_caption "$c"
}

case $kind in
  exits) out=${out:-exits} ;;
  cycles) out=${out:-cycles} ;;
  param) out=${out:-param-$param} ;;
esac
out=${out%.png}; out=${out%.svg}; out=${out%.pdf}
check_out_dir "$out"
case $kind in
  exits) plot_exits ;;
  cycles) plot_cycles ;;
  param) plot_param ;;
esac
printf '%s\n' "$out.png" "$out.svg" "$out.pdf" "$out.caption.txt"
