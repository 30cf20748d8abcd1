/* The printer of `vmxsim trace dump`: a record stream as text lines, with
** consecutive @init records merged and `vcpu N` only where the vCPU changes.
** Each line is trace_text_format()'s (trace_text.c); this file only lays the
** lines out, so it needs no more than the public trace_text.h. */
#include "trace_text.h"

#include <string.h>

void trace_text_printer_init(struct trace_text_printer *pr, FILE *out) {
  memset(pr, 0, sizeof *pr);
  pr->out = out;
  pr->init_vcpu = -1;
}

void trace_text_print_header(struct trace_text_printer *pr, const struct trace_header *h) {
  if (h->workload[0]) fprintf(pr->out, "@workload %s\n", h->workload);
  fprintf(pr->out, "@paging %s\n", paging_name(h->paging) ? paging_name(h->paging) : "64");
  fprintf(pr->out, "@vcpus %u\n", h->vcpu_count);
  /* One @meta line per metadata line; the parser joins them back with '\n'. */
  for (const char *s = h->metadata; s && *s;) {
    size_t n = strcspn(s, "\n");
    fprintf(pr->out, n ? "@meta %.*s\n" : "@meta\n", (int)n, s);
    s += n;
    if (*s == '\n' && *++s == 0) fputs("@meta\n", pr->out);   /* keep a trailing newline */
  }
}

void trace_text_print_end(struct trace_text_printer *pr) {
  if (pr->init_vcpu < 0) return;
  fprintf(pr->out, "%s\n", pr->init);
  pr->init_vcpu = -1;
  pr->init_crs = 0;
}

/* Adds a canonical @init record to the pending @init line; false if it has no @init form. */
static bool print_init(struct trace_text_printer *pr, const struct trace_event *ev) {
  char one[64];
  trace_text_format(ev, one, sizeof one);
  if (strncmp(one, "@init ", 6) != 0) return false;
  unsigned bit = 1u << ev->aux;
  if (pr->init_vcpu >= 0 && ((unsigned)pr->init_vcpu != ev->vcpu || (pr->init_crs & bit)))
    trace_text_print_end(pr);
  if (pr->init_vcpu < 0) {
    if (ev->vcpu == pr->vcpu) snprintf(pr->init, sizeof pr->init, "@init");
    else snprintf(pr->init, sizeof pr->init, "@init vcpu=%u", ev->vcpu);
    pr->init_vcpu = ev->vcpu;
  }
  size_t len = strlen(pr->init);
  snprintf(pr->init + len, sizeof pr->init - len, "%s", one + 5);
  pr->init_crs |= bit;
  return true;
}

void trace_text_print(struct trace_text_printer *pr, const struct trace_event *ev) {
  if (ev->type == EV_INIT && print_init(pr, ev)) return;
  trace_text_print_end(pr);
  if (ev->vcpu != pr->vcpu) {
    fprintf(pr->out, "vcpu %u\n", ev->vcpu);
    pr->vcpu = ev->vcpu;
  }
  char line[128];
  trace_text_format(ev, line, sizeof line);
  fprintf(pr->out, "%s\n", line);
}
