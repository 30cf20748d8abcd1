/* xentrace: the HVM records (import_xen_rec.c): the handlers' table, the checks
** every record gets, and an HVM record of one vCPU. */
#ifndef VMXSIM_IMPORT_XEN_REC_H
#define VMXSIM_IMPORT_XEN_REC_H

#include "import_xen.h"

#include <stdio.h>

/* A handler record's event, the extra words it needs, and what it makes of them. */
typedef int (*handler_fn)(struct xen *X, unsigned v, const uint32_t *w);
struct handler { uint32_t event; unsigned words; handler_fn fn; };
extern const struct handler xen_handlers[];
extern const size_t xen_nhandlers;

HOT const struct handler *xen_handler_of(struct xen *X, uint32_t event) {
  if ((event & 0xfffff000u) != TRC_HVM_HANDLER) return NULL;
  const struct handler **slot = &X->recent[event % HANDLER_RECENT];
  if (*slot && (*slot)->event == event) return *slot;
  for (size_t i = 0; i < xen_nhandlers; i++)
    if (xen_handlers[i].event == event) return *slot = &xen_handlers[i];
  return NULL;
}

/* A handler record seen: a CR write's (32- or 64-bit form) is one of the
** kinds the metadata says the recording holds. */
HOT void xen_saw_handler(struct xen *X, uint32_t event) {
  if (event == TRC_HVM_HANDLER + 0x009 || event == TRC_HVM_HANDLER + 0x109) saw(X, SEEN_CR_WRITE);
}

/* Extra words each used record needs. */
HOT unsigned words_needed(uint32_t event, const struct handler *h) {
  switch (event) {
  case TRC_TRACE_CPU_CHANGE: case TRC_HVM_VMEXIT: case TRC_HVM_VMEXIT64: return 1;
  case TRC_LOST_RECORDS: return 4;
  }
  if ((event & TRC_SCHED_MIN_MASK) == TRC_SCHED_MIN) return 1;
  return h ? h->words : 0;
}

HOT bool is_hvm(uint32_t event, const struct handler *h) {
  return h || event == TRC_HVM_VMEXIT || event == TRC_HVM_VMEXIT64 || event == TRC_HVM_VMENTRY;
}

/* The checks every record gets: a time seen, and the words it needs. */
HOT int xen_check_record(struct xen *X, const struct xrec *r, const struct handler *h) {
  if (r->has_tsc) import_exits_saw_time(&X->exits, r->tsc);
  if (r->nextra >= words_needed(r->event, h)) return 0;
  char why[96];
  snprintf(why, sizeof why, "record 0x%08x has %u extra words, %u needed", r->event, r->nextra,
           words_needed(r->event, h));
  return import_bad(X->im, r->off, NULL, 0, why) ? -2 : -1;   /* -1: skipped, go on */
}

/* An HVM record (exit, entry, handler h) of trace vCPU v. */
int xen_hvm_record(struct xen *X, unsigned v, const struct xrec *r, const struct handler *h);
/* A lost-records marker of pCPU pcpu: counted, and warned about. */
void xen_count_lost(struct xen *X, const struct xrec *r, unsigned pcpu);

#endif
