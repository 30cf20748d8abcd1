# CLI tests for `vmxsim import perf-script --guest pv64` (a native recording replayed as a
# 64-bit Xen PV guest: a CR3 write on every entry to and return from the guest kernel) and
# for sched_process_exec (a new address space), on a small recording written here.
# Sourced by tests/cli/run.sh in a scratch directory; $VMXSIM is the program, $ROOT the repo.

# make reads, faults, execs cc1 (a new address space); cc1 is preempted in user space by as,
# which returns from a system call.
cat > rec.txt <<'REC'
            make   100/100   [000]     1.000000:   raw_syscalls:sys_enter: NR 0 (3, 7ffc, 10, 0, 0, 0)
            make   100/100   [000]     1.000010:   raw_syscalls:sys_exit: NR 0 = 1
            make   100/100   [000]     1.000020:   exceptions:page_fault_user: address=0x400123 ip=0x400123 error_code=0x6
            make   100/100   [000]     1.000030:   raw_syscalls:sys_enter: NR 59 (3, 7ffc, 10, 0, 0, 0)
             cc1   100/100   [000]     1.000040:   sched:sched_process_exec: filename=/usr/bin/cc1 pid=100 old_pid=100
             cc1   100/100   [000]     1.000050:   raw_syscalls:sys_exit: NR 59 = 0
             cc1   100/100   [000]     1.000060:   sched:sched_switch: prev_comm=cc1 prev_pid=100 prev_prio=120 prev_state=R ==> next_comm=as next_pid=200 next_prio=120
              as   200/200   [000]     1.000070:   raw_syscalls:sys_exit: NR 0 = 0
REC

# cr3s FILE.bin: the CR3 values written, in order, on one line
cr3s() { "$VMXSIM" trace dump "$1" | awk '$1 == "cr3w" { printf "%s%s", s, $2; s = " " } END { print "" }'; }

run "$VMXSIM" import perf-script rec.txt -o hvm.bin
check_rc "hvm import" 0
# exec: process 1's CR3; the switch: process 2's
check_eq "hvm: exec loads a new address space, the switch another" "0x10100000 0x10200000" "$(cr3s hvm.bin)"
flat=$("$VMXSIM" trace info hvm.bin | tr -d ' \n')
check_contains "hvm: execs counted" "$flat" '"execs":1'

run "$VMXSIM" import perf-script rec.txt --guest pv64 -o pv.bin
check_rc "pv64 import" 0
# kernel tables: 0x10n00000, user tables one page above. Before make's first call, the return to
# user space (not recorded); the call: kernel, back to user; the fault: kernel, user; execve:
# kernel, exec's new kernel tables, its return to the new user tables; the preemption from user
# space: cc1's kernel tables, the switch to as's, as's return from its call.
check_eq "pv64: a CR3 write at each crossing" \
  "0x10001000 0x10000000 0x10001000 0x10000000 0x10001000 0x10000000 0x10100000 0x10101000 0x10100000 0x10200000 0x10201000" \
  "$(cr3s pv.bin)"
check_eq "pv64: each system call enters through Xen's text" "2" \
  "$("$VMXSIM" trace dump pv.bin | grep -c '^touch 0xffff82d080000000 ')"
flat=$("$VMXSIM" trace info pv.bin | tr -d ' \n')
# the 11 writes less exec's and the switch's loads
check_contains "pv64: mode switches counted" "$flat" '"pv_mode_switches":9'

# cr3 write exits under a policy: the count column of the CSV breakdown row
cr3_exits() { "$VMXSIM" --no-db --format csv --policy "$1" --cpu core2-2008 pv.bin | awk -F, '$6 == "cr3 write" { print $8 }'; }
check_eq "pv64 under shadowcache: every CR3 write exits" "11" "$(cr3_exits shadowcache)"
# the 2008 CR3 cache (4 entries) holds a process's two tables: only each of the 6 roots' first
# use exits
check_eq "pv64 under cr3cache: only each root's first write exits" "6" "$(cr3_exits cr3cache)"

# bad options
run "$VMXSIM" import perf-script rec.txt --guest pv32 -o x.bin
check_rc "--guest: unknown guest" 2
check_contains "--guest: names the choices" "$err" "--guest 'pv32': expected hvm or pv64"
run "$VMXSIM" import perf-script rec.txt --guest pv64 --paging 32 -o x.bin
check_rc "--guest pv64 needs 64-bit paging" 2
check_contains "--guest pv64 --paging 32 explained" "$err" "--paging must be 64 (got 32)"
run "$VMXSIM" import kvm-ftrace rec.txt --guest pv64 -o x.bin
check_rc "--guest pv64 on a host recording" 2
check_contains "--guest pv64 on a host recording explained" "$err" "applies to native recordings"
check_eq "no output after bad options" "no" "$([ -e x.bin ] && echo yes || echo no)"
