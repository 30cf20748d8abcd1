#!/bin/sh
# Writes KVM host events as 'trace-cmd report' prints them, for tests: vCPU threads
# named as QEMU names them ("CPU N/KVM") that migrate between the host CPUs (several
# threads take turns on one CPU), kvm_exit and kvm_entry with the handler's event
# (kvm_cr, kvm_msr, kvm_pio, kvm_cpuid) between them, timestamps in microseconds.
# With --noise it also writes what an excerpt pasted into a mail holds: the report's
# header lines, "CPU N is empty", blank lines, elisions ("...", with the lines they
# stand for left out) and an author's notes after some records ("<---- [1]").
# Deterministic: the same options give the same text.
#
# usage: scripts/gen-kvm-report.sh [--threads N] [--cpus N] [--exits N] [--seed N]
#                                  [--noise] [--old] [--comm NAME] [--pid N]
#   --threads N  vCPU threads (default 4); --cpus N host CPUs (default 2)
#   --exits N    exits per thread (default 200)
#   --old        Linux before 5.10: kvm_exit without "vcpu N" and with "info Q I"
#   --comm NAME  the threads' name instead of "CPU N/KVM" (N: the vcpu id)
#   --pid N      the first thread's pid (default 4100; the others follow)
threads=4 cpus=2 exits=200 seed=1 noise=0 old=0 comm="" pid=4100
while [ $# -gt 0 ]; do
  case $1 in
    --threads) threads=$2; shift ;;
    --cpus) cpus=$2; shift ;;
    --exits) exits=$2; shift ;;
    --seed) seed=$2; shift ;;
    --noise) noise=1 ;;
    --old) old=1 ;;
    --comm) comm=$2; shift ;;
    --pid) pid=$2; shift ;;
    *) echo "gen-kvm-report.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
  shift
done

# Each thread's records, keyed by time (us) and order of writing, then sorted
# as trace-cmd report sorts the CPUs' records by time.
awk -v threads="$threads" -v cpus="$cpus" -v exits="$exits" -v seed="$seed" -v old="$old" -v comm="$comm" -v pid="$pid" '
function rnd() { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648 }
function pick(n) { return int(rnd() * n) }
function rec(v, t, ev, f,   name) {
  name = comm != "" ? comm : sprintf("CPU %d/KVM", v)
  printf "%d %d %16s-%-5d [%03d] %d.%06d: %-20s %s\n", t, ++seq, name, pid + v, cpu[v], 1000 + int(t / 1000000), t % 1000000, ev ":", f
}
function exitrec(v, t, reason, q, ii) {
  if (old) rec(v, t, "kvm_exit", sprintf("reason %s rip 0xffffffff81001000 info %x %x", reason, q, ii))
  else rec(v, t, "kvm_exit", sprintf("vcpu %d reason %s rip 0xffffffff81001000 info1 0x%016x info2 0x0000000000000000 intr_info 0x%08x error_code 0x00000000", v, reason, q, ii))
}
function entryrec(v, t) {
  if (old) rec(v, t, "kvm_entry", sprintf("vcpu %d", v))
  else rec(v, t, "kvm_entry", sprintf("vcpu %d, rip 0xffffffff81001003 intr_info 0x00000000 error_code 0x00000000", v))
}
BEGIN {
  for (v = 0; v < threads; v++) {
    t = 1000 + (threads - v) * 7; cpu[v] = v % cpus     # the last thread first: not in vcpu order
    for (i = 0; i < exits; i++) {
      t += 1 + pick(40)                                   # guest time, us
      if (rnd() < 0.2) cpu[v] = pick(cpus)                # migrates while in the guest
      d = pick(4) == 0 ? 0 : pick(12)                     # the exit, in whole us: many of 0
      k = pick(6)
      if (k == 0) { exitrec(v, t, "CR_ACCESS", (pick(2) ? 3 : 0), 0)
        rec(v, t + (d > 0), "kvm_cr", (pick(2) ? sprintf("cr_write 3 = 0x%x", 268435456 + pick(4) * 1048576) : "cr_write 0 = 0x80050033")) }
      else if (k == 1) { exitrec(v, t, "MSR_WRITE", 0, 0); rec(v, t, "kvm_msr", "msr_write 6e0 = 0x1c6ed2c2f74") }
      else if (k == 2) { exitrec(v, t, "IO_INSTRUCTION", 7340032, 0); rec(v, t, "kvm_pio", "pio_write at 0x70 size 1 count 1 val 0x8f ") }
      else if (k == 3) { exitrec(v, t, "CPUID", 0, 0); rec(v, t, "kvm_cpuid", sprintf("func %x idx 0 rax 306a9 rbx 10800 rcx 9ab82203 rdx 1f8bfbff, cpuid entry found", pick(8))) }
      else if (k == 4) exitrec(v, t, "HLT", 0, 0)
      else exitrec(v, t, "EXTERNAL_INTERRUPT", 0, 2147483884)
      t += d
      entryrec(v, t)
    }
  }
}' | sort -k1,1n -k2,2n | cut -d' ' -f3- |
awk -v noise="$noise" -v seed="$seed" -v cpus="$cpus" '
function rnd() { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648 }
BEGIN { if (noise) { printf "cpus=%d\n", cpus + 1; printf "CPU %d is empty\n", cpus } }
!noise { print; next }
drop > 0 { drop--; next }
{
  r = rnd()
  if (r < 0.004) { print "..."; drop = 1 + int(rnd() * 5); next }   # an elision: what it stands for is left out
  if (r < 0.03) print ""
  if (r > 0.994) { print $0 "   <---- [1]"; next }
  print
}'
