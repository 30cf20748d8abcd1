/* Debug-register switching: the scheme table and the steps every scheme uses (see dr.h). */
#include "dr.h"
#include "models/counters.h"

extern const struct dr_scheme dr_eager, dr_lazy;

/* Indexed by the dr_switch knob (enum dr_switching, models/knobs.h). */
static const struct dr_scheme *const schemes[] = {
  [DR_EAGER] = &dr_eager,
  [DR_LAZY]  = &dr_lazy,
};

#define NSCHEMES (sizeof schemes / sizeof *schemes)

const struct dr_scheme *dr_scheme_for(const struct policy *p) { return schemes[p->dr_switch]; }

const char *const *dr_scheme_names(void) {
  static const char *names[NSCHEMES + 1];
  for (size_t i = 0; i < NSCHEMES; i++) names[i] = schemes[i]->name;
  return names;
}

/* DR0-3 and DR6: the registers software switches (DR7 goes through the VMCS). */
static const unsigned switched[] = { 0, 1, 2, 3, 6 };
#define NSWITCHED 5

void dr_read_back_guest(struct vcpu *v, struct work *w, uint64_t counters[]) {
  for (unsigned i = 0; i < NSWITCHED; i++) v->guest_dr[switched[i]] = v->vmx.dr[switched[i]];
  work_add(w, PP_DR_READ, NSWITCHED);
  counters[CTR_DR_GUEST_SAVES] += NSWITCHED;
  v->guest_dr_live = false;
}

void dr_restore_host(struct vcpu *v, struct work *w, uint64_t counters[]) {
  for (unsigned i = 0; i < NSWITCHED; i++) v->vmx.dr[switched[i]] = v->host_dr[switched[i]];
  v->vmx.dr[7] = v->host_dr[7];
  work_add(w, PP_DR_WRITE, NSWITCHED + 1);
  counters[CTR_DR_HOST_RESTORES] += NSWITCHED + 1;
}

void dr_save_host(struct vcpu *v, struct work *w, uint64_t counters[]) {
  (void)v;
  work_add(w, PP_DR_READ, NSWITCHED + 1);      /* DR0-3, DR6 and DR7 */
  counters[CTR_DR_HOST_SAVES] += NSWITCHED + 1;
}

void dr_load_guest(struct vcpu *v, struct work *w, uint64_t counters[]) {
  for (unsigned i = 0; i < NSWITCHED; i++) v->vmx.dr[switched[i]] = v->guest_dr[switched[i]];
  work_add(w, PP_DR_WRITE, NSWITCHED);
  counters[CTR_DR_GUEST_LOADS] += NSWITCHED;
  v->guest_dr_live = true;
}

bool dr_guest_needs(const struct vcpu *v) {
  /* Without MOV-DR exiting the hypervisor cannot see the guest use its DRs,
  ** so it must switch them on every round trip. */
  return v->dr_wont_exit || (v->guest_dr[7] & DR7_ENABLE_MASK) || !v->pol->mov_dr_exiting;
}
