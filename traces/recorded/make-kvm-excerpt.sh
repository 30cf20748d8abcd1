#!/bin/sh
# Writes kvm-ftrace-shadow.txt: a HAND-MADE ftrace text of KVM host tracepoints (not a recording:
# no KVM host here), in the print formats of Linux >= 5.10 with nanosecond timestamps as
# 'trace-cmd report -t' prints them (see README.md). Two vCPUs of a shadow-paging guest
# (kvm_intel ept=0) switching between three address spaces; every exit has its kvm_exit, the
# handler's detail line and its kvm_entry, with costs drawn from a fixed pseudo-random
# sequence around plausible figures in cycles at 2.4 GHz: CR3 write ~3000, CPUID ~1800,
# WRMSR ~2100, port I/O ~6500, guest page faults ~25000, HLT ~30000.
# usage: traces/recorded/make-kvm-excerpt.sh [OUT]   (default: beside this script)
out=${1:-$(dirname "$0")/kvm-ftrace-shadow.txt}
perl -e '
  my $seed = 12345;
  sub rnd { $seed = ($seed * 1103515245 + 12345) % 2147483648; return $seed / 2147483648; }
  my @t = (1000000000000, 1000000500000);            # ns, per vCPU
  my @cr3 = (0x10000000, 0x10100000, 0x10200000);
  my @leaves = (0x0, 0x1, 0x7, 0xb, 0x80000001);
  my @ports = (0x70, 0x71, 0x3f8);
  my ($ghz, $rip) = (2.4, "0xffffffff81001000");
  sub ts { my $ns = shift; return sprintf("%d.%09d", int($ns / 1e9), $ns % 1e9); }
  sub line { my ($v, $ns, $ev, $f) = @_;
    printf "qemu-system-x86-%d [%03d] %s: %s: %s\n", 4100 + $v, $v, ts($ns), $ev, $f; }
  sub exitrec { my ($v, $reason, $cost_cycles, $detail, $q) = @_;
    $t[$v] += int(2000 + rnd() * 40000);               # guest time
    line($v, $t[$v], "kvm_exit", sprintf("vcpu %d reason %s rip %s info1 0x%016x info2 0x0000000000000000 intr_info 0x%08x error_code 0x00000000", $v, $reason, $rip, $q->[0], $q->[1]));
    line($v, $t[$v] + 300, $detail->[0], $detail->[1]) if $detail;
    $t[$v] += int($cost_cycles / $ghz);
    line($v, $t[$v], "kvm_entry", sprintf("vcpu %d, rip %s", $v, $rip)); }
  print "# hand-made ftrace text of KVM tracepoints (traces/recorded/make-kvm-excerpt.sh); not a recording\n";
  for my $i (0 .. 399) {
    my $v = $i % 2; my $k = int(rnd() * 100);
    if ($k < 40) { my $c = $cr3[int(rnd() * 3)];
      exitrec($v, "CR_ACCESS", 2400 + rnd() * 1200, ["kvm_cr", sprintf("cr_write 3 = 0x%x", $c)], [3, 0]); }
    elsif ($k < 55) { my $l = $leaves[int(rnd() * 5)];
      exitrec($v, "CPUID", 1600 + rnd() * 400, ["kvm_cpuid", sprintf("func %x idx 0 rax 0 rbx 0 rcx 0 rdx 0, cpuid entry found", $l)], [0, 0]); }
    elsif ($k < 70) { exitrec($v, "MSR_WRITE", 1800 + rnd() * 600, ["kvm_msr", "msr_write 6e0 = 0x1234"], [0, 0]); }
    elsif ($k < 80) { my $p = $ports[int(rnd() * 3)];
      exitrec($v, "IO_INSTRUCTION", 5000 + rnd() * 3000, ["kvm_pio", sprintf("pio_write at 0x%x size 1 count 1 val 0x5a", $p)], [($p << 16), 0]); }
    elsif ($k < 93) { my $a = 0x7f0000000000 + int(rnd() * 4096) * 4096;
      exitrec($v, "EXCEPTION_NMI", 20000 + rnd() * 10000, ["kvm_page_fault", sprintf("vcpu %d rip %s address 0x%016x error_code 0x6", $v, $rip, $a)], [$a, 0x80000b0e]); }
    else { exitrec($v, "HLT", 25000 + rnd() * 10000, undef, [0, 0]); }
  }
' > "$out"
