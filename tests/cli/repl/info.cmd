# info: the VMCS (all fields, by name, by encoding), registers, CR3 targets, shadow MMU, TLB.
info vmcs
until 10
event
info vmcs CR4_READ_SHADOW
info vmcs guest_cr4
info vmcs 0x6804
info regs
until 12
info regs
info shadow
info tlb
policy cr3cache
set cr3_target_count 2
set
until 16
event
info cr3targets
until 24
info cr3targets
info regs
policy ept+cr4mask
until 10
event
info regs
info shadow
# what the last of event 8's shadow page faults left in the VMCS (SDM 27.2.2): vector 14, a hardware
# exception with its error code (6: a user write to a not-present page), the faulting address
policy shadowcache
until 9
event
info vmcs VM_EXIT_INTR_INFO
info vmcs VM_EXIT_INTR_ERROR_CODE
info vmcs EXIT_QUALIFICATION
