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
# $out.png, $out.svg and $out.pdf, with SETTINGS after dir, fmt and outfile.
draw() {
  for fmt in png svg pdf; do
    begin_output "$out.$fmt"
    gnuplot -e "dir=$(gq "$here/"); fmt='$fmt'; outfile=$(gq "$part"); $2" "$here/$1" && finish_output "$out.$fmt"
  done
}
