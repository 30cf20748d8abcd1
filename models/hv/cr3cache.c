/* The CR3 cache: the scheme table and the scheme that uses no target values (see cr3cache.h). */
#include "cr3cache.h"

extern const struct cr3c_scheme cr3c_pv;

static uint64_t off_operand(const struct vcpu *v, uint64_t guest_cr3) { (void)v; return guest_cr3; }
static void off_decided(const struct vcpu *v, const struct exit_decision *d, uint64_t counters[]) {
  (void)v; (void)d; (void)counters;
}
static void off_cr3_exit(struct vcpu *v, uint64_t guest_cr3, uint64_t root_hpa) {
  (void)v; (void)guest_cr3; (void)root_hpa;
}
static bool off_root_zapped(struct vcpu *vcpus, unsigned nvcpu, uint64_t guest_cr3, uint64_t counters[]) {
  (void)vcpus; (void)nvcpu; (void)guest_cr3; (void)counters;
  return false;
}
static void off_pt_zapped(struct vcpu *vcpus, unsigned nvcpu, uint64_t counters[]) {
  (void)vcpus; (void)nvcpu; (void)counters;
}

static const struct cr3c_scheme cr3c_off = {
  "off", off_operand, off_decided, off_cr3_exit, off_root_zapped, off_pt_zapped,
};

/* Indexed by the cr3_cache knob (false, true). */
static const struct cr3c_scheme *const schemes[] = { &cr3c_off, &cr3c_pv };

const struct cr3c_scheme *cr3c_scheme_for(const struct policy *p) { return schemes[p->cr3_cache ? 1 : 0]; }
