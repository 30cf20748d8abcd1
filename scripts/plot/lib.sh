# What the chart scripts (plot.sh, sweep.sh) share: reading the results database
# read-only, and writing each chart through a temporary file so that nothing
# partial is left behind, in PNG, SVG and PDF (draw).  Sourced after $db is set; needs
# $here and gq (quoting a value for gnuplot).
#
# Read-only: the database is opened with sqlite3 -readonly and never changed
# (nor migrated).  A file the user may not write, or a WAL database without its
# -shm file in a directory the user may not write, is read as immutable when no
# change waits in its -wal, as vmxsim's own read-only commands do: SQLite would
# otherwise make -wal and -shm files beside it, read-only for the next writer
# (docs/schema.md, "Read-only use").
#
# Temporary files: a chart OUT is drawn as .OUT.vmxsim-tmp.PID.XXXXXX beside it and
# renamed into place; SIGINT and SIGTERM remove the temporary files and exit 130
# or 143; those of a killed process (PID gone) are removed by the next run that
# writes OUT, as vmxsim's own commands do (vmxsim(1), FILES).

dburi=$db
if [ ! -s "$db-wal" ] && { [ ! -w "$db" ] || { [ ! -w "$(dirname "$db")" ] && [ ! -e "$db-shm" ]; }; }; then
  dburi="file:$(printf '%s' "$db" | sed 's/%/%25/g; s/?/%3F/g; s/#/%23/g')?immutable=1"
fi
query() { sqlite3 -readonly -batch -noheader -separator "$(printf '\t')" "$dburi" "$1"; }

tmp=$(mktemp -d)
part=''
cleanup() { rm -rf "$tmp"; [ -z "$part" ] || rm -f "$part"; }
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# check_out_dir OUT: the charts are written beside OUT, so its directory must exist (said
# before any work, rather than by mktemp once the data is read).
check_out_dir() {
  [ -d "$(dirname "$1")" ] || die "-o $1: directory $(dirname "$1") does not exist; create it first"
}
# begin_output OUT: sets $part to a new temporary file beside OUT, after removing
# those of dead processes; it is removed on exit unless finish_output renamed it.
begin_output() {
  d=$(dirname "$1") b=$(basename "$1")
  for f in "$d/.$b.vmxsim-tmp."*; do
    [ -e "$f" ] || continue
    p=${f#"$d/.$b.vmxsim-tmp."}; p=${p%.*}
    case $p in ''|*[!0-9]*) continue ;; esac
    [ "$p" = $$ ] || [ -d "/proc/$p" ] || rm -rf "$f"
  done
  part=$(mktemp "$d/.$b.vmxsim-tmp.$$.XXXXXX") || exit 1
  chmod "$(printf '%o' $((0666 & ~0$(umask))))" "$part"   # mktemp's 0600: the mode a new file gets
}
# finish_output OUT: renames the finished chart ($part) into place.
finish_output() { mv -f "$part" "$1" && part=''; }

# draw SCRIPT SETTINGS: runs gnuplot SCRIPT (beside this file) once per format into
# $out.png, $out.svg and $out.pdf, with SETTINGS after dir, fmt and outfile.  The
# caption ($out.caption.txt) is written by write_caption.
draw() {
  [ "${PLOT_SHOW_SETTINGS:-0}" != 1 ] || printf 'plot settings: %s\n' "$2" >&2
  for fmt in png svg pdf; do
    begin_output "$out.$fmt"
    gnuplot -e "dir=$(gq "$here/"); fmt='$fmt'; outfile=$(gq "$part"); $2" "$here/$1" && finish_output "$out.$fmt"
  done
}

# draw also prints its gnuplot settings on stderr when PLOT_SHOW_SETTINGS is 1, so that a
# test can see the choices made (log or linear axes, legend order) without reading pixels.

# log_span FILE COLUMN: 1 when the positive values of COLUMN (tab-separated; from the second
# line when SKIP_HEADER=1) span more than a factor of 100 and none is negative or zero,
# else 0: the rule of every vmxsim chart (a log axis only then, so that small values stay
# readable beside large ones, linear otherwise).  Zeros are left out of the span (they have
# no place on a log axis; the charts write them as numbers).
log_span() {
  awk -F '\t' -v c="$2" -v skip="${SKIP_HEADER:-0}" '
    skip && NR == 1 { next }
    $c < 0 { neg = 1 }
    $c > 0 { if (!n++ || $c < lo) lo = $c; if ($c > hi) hi = $c }
    END { print (!neg && n && hi > 100 * lo) ? 1 : 0 }' "$1"
}

# short_labels IN OUT KEY: a label longer than 14 characters would squeeze the plot (as a
# tick label) or widen the legend: it becomes its policy's name and a letter, "cr3cache (a)",
# and KEY gets a line "(a) cr3cache,cr3_target_count=4" for the caption.  Labels in IN, one
# a line; OUT the same lines, shortened.
short_labels() {
  awk -v key="$3" '
    length($0) <= 14 { print; next }
    {
      base = $0; sub(/[,+ ].*/, "", base)
      if (length(base) > 12) base = substr(base, 1, 11) "."
      tag = "(" substr("abcdefghijklmnopqrstuvwxyz", k % 26 + 1, 1) (k >= 26 ? int(k / 26) : "") ")"; k++
      print base " " tag
      print tag " " $0 > key
    }' "$1" > "$2"
  [ -e "$3" ] || : > "$3"
}

# write_caption TEXT: writes TEXT as $out.caption.txt (through a temporary file, as the
# charts): figures carry no title, a paper puts that in the caption, and so does this file.
write_caption() {
  begin_output "$out.caption.txt"
  printf '%s\n' "$1" > "$part"
  finish_output "$out.caption.txt"
}
