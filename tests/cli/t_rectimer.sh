# CLI tests: a KVM recording made with the host's hrtimer holds the guest's deadline as an
# EXTERNAL_INTERRUPT exit at the host's timer vector (0xec) in which the vCPU's thread accepted
# the guest's timer interrupt.  Imported as the timer's arrival, lapic_timer=preemption
# re-decides it as a PREEMPTION_TIMER exit and hrtimer keeps it an EXTERNAL_INTERRUPT; the
# host's own interrupts stay host interrupts; what the recording cannot tell is named.
# Sourced by tests/cli/run.sh in a scratch directory; $VMXSIM is the program.

# 'trace-cmd report' text of 'trace-cmd record -e kvm' plus the timer events (Linux >= 5.10
# formats): two vCPU threads interleaved, microsecond timestamps several lines share, the
# I/O thread's and the idle task's records, a lost-events line.
cat > hr.txt <<'EOF2'
cpus=4
       CPU 0/KVM-4101  [001]  5012.734101: kvm_entry:            vcpu 0, rip 0xffffffff81e2f30e intr_info 0x00000000 error_code 0x00000000
       CPU 1/KVM-4102  [002]  5012.734102: kvm_entry:            vcpu 1, rip 0xffffffff81e2f30e intr_info 0x00000000 error_code 0x00000000
          <idle>-0     [003]  5012.734118: hrtimer_expire_entry: hrtimer=0xffff9c4b3fd9d0e0 function=tick_sched_timer now=5012734117000
       CPU 0/KVM-4101  [001]  5012.734150: kvm_exit:             vcpu 0 reason EXTERNAL_INTERRUPT rip 0xffffffff81e2f30e info1 0x0000000000000000 info2 0x0000000000000000 intr_info 0x800000ec error_code 0x00000000
       CPU 0/KVM-4101  [001]  5012.734151: kvm_apic_accept_irq:  apicid 0 vec 236 (Fixed|edge)
       CPU 0/KVM-4101  [001]  5012.734151: kvm_inj_virq:         IRQ 0xec
       CPU 0/KVM-4101  [001]  5012.734152: kvm_entry:            vcpu 0, rip 0xffffffff81e2f30e intr_info 0x00000000 error_code 0x00000000
       CPU 1/KVM-4102  [002]  5012.734160: kvm_exit:             vcpu 1 reason EXTERNAL_INTERRUPT rip 0xffffffff810a2b1c info1 0x0000000000000000 info2 0x0000000000000000 intr_info 0x800000ec error_code 0x00000000
       CPU 1/KVM-4102  [002]  5012.734160: hrtimer_expire_entry: hrtimer=0xffff9c4b3fd1d0e0 function=tick_sched_timer now=5012734159901
       CPU 1/KVM-4102  [002]  5012.734161: kvm_entry:            vcpu 1, rip 0xffffffff810a2b1c intr_info 0x00000000 error_code 0x00000000
  qemu-system-x86-4099  [000]  5012.734170: kvm_set_irq:          gsi 11 level 1 source 0
  qemu-system-x86-4099  [000]  5012.734171: kvm_apic_accept_irq:  apicid 1 vec 34 (Fixed|level)
       CPU 1/KVM-4102  [002]  5012.734172: kvm_exit:             vcpu 1 reason EXTERNAL_INTERRUPT rip 0xffffffff810a2b40 info1 0x0000000000000000 info2 0x0000000000000000 intr_info 0x800000f2 error_code 0x00000000
       CPU 1/KVM-4102  [002]  5012.734172: kvm_inj_virq:         IRQ 0x22
       CPU 1/KVM-4102  [002]  5012.734173: kvm_entry:            vcpu 1, rip 0xffffffff810a2b40 intr_info 0x00000000 error_code 0x00000000
       CPU 0/KVM-4101  [001]  5012.734180: kvm_exit:             vcpu 0 reason MSR_WRITE rip 0xffffffff81070d24 info1 0x0000000000000000 info2 0x0000000000000000 intr_info 0x00000000 error_code 0x00000000
       CPU 0/KVM-4101  [001]  5012.734180: kvm_msr:              msr_write 6e0 = 0x2f8a3c4d1e2
       CPU 0/KVM-4101  [001]  5012.734181: kvm_entry:            vcpu 0, rip 0xffffffff81070d26 intr_info 0x00000000 error_code 0x00000000
       CPU 1/KVM-4102  [002]  5012.734190: kvm_exit:             vcpu 1 reason MSR_WRITE rip 0xffffffff81068a5e info1 0x0000000000000000 info2 0x0000000000000000 intr_info 0x00000000 error_code 0x00000000
       CPU 1/KVM-4102  [002]  5012.734190: kvm_msr:              msr_write 830 = 0xfb
       CPU 1/KVM-4102  [002]  5012.734190: kvm_apic_accept_irq:  apicid 0 vec 251 (Fixed|edge)
       CPU 1/KVM-4102  [002]  5012.734191: kvm_entry:            vcpu 1, rip 0xffffffff81068a61 intr_info 0x00000000 error_code 0x00000000
       CPU 0/KVM-4101  [001]  5012.734195: kvm_exit:             vcpu 0 reason EXTERNAL_INTERRUPT rip 0xffffffff81e2f30e info1 0x0000000000000000 info2 0x0000000000000000 intr_info 0x800000fb error_code 0x00000000
       CPU 0/KVM-4101  [001]  5012.734196: kvm_inj_virq:         IRQ 0xfb
       CPU 0/KVM-4101  [001]  5012.734196: kvm_entry:            vcpu 0, rip 0xffffffff81e2f30e intr_info 0x00000000 error_code 0x00000000
CPU:3 [LOST 17 EVENTS]
       CPU 0/KVM-4101  [001]  5012.735150: kvm_exit:             vcpu 0 reason EXTERNAL_INTERRUPT rip 0xffffffff8104c1a0 info1 0x0000000000000000 info2 0x0000000000000000 intr_info 0x800000ec error_code 0x00000000
       CPU 0/KVM-4101  [001]  5012.735150: kvm_apic_accept_irq:  apicid 0 vec 236 (Fixed|edge)
       CPU 0/KVM-4101  [001]  5012.735150: kvm_wait_lapic_expire: vcpu 0: delta 312 (late)
       CPU 0/KVM-4101  [001]  5012.735151: kvm_entry:            vcpu 0, rip 0xffffffff8104c1a0 intr_info 0x00000000 error_code 0x00000000
       CPU 1/KVM-4102  [002]  5012.735160: kvm_exit:             vcpu 1 reason EXTERNAL_INTERRUPT rip 0xffffffff810a2b1c info1 0x0000000000000000 info2 0x0000000000000000 intr_info 0x800000ec error_code 0x00000000
       CPU 1/KVM-4102  [002]  5012.735160: kvm_apic_accept_irq:  apicid 1 vec 236 (Fixed|edge)
       CPU 1/KVM-4102  [002]  5012.735161: kvm_inj_virq:         IRQ 0xec
       CPU 1/KVM-4102  [002]  5012.735162: kvm_entry:            vcpu 1, rip 0xffffffff810a2b1c intr_info 0x00000000 error_code 0x00000000
       CPU 0/KVM-4101  [001]  5012.735170: kvm_exit:             vcpu 0 reason CPUID rip 0xffffffff81001234 info1 0x0000000000000000 info2 0x0000000000000000 intr_info 0x00000000 error_code 0x00000000
       CPU 0/KVM-4101  [001]  5012.735170: kvm_cpuid:            func 1 idx 0 rax 906ea rbx 800 rcx f6fa3223 rdx 1f8bfbff, cpuid entry found
       CPU 0/KVM-4101  [001]  5012.735171: kvm_entry:            vcpu 0, rip 0xffffffff81001236 intr_info 0x00000000 error_code 0x00000000
       CPU 1/KVM-4102  [002]  5012.736160: kvm_exit:             vcpu 1 reason EXTERNAL_INTERRUPT rip 0xffffffff810a2b1c info1 0x0000000000000000 info2 0x0000000000000000 intr_info 0x800000ec error_code 0x00000000
       CPU 1/KVM-4102  [002]  5012.736161: kvm_entry:            vcpu 1, rip 0xffffffff810a2b1c intr_info 0x00000000 error_code 0x00000000
       CPU 0/KVM-4101  [001]  5012.736170: kvm_exit:             vcpu 0 reason EXTERNAL_INTERRUPT rip 0xffffffff8104c1a0 info1 0x0000000000000000 info2 0x0000000000000000 intr_info 0x800000ec error_code 0x00000000
       CPU 0/KVM-4101  [001]  5012.736170: kvm_apic_accept_irq:  apicid 0 vec 236 (Fixed|edge)
       CPU 0/KVM-4101  [001]  5012.736171: kvm_entry:            vcpu 0, rip 0xffffffff8104c1a0 intr_info 0x00000000 error_code 0x00000000
EOF2
# independent count, from the text: exits at the timer vector, and those in which the exit's
# own thread accepted an interrupt before its next entry
awk '
  { pid = $0; sub(/ *\[.*/, "", pid); sub(/.*-/, "", pid) }
  / kvm_exit: / { open[pid] = 0; if ($0 ~ /reason EXTERNAL_INTERRUPT/) { ext++; if ($0 ~ /intr_info 0x800000ec/) { tv++; open[pid] = 1 } } }
  / kvm_apic_accept_irq: / && open[pid] { timer++; open[pid] = 0 }
  / kvm_entry: / { open[pid] = 0 }
  END { print ext + 0, tv + 0, timer + 0 }' hr.txt > counts
read -r ext tv timer < counts
check_eq "rectimer: the fixture has host timer exits of both kinds" "yes" \
  "$([ "$timer" -gt 1 ] && [ "$tv" -gt "$timer" ] && [ "$ext" -gt "$tv" ] && echo yes)"

row() { replay_table "$out" | awk -v r="$1" '$1 == r'; }

run "$VMXSIM" import kvm-ftrace hr.txt -o hr.bin
check_rc "rectimer: the report text imports" 0
run "$VMXSIM" trace info hr.bin --format json
flat=$(printf '%s' "$out" | tr -d ' \t\n')
check_contains "rectimer: the metadata counts the guest's timer expiries" "$flat" "\"guest_timer_exits\":$timer,"
check_not_contains "rectimer: the recording tells every one" "$flat" "exits_undecided"

run "$VMXSIM" --no-db --policy ept --cpu skylake-2019 --set lapic_timer=hrtimer hr.bin
check_rc "rectimer: hrtimer replays" 0
check_eq "rectimer: hrtimer: every EXTERNAL_INTERRUPT exit stays one" "$ext $ext" \
  "$(row EXTERNAL_INTERRUPT | awk '{ print $2, $4 }')"
check_eq "rectimer: hrtimer: no PREEMPTION_TIMER exit" "" "$(row PREEMPTION_TIMER)"

run "$VMXSIM" --no-db --policy ept --cpu skylake-2019 --set lapic_timer=preemption hr.bin
check_rc "rectimer: preemption replays" 0
check_eq "rectimer: preemption: the guest's timer expiries are PREEMPTION_TIMER exits" "0 $timer" \
  "$(row PREEMPTION_TIMER | awk '{ print $2, $4 }')"
check_eq "rectimer: preemption: the host's own interrupts stay EXTERNAL_INTERRUPT exits" "$ext $((ext - timer))" \
  "$(row EXTERNAL_INTERRUPT | awk '{ print $2, $4 }')"
check_contains "rectimer: preemption: the row says where the rest went" "$(row EXTERNAL_INTERRUPT)" \
  "fewer: the guest's timer expiries among them are PREEMPTION_TIMER exits (lapic_timer=preemption, SDM 25.5.1)"
run "$VMXSIM" --no-db --policy ept --cpu skylake-2019 --set lapic_timer=preemption --format json hr.bin
flat=$(printf '%s' "$out" | tr -d ' \t\n')
check_contains "rectimer: preemption: JSON says where they went" "$flat" \
  '"removed_by":"theguest'"'"'stimerexpiriesamongthemarePREEMPTION_TIMERexits'

# every exit the guest's timer: under preemption none is left, and the row says why (no silent 0)
awk '
  { pid = $0; sub(/ *\[.*/, "", pid); sub(/.*-/, "", pid) }
  / kvm_exit: / { blk[pid] = $0 ORS; ext[pid] = /EXTERNAL_INTERRUPT/; acc[pid] = 0; in_exit[pid] = 1; next }
  in_exit[pid] { blk[pid] = blk[pid] $0 ORS; if (/ kvm_apic_accept_irq: /) acc[pid] = 1
                 if (/ kvm_entry: /) { if (!ext[pid] || acc[pid]) printf "%s", blk[pid]; in_exit[pid] = 0 }; next }
  { print }' hr.txt > timers.txt
check_eq "rectimer: only timers: every EXTERNAL_INTERRUPT exit left is the guest's timer" "$timer" \
  "$(grep -c 'reason EXTERNAL_INTERRUPT' timers.txt)"
run "$VMXSIM" --no-db --policy ept --cpu skylake-2019 --set lapic_timer=preemption --input-format kvm-ftrace timers.txt
check_contains "rectimer: only timers: the row is no silent 0" "$(row EXTERNAL_INTERRUPT)" \
  "simulated 0: the guest's timer expiries among them are PREEMPTION_TIMER exits"

# 'trace-cmd record' without kvm_apic_accept_irq: the timer-vector exits cannot be told apart
grep -v kvm_apic_accept_irq hr.txt > noaccept.txt
run "$VMXSIM" --no-db --policy ept --cpu skylake-2019 --set lapic_timer=preemption --input-format kvm-ftrace \
  noaccept.txt
check_eq "rectimer: no accepts: every exit replayed as the host interrupt it was" "$ext $ext" \
  "$(row EXTERNAL_INTERRUPT | awk '{ print $2, $4 }')"
check_contains "rectimer: no accepts: how many cannot be told, and why" "$(replay_table "$out")" \
  "($tv of them undecided: at the host's timer vector, and no kvm_apic_accept_irq recorded: the host's own timer cannot be told from the guest's in a host hrtimer; replayed as the host's)"

# kvm_exit's first format ("reason NAME rip ADDR", no interruption information): no vector
sed -e 's/ rip \(0x[0-9a-f]*\) info1 .*/ rip \1/' -e 's/kvm_exit:             vcpu [0-9] /kvm_exit: /' hr.txt > old.txt
run "$VMXSIM" --db r.db --policy ept --cpu skylake-2019 --set lapic_timer=preemption --input-format kvm-ftrace old.txt
check_contains "rectimer: no vector: named undecided" "$(replay_table "$out")" \
  "($ext of them undecided: no vector recorded: the host's own interrupt cannot be told from the guest's timer"
check_eq "rectimer: no vector: no PREEMPTION_TIMER guessed" "" "$(row PREEMPTION_TIMER)"
run "$VMXSIM" report --db r.db 1
check_contains "rectimer: a stored run's report says the same" "$out" "($ext of them undecided: no vector recorded"
run "$VMXSIM" report --db r.db --format json 1
flat=$(printf '%s' "$out" | tr -d ' \t\n')
check_contains "rectimer: JSON: undecided, with how many" "$flat" "\"undecided\":[{\"count\":$ext,\"why\":\"novectorrecorded:"
"$VMXSIM" --db r.db --policy ept --cpu skylake-2019 --set lapic_timer=hrtimer --input-format kvm-ftrace old.txt > /dev/null
run "$VMXSIM" compare --db r.db 1 2
check_contains "rectimer: compare names the undecided exits" "$out" "EXTERNAL_INTERRUPT: $ext undecided: no vector recorded"
run "$VMXSIM" compare --db r.db --format json 1 2
flat=$(printf '%s' "$out" | tr -d ' \t\n')
check_contains "rectimer: compare's JSON too" "$flat" "\"undecided\":[{\"count\":$ext,\"why\":\"novectorrecorded:"
