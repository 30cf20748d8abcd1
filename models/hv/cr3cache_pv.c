/* The paravirtual CR3 cache of January 2008 (see cr3cache.h).  The host keeps
** up to 4 (guest CR3 -> shadow root) pairs: the roots in CR3_TARGET_VALUE0-3,
** the guest CR3s in a per-CPU table shared with the guest, which checks it
** before every CR3 write and loads the cached root on a hit (no exit: the
** operand equals a target value).  On a miss the CR3 exit fills the next slot
** round-robin.  Zapping a cached root's shadow page clears the whole cache, on
** every vCPU (the 2008 design; a 2007 version cleared it on every guest page
** fault). */
#include "cr3cache.h"
#include "models/counters.h"

static enum vmcs_field target(unsigned slot) { return (enum vmcs_field)(VMCS_CR3_TARGET_VALUE0 + slot); }

static uint64_t pv_operand(const struct vcpu *v, uint64_t guest_cr3) {
  uint64_t count = vmcs_peek(&v->vmx.vmcs, VMCS_CR3_TARGET_COUNT);
  for (unsigned i = 0; i < count && i < 4; i++)
    if (v->cr3c_table.guest_cr3[i] == guest_cr3 && vmcs_peek(&v->vmx.vmcs, target(i)))
      return vmcs_peek(&v->vmx.vmcs, target(i));
  return guest_cr3;
}

static void pv_decided(const struct vcpu *v, const struct exit_decision *d, uint64_t counters[]) {
  (void)v;
  if (d->why == WHY_CR3_TARGET_HIT) counters[CTR_CR3_TARGET_HITS]++;
  else if (d->why == WHY_CR3_NO_TARGET) counters[CTR_CR3_TARGET_MISSES]++;
}

static void pv_cr3_exit(struct vcpu *v, uint64_t guest_cr3, uint64_t root_hpa) {
  unsigned count = (unsigned)vmcs_peek(&v->vmx.vmcs, VMCS_CR3_TARGET_COUNT);
  if (count == 0) return;
  unsigned slot = v->cr3c_table.next % (count < 4 ? count : 4);
  v->cr3c_table.next = slot + 1;
  v->cr3c_table.guest_cr3[slot] = guest_cr3;
  vmcs_write(&v->vmx.vmcs, target(slot), root_hpa);
}

static void clear_one(struct vcpu *v) {
  for (unsigned i = 0; i < 4; i++) {
    /* a slot is empty when its target value is 0: guest CR3 0 can be cached too */
    if (!v->cr3c_table.guest_cr3[i] && !vmcs_peek(&v->vmx.vmcs, target(i))) continue;
    v->cr3c_table.guest_cr3[i] = 0;
    vmcs_write(&v->vmx.vmcs, target(i), 0);
  }
  v->cr3c_table.next = 0;
}

static void pv_pt_zapped(struct vcpu *vcpus, unsigned nvcpu, uint64_t counters[]) {
  for (unsigned i = 0; i < nvcpu; i++) clear_one(&vcpus[i]);
  counters[CTR_CR3_CACHE_CLEARS]++;
}

static bool pv_root_zapped(struct vcpu *vcpus, unsigned nvcpu, uint64_t guest_cr3, uint64_t counters[]) {
  for (unsigned i = 0; i < nvcpu; i++)
    for (unsigned s = 0; s < 4; s++)
      if (vmcs_peek(&vcpus[i].vmx.vmcs, target(s)) && vcpus[i].cr3c_table.guest_cr3[s] == guest_cr3) {
        pv_pt_zapped(vcpus, nvcpu, counters);
        return true;
      }
  return false;
}

const struct cr3c_scheme cr3c_pv = {
  "pv2008", pv_operand, pv_decided, pv_cr3_exit, pv_root_zapped, pv_pt_zapped,
};
