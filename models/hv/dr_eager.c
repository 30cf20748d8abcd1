/* Eager debug-register switching (KVM 2007-2009, vmx.c vmx_save_host_state and
** its callers): the host's DR0-3, DR6 and DR7 are saved before every VM entry
** and restored after every VM exit, whether anyone uses them or not. */
#include "dr.h"

static void after_exit(struct vcpu *v, struct work *w, uint64_t counters[]) {
  if (v->guest_dr_live) dr_read_back_guest(v, w, counters);
  dr_restore_host(v, w, counters);
}

static void before_entry(struct vcpu *v, struct work *w, uint64_t counters[]) {
  dr_save_host(v, w, counters);
  if (dr_guest_needs(v)) dr_load_guest(v, w, counters);
}

const struct dr_scheme dr_eager = { "eager", after_exit, before_entry, NULL };
