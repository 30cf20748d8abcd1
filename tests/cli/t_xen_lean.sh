# CLI tests for the lean pass of `vmxsim summary` over a xentrace recording (import.h,
# opt.notes: the importer notes each measured exit for the views and emits no records):
# its summary equals the summary of the trace the full import writes, read record by
# record (views_feed), for every option it takes: every vCPU of every domain of a
# migrating multi-domain recording with lost records, each domain, the formats, the
# units, a time series; a recording of exits alone (read in one pass), recordings
# whose one pass gives up late (scheduler, lost or unknown records after the exits) and
# recordings whose vCPUs end inside an exit no handler record explained.
# Sourced by tests/cli/run.sh in a scratch directory; $VMXSIM is the program, $ROOT the repo.

# same_summary NAME REC TRACE [OPTION...]: the summary of the recording and of its
# imported trace, each with OPTION..., are the same (the file's name aside), and so are
# their exit codes and messages.
same_summary() {
  name=$1 rec=$2 trace=$3
  shift 3
  run "$VMXSIM" summary "$@" "$rec"
  lean_out=$(printf '%s\n' "$out" | sed "s|$rec|FILE|g") lean_err=$(printf '%s\n' "$err" | sed "s|$rec|FILE|g") lean_rc=$rc
  run "$VMXSIM" summary "$@" "$trace"
  check_eq "$name: exit code" "$rc" "$lean_rc"
  check_eq "$name: output" "$(printf '%s\n' "$out" | sed "s|$trace|FILE|g")" "$lean_out"
  check_eq "$name: messages" "$(printf '%s\n' "$err" | sed "s|$trace|FILE|g")" "$lean_err"
}

# The recording and its trace take the same workload name (the recording's base name).
imported() { # REC: writes REC.d/REC's base name.trace, prints its path
  mkdir -p "$1.d"
  tr="$1.d/$(basename "$1" .xentrace).trace"
  "$VMXSIM" import xentrace "$1" -o "$tr" --workload "$(basename "$1" .xentrace)" > /dev/null 2>&1
  echo "$tr"
}

if [ -x "${GEN_XENTRACE:-}" ]; then
  # two guests of four vCPUs and a dom0 of two on four pCPUs, migrating, two lost-records markers
  "$GEN_XENTRACE" -d 2 -v 4 -0 2 -c 4 -n 3000 -l 2 -w 2048 -s 5 -o host.xentrace
  TR=$(imported host.xentrace)
  check_contains "host: the recording holds lost records" "$("$VMXSIM" trace info --format json "$TR")" '"lost_records"'
  same_summary "host, every domain" host.xentrace "$TR"
  for f in json csv; do same_summary "host, --format $f" host.xentrace "$TR" --format "$f"; done
  same_summary "host, --units us --sort time --top 3" host.xentrace "$TR" --units us --sort time --top 3
  same_summary "host, --interval 1ms" host.xentrace "$TR" --interval 1ms
  for d in 0 1 2; do
    same_summary "host, --domain $d" host.xentrace "$TR" --domain "$d"
    vcpus=3; [ "$d" = 0 ] && vcpus=1
    for v in $(seq 0 "$vcpus"); do
      same_summary "host, d${d}v$v" host.xentrace "$TR" --domain "$d" --vcpu "$v" --format csv
    done
  done
  same_summary "host, --domain 0 --vcpu 2 (no such vCPU)" host.xentrace "$TR" --domain 0 --vcpu 2
  same_summary "host, --domain 7 (no such domain)" host.xentrace "$TR" --domain 7
  same_summary "host, --vcpu 1 (several domains)" host.xentrace "$TR" --vcpu 1

  # exits alone on three pCPUs: read in one pass (1 MB: several of the lean pass's 256 KiB
  # reads, so exits cut by a read's end)
  "$GEN_XENTRACE" -n 20000 -c 3 -s 2 -o flat.xentrace
  TR=$(imported flat.xentrace)
  same_summary "exits alone" flat.xentrace "$TR"
  same_summary "exits alone, --vcpu 2 --format json" flat.xentrace "$TR" --vcpu 2 --format json
  same_summary "exits alone, --domain 1 (no domains)" flat.xentrace "$TR" --domain 1
  # the same with a record its one pass does not read at the end: a runstate change
  # {vCPU 0, domain 1} (0x00021011: running to runnable, one extra word, no TSC), a
  # lost-records marker of four words, an unknown event
  for tail in '\021\020\002\020\000\000\001\000' \
              '\001\360\001\100\005\000\000\000\001\000\000\000\000\000\000\000\000\000\000\000' \
              '\017\360\001\000'; do
    cp flat.xentrace late.xentrace
    printf "$tail" >> late.xentrace
    rm -rf late.xentrace.d
    TR=$(imported late.xentrace)
    same_summary "exits alone, then $(od -An -tx1 -N4 -j "$(($(wc -c < flat.xentrace)))" late.xentrace | tr -d ' ')" \
      late.xentrace "$TR"
  done
else
  skip "lean summary: GEN_XENTRACE is not set (make cli builds it)"
fi

# le32 V: V's four bytes, little-endian; xrec EVENT TSC|- WORD...: one xentrace record
le32() { for s in 0 8 16 24; do printf "\\$(printf %03o $((($1 >> s) & 255)))"; done; }
xrec() {
  ev=$1 tsc=$2
  shift 2
  hdr=$((ev | $# << 28))
  [ "$tsc" = - ] || hdr=$((hdr | 1 << 31))
  le32 "$hdr"
  [ "$tsc" = - ] || { le32 "$tsc"; le32 0; }
  for w in "$@"; do le32 "$w"; done
}

# Recordings whose vCPUs end inside an exit no handler record explained (its VMENTRY never
# came; the vCPU blocked there): the lean pass settles each as the full import does (the
# metadata's exits_unmapped), reading the recording after its headers, and emits no record.
# Two vCPUs of domain 1 under the scheduler's records (0x00021002: continue running,
# 0x00021021: running to blocked), a CPUID and an MSR write measured, then EPT_MISCONFIG (49)
# and EXTERNAL_INTERRUPT (1) left pending:
{
  xrec 0x0001f003 - 0 0; xrec 0x00021002 1000 65536; xrec 0x00081001 1100
  xrec 0x00081102 2000 10 0 0; xrec 0x0008200e - 0; xrec 0x00081001 2600
  xrec 0x00081102 5000 49 0 0
  xrec 0x0001f003 - 1 0; xrec 0x00021002 1050 65537; xrec 0x00081001 1150
  xrec 0x00081102 3000 32 0 0; xrec 0x0008200d - 1760 1 0; xrec 0x00081001 4000
  xrec 0x00081102 4500 1 0 0; xrec 0x00021021 4700 65537
} > pending.xentrace
TR=$(imported pending.xentrace)
check_contains "pending at the end: the full import settles both" \
  "$("$VMXSIM" trace info --format json "$TR" | tr -d ' \t\n')" '"exits_unmapped":{"EPT_MISCONFIG":1,"EXTERNAL_INTERRUPT":1}'
same_summary "pending at the end, with scheduler records" pending.xentrace "$TR"
same_summary "pending at the end, d1v1" pending.xentrace "$TR" --domain 1 --vcpu 1 --format json
# the same without scheduler records, ending with an unknown event (0x0001f00f) that makes
# the one pass give up: read again after the headers, in file order
{
  xrec 0x0001f003 - 0 0; xrec 0x00081001 1100
  xrec 0x00081102 2000 10 0 0; xrec 0x0008200e - 0; xrec 0x00081001 2600
  xrec 0x00081102 5000 49 0 0; xrec 0x0001f00f -
} > pending-flat.xentrace
TR=$(imported pending-flat.xentrace)
check_contains "pending at the end, no scheduler: the full import settles it" \
  "$("$VMXSIM" trace info --format json "$TR" | tr -d ' \t\n')" '"exits_unmapped":{"EPT_MISCONFIG":1}'
same_summary "pending at the end, no scheduler records" pending-flat.xentrace "$TR"

# the committed host recording (tests/data/xentrace-host): each vCPU as xenalyze's sections show it
HOST="$ROOT/tests/data/xentrace-host/host.xentrace"
cp "$HOST" fixture.xentrace
TR=$(imported fixture.xentrace)
same_summary "fixture" fixture.xentrace "$TR"
same_summary "fixture, d2v3" fixture.xentrace "$TR" --domain 2 --vcpu 3
