#!/bin/sh
# Plots a swept parameter of a sweep (docs/sweeps.md) from a results database: any
# generator parameter of the traces' metadata or any policy knob against microseconds or
# VM exits per operation, one line per policy.  It queries the database with the sqlite3
# tool and draws with gnuplot (sweep.gp beside it).
set -eu

usage() {
  cat <<'USAGE'
usage: scripts/plot/sweep.sh --param KEY [--y us|exits] [--where KEY=VALUE]... [--db FILE] [-o OUT]

  --param KEY      the x axis: a parameter of the traces' metadata (procs, size, ...) or a
                   policy knob (cr3_target_count, shadow_pages_max, ...); write params.KEY
                   or knobs.KEY where a name is both
  --y us|exits     microseconds per operation (default) or VM exits per operation
  --where K=V      only runs whose K is V: cpu, workload, a metadata parameter or a knob
                   (may be repeated); the other swept parameters must be fixed this way
  --db FILE        results database (default vmxsim.db; a merged sweep's, say)
  -o OUT           output: OUT.png, OUT.svg and OUT.pdf (a .png, .svg or .pdf ending is dropped;
                   default sweep-KEY) and OUT.caption.txt; each is printed

The figure has no title: OUT.caption.txt says what it shows (the title it would have had,
the workload, the CPU profile, the --where choices, and what an abbreviated policy name
such as "cr3cache (a)" stands for).  The legend lists the policies in the plan's order, a
knob list's in the order of its values, whatever order the sweep's workers stored them in.
A log axis is used when the values span more than a factor of 100, a linear one otherwise.

Without --where cpu=C, the CPU profile of the latest matching run; without --where
workload=W, the workload of the latest run that has KEY.  A policy's line takes its knob
value from the resolved policy, so "cr3cache" and "cr3cache,cr3_target_count=4" are one
line when KEY is that knob.

example:
  vmxsim sweep study.json -j 2 --db study.db
  scripts/plot/sweep.sh --db study.db --param procs --where size=0
  scripts/plot/sweep.sh --db study.db --param cr3_target_count --y exits --where procs=8
USAGE
}

die() { echo "sweep.sh: $*" >&2; exit "${rc:-1}"; }
usage_error() { rc=2 die "$* (see --help)"; }

here=$(cd "$(dirname "$0")" && pwd)
db=vmxsim.db param='' y=us out='' wheres=''
while [ $# -gt 0 ]; do
  case $1 in
    --param) param=${2?}; shift ;;
    --y) y=${2?}; shift ;;
    --where) wheres="$wheres
${2?}"; shift ;;
    --db) db=${2?}; shift ;;
    -o|--output) out=${2?}; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage_error "unknown option '$1'" ;;
  esac
  shift
done
[ -n "$param" ] || usage_error "--param KEY is required"
case $y in us|exits) ;; *) usage_error "--y $y: expected us or exits" ;; esac
name_ok() { case $1 in ''|*[!A-Za-z0-9_.]*) return 1 ;; esac; }
command -v sqlite3 >/dev/null || die "needs the sqlite3 tool (Debian package sqlite3; scripts/setup.sh installs it)"
command -v gnuplot >/dev/null || die "needs gnuplot (Debian package gnuplot-nox; scripts/setup.sh installs it)"
[ -f "$db" ] || die "results database $db does not exist"

sq() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/''/g")"; }
gq() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/''/g")"; }
. "$here/lib.sh"     # query (read-only), $tmp, begin_output / finish_output, draw
FROM="FROM runs r JOIN traces t ON t.id = r.trace_id"
meta() { printf "CASE WHEN json_valid(t.metadata) THEN json_extract(t.metadata, '\$.%s') END" "$1"; }
knob() { printf "json_extract(r.policy_json, '\$.%s')" "$1"; }

# key_sql KEY: sets $sql to the SQL of a key (cpu, workload, a metadata parameter or a
# knob) and $kind to which of those it is.
key_sql() {
  case $1 in
    cpu) kind=cpu sql="r.cpu"; return ;;
    workload) kind=workload sql="t.workload"; return ;;
    params.*) name_ok "${1#params.}" || usage_error "$1: letters, digits, '_' and '.' only"
              kind=param sql=$(meta "${1#params.}"); return ;;
    knobs.*) name_ok "${1#knobs.}" || usage_error "$1: letters, digits, '_' and '.' only"
             kind=knob sql=$(knob "${1#knobs.}"); return ;;
  esac
  name_ok "$1" || usage_error "$1: letters, digits, '_' and '.' only"
  in_meta=$(query "SELECT count(*) $FROM WHERE $(meta "$1") IS NOT NULL")
  in_knobs=$(query "SELECT count(*) $FROM WHERE $(knob "$1") IS NOT NULL")
  if [ "$in_meta" -gt 0 ] && [ "$in_knobs" -gt 0 ]; then
    usage_error "$1 is both a trace parameter and a knob: write params.$1 or knobs.$1"
  elif [ "$in_meta" -gt 0 ]; then kind=param sql=$(meta "$1")
  elif [ "$in_knobs" -gt 0 ]; then kind=knob sql=$(knob "$1")
  else die "no stored run has '$1' in its trace's metadata or its policy"
  fi
}

key_sql "$param"
x=$sql xkind=$kind
case $param in params.*) xname=${param#params.} ;; knobs.*) xname=${param#knobs.} ;; *) xname=$param ;; esac
where="$x IS NOT NULL AND r.partial = 0"
fixed_cpu='' fixed_workload=''
printf '%s\n' "$wheres" | sed '/^$/d' > "$tmp/wheres"
while IFS= read -r w; do
  case $w in *=*) ;; *) usage_error "--where $w: expected KEY=VALUE" ;; esac
  k=${w%%=*} v=${w#*=}
  key_sql "$k"
  e=$sql
  [ "$kind" = cpu ] && fixed_cpu=1
  [ "$kind" = workload ] && fixed_workload=1
  # JSON values compare as text: 64 = '64', true = 'true' (json_extract gives 1 for true)
  case $v in true) v=1 ;; false) v=0 ;; esac
  where="$where AND CAST($e AS TEXT) = $(sq "$v")"
done < "$tmp/wheres"
if [ -z "$fixed_workload" ]; then
  wl=$(query "SELECT t.workload $FROM WHERE $where ORDER BY r.id DESC LIMIT 1")
  [ -n "$wl" ] || die "no stored run matches (--param $param$(tr '\n' ' ' < "$tmp/wheres" | sed 's/^./ --where &/'))"
  where="$where AND t.workload = $(sq "$wl")"
fi
if [ -z "$fixed_cpu" ]; then
  cpu=$(query "SELECT r.cpu $FROM WHERE $where ORDER BY r.id DESC LIMIT 1")
  where="$where AND r.cpu = $(sq "$cpu")"
fi
if [ "$y" = us ]; then
  yexpr="CASE WHEN r.marks > 0 THEN (r.guest_cycles + r.vmm_cycles) / (r.marks * r.clock_ghz * 1000.0) END"
  ylabel="microseconds per operation"
else
  yexpr="CASE WHEN r.marks > 0 THEN r.total_exits * 1.0 / r.marks END"
  ylabel="VM exits per operation"
fi
query "SELECT r.policy, $x, $yexpr, r.cpu, t.workload $FROM WHERE $where AND $yexpr IS NOT NULL ORDER BY r.id" > "$tmp/rows"
[ -s "$tmp/rows" ] || die "no stored run with marks matches: --param $param needs runs of traces with 'mark' events"
workload=$(cut -f5 "$tmp/rows" | tail -1) cpu=$(cut -f4 "$tmp/rows" | tail -1)

# One line per policy, the swept knob's override taken out of its name; a point must not
# have two different values (then another parameter varies: fix it with --where).
awk -F '\t' -v OFS='\t' -v key="$xname" -v knobx="$([ "$xkind" = knob ] && echo 1 || echo 0)" -v dir="$tmp" '
  {
    label = $1
    if (knobx) { gsub("," key "=[^,]*", "", label) }
    if (!(label in line)) { line[label] = ++n; name[n] = label }
    k = label SUBSEP $2
    if ((k in y) && y[k] != $3) { clash[label] = clash[label] " " $2 }
    y[k] = $3
  }
  END {
    for (k in y) { split(k, p, SUBSEP); print p[2], y[k] > (dir "/p" line[p[1]] ".tsv") }
    for (i = 1; i <= n; i++) print name[i] > (dir "/labels")
    for (l in clash) print l ":" clash[l] > (dir "/clashes")
  }' "$tmp/rows"
if [ -s "$tmp/clashes" ]; then
  varying=$(query "SELECT group_concat(key, ', ') FROM (SELECT DISTINCT key FROM (SELECT j.key AS key, $x AS xv
             $FROM, json_each(CASE WHEN json_valid(t.metadata) THEN t.metadata END) j
             WHERE $where AND j.key NOT IN ($(sq "$xname"), 'sources') AND j.type NOT IN ('array', 'object')
             GROUP BY j.key, xv HAVING count(DISTINCT j.value) > 1) ORDER BY key)")
  die "several runs with different results at one point of a line ($(head -1 "$tmp/clashes")): other parameters vary${varying:+: $varying}; fix them with --where KEY=VALUE"
fi
# The legend in the plan's order: the policies of the stored plans (sweeps.plan, in the
# order they were stored) rank the lines, and a knob list's policies follow the plan's
# values (its first knob varying slowest, as the sweep runs them), whatever order parallel
# workers stored their runs in; lines of no plan keep the order of their first stored run.
# One row per value of a knob of a plan's policy (a policy without knobs: one row).
[ "$(query "SELECT count(*) FROM sqlite_master WHERE name = 'sweeps'")" = 0 ] ||
  query "SELECT p.sid || '.' || p.pid, CASE p.type WHEN 'text' THEN p.value ELSE json_extract(p.value, '\$.policy') END,
                coalesce(k.key, ''), CASE WHEN v.type IN ('true', 'false') THEN v.type ELSE coalesce(v.value, '') END
         FROM (SELECT s.id AS sid, j.id AS pid, j.type AS type, j.value AS value
               FROM sweeps s, json_each(CASE WHEN json_valid(s.plan) THEN s.plan END, '\$.policies') j) p
         LEFT JOIN json_each(CASE WHEN p.type = 'object' THEN p.value END, '\$.knobs') k
         LEFT JOIN json_each(CASE WHEN k.key IS NOT NULL THEN p.value END, k.fullkey) v
         ORDER BY p.sid, p.pid, k.id, v.id" > "$tmp/plan"
touch "$tmp/plan"
awk -F '\t' -v key="$xname" -v knobx="$([ "$xkind" = knob ] && echo 1 || echo 0)" '
  # a knob value as the plan writes it (decimal or 0x hex, a boolean as --set takes it) and
  # as the policy name spells it (decimal, 0x and lowercase hex, true or false) are one value
  function number(v,   t, n, i) {
    t = tolower(v)
    if (t ~ /^[0-9]+$/) return t + 0
    if (t !~ /^0x[0-9a-f]+$/) return -1
    for (i = 3; i <= length(t); i++) n = n * 16 + index("0123456789abcdef", substr(t, i, 1)) - 1
    return n
  }
  function truth(v,   t) {
    t = tolower(v)
    return t ~ /^(true|1|on|yes)$/ ? "true" : t ~ /^(false|0|off|no)$/ ? "false" : ""
  }
  function same(named, planned) {
    if (named == planned) return 1
    if (named == "true" || named == "false") return truth(planned) == named
    return number(named) >= 0 && number(planned) == number(named)
  }
  # the position of the line named label among the knob combinations of plan entry e, or
  # -1 when its knobs are not that entry'"'"'s (the swept knob is out of the name and the plan)
  function combination(e, label,   rest, n, i, j, kv, have, c, found) {
    rest = label == spec[e] ? "" : substr(label, length(spec[e]) + 2)
    split("", have)
    n = rest == "" ? 0 : split(rest, kv, ",")
    for (i = 1; i <= n; i++) { j = index(kv[i], "="); if (j) have[substr(kv[i], 1, j - 1)] = substr(kv[i], j + 1) }
    c = 0
    for (i = 1; i <= nk[e]; i++) {
      if (knobx && knob[e, i] == key) continue
      if (!(knob[e, i] in have)) return -1
      found = -1
      for (j = 1; j <= nv[e, i]; j++) if (same(have[knob[e, i]], val[e, i, j])) { found = j - 1; break }
      if (found < 0) return -1
      c = c * nv[e, i] + found
      delete have[knob[e, i]]
      n--
    }
    return n == 0 ? c : -1
  }
  NR == FNR {
    if ($1 != id) { id = $1; spec[++ne] = $2 }
    if ($3 == "") next
    if (!nk[ne] || knob[ne, nk[ne]] != $3) knob[ne, ++nk[ne]] = $3
    val[ne, nk[ne], ++nv[ne, nk[ne]]] = $4
    next
  }
  {
    # the entry whose policy and knobs name the line; else the longest policy the line
    # starts with, after that entry'"'"'s combinations; else after every entry
    rank = ne + 1; at = 0; fit = 0; len = -1
    for (e = 1; e <= ne; e++) {
      if ($0 != spec[e] && index($0, spec[e] ",") != 1) continue
      c = combination(e, $0)
      if (c >= 0 && (!fit || length(spec[e]) > len)) { rank = e; at = c; fit = 1; len = length(spec[e]) }
      else if (c < 0 && !fit && length(spec[e]) > len) { rank = e; at = 1e9; len = length(spec[e]) }
    }
    print rank "\t" at "\t" FNR
  }' "$tmp/plan" "$tmp/labels" | sort -t "$(printf '\t')" -k1,1n -k2,2n -k3,3n | cut -f3 > "$tmp/order"
awk 'NR == FNR { label[FNR] = $0; next } { print label[$1] }' "$tmp/labels" "$tmp/order" > "$tmp/ordered"
short_labels "$tmp/ordered" "$tmp/short" "$tmp/key"
files=''
while IFS= read -r i; do
  sort -g "$tmp/p$i.tsv" -o "$tmp/p$i.tsv"
  files="$files $tmp/p$i.tsv"
done < "$tmp/order"
titles=$(tr '\n' '\t' < "$tmp/short")
# log axes when the values span more than a factor of 100 (every chart's rule), else linear
cat "$tmp"/p*.tsv > "$tmp/points"
logx=$(log_span "$tmp/points" 1)
logy=$(log_span "$tmp/points" 2)
out=${out:-sweep-$xname}
out=${out%.png}; out=${out%.svg}; out=${out%.pdf}
check_out_dir "$out"
caption="$(printf '%s' "$ylabel" | sed 's/^./\U&/') against $xname. Workload $workload, CPU profile $cpu"
[ -s "$tmp/wheres" ] && caption="$caption; $(paste -sd' ' "$tmp/wheres" | sed 's/ /, /g')"
caption="$caption."
[ ! -s "$tmp/key" ] || caption="$caption Policies: $(paste -sd';' "$tmp/key" | sed 's/;/; /g')."
xs=$(cut -f1 "$tmp"/p*.tsv | sort -gu)
integer=$(printf '%s\n' "$xs" | awk '$1 != int($1) { f = 1 } END { print f ? 0 : 1 }')
xtics=$(printf '%s\n' "$xs" | paste -sd, -)
draw sweep.gp "files=$(gq "$files"); titles=$(gq "$titles"); logx=$logx; logy=$logy; integer=$integer; xtics=$(gq "$xtics");
              xlab=$(gq "$xname"); ylab=$(gq "$ylabel")"
write_caption "$caption"
printf '%s\n' "$out.png" "$out.svg" "$out.pdf" "$out.caption.txt"
