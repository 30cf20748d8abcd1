/* What a recording holds against what its format's results need: the events
** seen (and, where the recording says so, recorded), the recorder's own
** warnings about lost data, and the results a missing event takes away.  The
** importers only report what they see (import_saw, import_recorded,
** import_recorder_warning); import_coverage compares, fills the metadata
** member "coverage" and leaves warnings for the front end to print.  An
** incomplete recording is still imported: the warnings say what it lacks. */
#include "import.h"
#include "sim/core/util.h"

#include <cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* One event a format's results rely on. */
struct need {
  const char *event;         /* as the recording names it */
  const char *gives;         /* what it becomes in the trace */
  const char *without;       /* what a replay lacks without it; NULL: only noted in the metadata */
};

/* perf script: the tracepoints workloads/record/record.sh records. */
static const struct need perf_needs[] = {
  { "sched:sched_switch", "context switches (CR3 writes)", "no context switches: no CR3 exits at all" },
  { "raw_syscalls:sys_enter", "system calls (syscall events)",
    "no system calls: the CR3 switches of PTI or Xen-PV kernels on entry are not replayed" },
  { "raw_syscalls:sys_exit", "system call returns (sysret events)",
    "no system call returns: the CR3 switches of PTI or Xen-PV kernels on return are not replayed" },
  { "exceptions:page_fault_user", "user page faults (touch events)",
    "no user page faults: replays show no shadow page faults, and no shadow-MMU cost, for user memory" },
  { "exceptions:page_fault_kernel", "kernel page faults (touch events)",
    "no kernel page faults: replays show no shadow page faults for kernel memory" },
  { "tlb:tlb_flush", "TLB flushes outside context switches (CR3 reloads)",
    "no TLB flushes: CR3 reloads outside context switches are not replayed" },
  { "sched:sched_process_fork", "process creation (which tasks share an address space)", NULL },
};

/* KVM ftrace: exits, entries and the detail events that give exits their operands. */
static const struct need kvm_needs[] = {
  { "kvm_exit", "VM exits", "no VM exits" },
  { "kvm_entry", "VM entries (guest time between exits: run cycles)",
    "no VM entries: the guest's time between exits is not replayed (no run cycles)" },
  { "kvm_cr", "control-register accesses (the register and value of CR_ACCESS exits)",
    "no kvm_cr: CR_ACCESS exits lose which register was written and with what value" },
  { "kvm_page_fault", "page faults behind EXCEPTION_NMI and EPT_VIOLATION exits (touch events)",
    "no kvm_page_fault: page-fault exits carry no address, so replays show no shadow-MMU work" },
  { "kvm_msr", "MSR accesses (rdmsr, wrmsr operands)", NULL },
  { "kvm_cpuid", "CPUID leaves", NULL },
  { "kvm_pio", "port I/O (port and size)", NULL },
  { "kvm_hypercall", "hypercall numbers", NULL },
};

/* xentrace: the HVM records import_xen.c reads. */
static const struct need xen_needs[] = {
  { "HVM VMEXIT", "VM exits", "no VM exits" },
  { "HVM VMENTRY", "VM entries (guest time between exits: run cycles)",
    "no VM entries: the guest's time between exits is not replayed (no run cycles)" },
  { "HVM CR_WRITE", "control-register writes (register and value)", NULL },
};

static const struct need *needs_of(const char *format, size_t *n) {
  if (!strcmp(format, "perf-script")) { *n = sizeof perf_needs / sizeof *perf_needs; return perf_needs; }
  if (!strcmp(format, "kvm-ftrace")) { *n = sizeof kvm_needs / sizeof *kvm_needs; return kvm_needs; }
  if (!strcmp(format, "xentrace")) { *n = sizeof xen_needs / sizeof *xen_needs; return xen_needs; }
  *n = 0;
  return NULL;
}

void import_saw(struct import *im, const char *event, size_t len) { import_tally_name(&im->seen, event, len); }

void import_recorded(struct import *im, const char *event, size_t len) { import_tally_name(&im->recorded, event, len); }

void import_recorder_warning(struct import *im, const char *text, size_t len) {
  if (im->nrecorder_warnings == IMPORT_RECORDER_WARNINGS) return;
  char *w = im->recorder_warnings[im->nrecorder_warnings++];
  size_t k = len < IMPORT_TEXT_MAX ? len : IMPORT_TEXT_MAX;
  for (size_t i = 0; i < k; i++) w[i] = (unsigned char)text[i] < 0x20 ? ' ' : text[i];
  w[k] = 0;
}

/* The count of a named key (names are kept as first seen). */
static uint64_t count_of(const struct import_tally *t, const char *name) {
  for (unsigned i = 0; i < t->n; i++)
    if ((t->key[i] & IMPORT_TALLY_NAMED) && !strcmp(t->name[i], name)) return t->count[i];
  return 0;
}

/* Appends one warning line (without the "vmxsim: " prefix) to im->warnings. */
static void warn(struct import *im, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(struct import *im, const char *fmt, ...) {
  size_t used = strlen(im->warnings);
  if (used + 2 >= sizeof im->warnings) return;
  if (used) im->warnings[used++] = '\n';
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(im->warnings + used, sizeof im->warnings - used, fmt, ap);
  va_end(ap);
}

unsigned import_coverage(struct import *im, const char *format) {
  size_t nneeds;
  const struct need *needs = needs_of(format, &nneeds);
  cJSON *cov = cJSON_AddObjectToObject(im->meta, "coverage");
  import_tally_json(cov, "seen", &im->seen, NULL);
  if (im->recorded.n) {
    cJSON *rec = cJSON_AddArrayToObject(cov, "recorded");
    for (unsigned i = 0; i < im->recorded.n; i++) cJSON_AddItemToArray(rec, cJSON_CreateString(im->recorded.name[i]));
  }
  cJSON *missing = cJSON_AddArrayToObject(cov, "missing");
  unsigned nwarn = 0;
  im->warnings[0] = 0;
  for (size_t i = 0; i < nneeds; i++) {
    if (count_of(&im->seen, needs[i].event)) continue;
    /* perf's header lists what was recorded: recorded but absent means it never happened */
    bool recorded = count_of(&im->recorded, needs[i].event) > 0;
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "event", needs[i].event);
    cJSON_AddStringToObject(m, "needed_for", needs[i].gives);
    cJSON_AddStringToObject(m, "why", im->recorded.n ? (recorded ? "recorded, none occurred" : "not recorded")
                                                    : "none in the input");
    cJSON_AddItemToArray(missing, m);
    if (!needs[i].without) continue;
    warn(im, "%s: no %s events (%s): %s", im->opt.input, needs[i].event,
         im->recorded.n ? (recorded ? "recorded, but none occurred" : "not recorded") : "not recorded?",
         needs[i].without);
    nwarn++;
  }
  uint64_t lost = count_of(&im->skipped_names, "lost events");
  cJSON *rw = cJSON_AddArrayToObject(cov, "recorder_warnings");
  for (unsigned i = 0; i < im->nrecorder_warnings; i++) {
    cJSON_AddItemToArray(rw, cJSON_CreateString(im->recorder_warnings[i]));
    warn(im, "%s: the recording lost data: '%s'", im->opt.input, im->recorder_warnings[i]);
    nwarn++;
  }
  if (lost) {
    cJSON_AddNumberToObject(cov, "lost_event_lines", (double)lost);
    warn(im, "%s: the recording lost events (%llu 'LOST EVENTS' lines): the trace has gaps", im->opt.input,
         (unsigned long long)lost);
    nwarn++;
  }
  if (nwarn) {
    char seen[400] = "";
    size_t used = 0;
    for (unsigned i = 0; i < im->seen.n && used < sizeof seen; i++)
      used += (size_t)snprintf(seen + used, sizeof seen - used, "%s%s %llu", i ? ", " : "", im->seen.name[i],
                               (unsigned long long)im->seen.count[i]);
    warn(im, "%s: events seen: %s (the trace metadata's \"coverage\" lists what is missing)", im->opt.input,
         used ? seen : "none");
  }
  return nwarn;
}
