/* xentrace: a summary's lean pass (import_xen_lean.c), and the exit state
** machine the importer runs: the lean one (opt.notes) or import_exit.h's. */
#ifndef VMXSIM_IMPORT_XEN_LEAN_H
#define VMXSIM_IMPORT_XEN_LEAN_H

#include "import_xen.h"

/* The lean state machine's steps (import_exit.h's, without its records). */
int xen_lean_begins(struct xen *X, unsigned v, bool timed, uint64_t time, unsigned reason);
int xen_lean_entry(struct xen *X, unsigned v, bool timed, uint64_t time);
int xen_lean_close(struct xen *X, unsigned v, uint64_t time);
/* Before any record of vCPU v would go out: its @init records (CR3 among them). */
HOT void xen_lean_first(struct xen *X, unsigned v) {
  struct lean_vcpu *L = &X->lv[v];
  if (L->seen) return;
  L->seen = true;
  X->im->init[v].fixed = true;
  L->cr3 = X->im->init[v].cr3;
}

/* An event the import would emit for v (a handler's, or an exit's reason's). */
HOT int xen_lean_event(struct xen *X, unsigned v, unsigned type, unsigned aux, uint64_t a, uint64_t b) {
  (void)b;                                       /* no breakdown reads it */
  xen_lean_first(X, v);
  struct lean_vcpu *L = &X->lv[v];
  L->cause_type = (uint8_t)type;
  L->cause_aux = (uint8_t)aux;
  L->cause_a = a;
  if (type == EV_CR_WRITE && aux == 3) L->cr3 = a;
  L->caused = true;
  return 0;
}

/* The lean pass over the recording buf[0..len). */
int xen_import_lean(struct xen *X, const unsigned char *buf, size_t len);
/* The full import's reading (import_xen.c): the headers first, then the records. */
int xen_import_scanned(struct xen *X, const unsigned char *buf, size_t len);

/* The state machine the import runs: the lean one (opt.notes) or import_exit.h's. */
static inline int x_entry(struct xen *X, unsigned v, bool timed, uint64_t time) {
  return X->lv ? xen_lean_entry(X, v, timed, time) : import_exit_entry(&X->exits, v, timed, time);
}
static inline int x_close(struct xen *X, unsigned v, uint64_t time) {
  return X->lv ? xen_lean_close(X, v, time) : import_exit_close(&X->exits, v, time);
}
static inline void x_forget(struct xen *X, unsigned v) {
  if (X->lv) X->lv[v].open = X->lv[v].in_guest = false;
  else import_exit_forget(&X->exits, v);
}
static inline bool x_gap_too_long(const struct xen *X, unsigned v, uint64_t time) {
  if (!X->lv) return import_exit_gap_too_long(&X->exits, v, time);
  const struct lean_vcpu *L = &X->lv[v];
  return L->in_guest && time > L->entry_time && time - L->entry_time > IMPORT_GAP_MAX;
}


#endif
