#!/bin/sh
# Writes xentrace-excerpt.bin: a HAND-MADE xentrace file (not a recording: no Xen host here).
# Two physical-CPU windows of HVM records as xentrace lays them out (see README.md):
# pCPU 0: a guest switching CR3 between two address spaces (CR_WRITE64), an RDTSC and a HLT
# exit, one scheduler record (skipped); pCPU 1: CR4 writes and a CPUID exit.
# usage: traces/recorded/make-xen-excerpt.sh [OUT]   (default: beside this script)
out=${1:-$(dirname "$0")/xentrace-excerpt.bin}
perl -e '
  sub rec { my ($ev, $tsc, @x) = @_;   # header: event | n_extra << 28 | tsc flag << 31
    my $h = $ev | (scalar(@x) << 28) | (defined $tsc ? 1 << 31 : 0);
    return pack("V", $h) . (defined $tsc ? pack("VV", $tsc & 0xffffffff, $tsc >> 32) : "") . pack("V*", @x); }
  sub window { my ($cpu, $body) = @_; return rec(0x0001f003, undef, $cpu, length $body) . $body; }
  my ($ENTRY, $EXIT, $CRW) = (0x00081001, 0x00081102, 0x00082109);
  my ($t, $b0, $b1) = (1000000, "", "");
  for my $i (0 .. 3) {                   # pCPU 0: CR3 0x10000000 <-> 0x10100000
    $b0 .= rec($ENTRY, $t);
    $b0 .= rec($EXIT, $t += 24000, 28, 0x81c01a4e, 0xffffffff);
    $b0 .= rec($CRW, undef, 3, 0x10000000 + ($i % 2) * 0x100000, 0);
    $t += 3000;
  }
  $b0 .= rec($ENTRY, $t) . rec($EXIT, $t += 5000, 16, 0x81001000, 0xffffffff);   # RDTSC
  $b0 .= rec(0x0002f001, $t += 100, 0, 1);                                         # scheduler: skipped
  $b0 .= rec($ENTRY, $t += 400) . rec($EXIT, $t += 7000, 12, 0x81b0f1a5, 0xffffffff); # HLT
  $t = 1000500;
  for my $v (0x6f0, 0x670, 0x6f0) {      # pCPU 1: CR4.PGE toggles
    $b1 .= rec($ENTRY, $t) . rec($EXIT, $t += 9000, 28, 0x81070000, 0xffffffff);
    $b1 .= rec($CRW, undef, 4, $v, 0);
    $t += 2500;
  }
  $b1 .= rec($ENTRY, $t) . rec($EXIT, $t += 1200, 10, 0x81001234, 0xffffffff) . rec($ENTRY, $t += 1100); # CPUID
  binmode STDOUT; print window(0, $b0), window(1, $b1);
' > "$out"
