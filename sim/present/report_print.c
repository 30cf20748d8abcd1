/* Run reports printed: the table, JSON and CSV forms of a struct report. */
#include "report_print.h"
#include "sim/base/format.h"
#include "sim/base/util.h"
#include "models/hv/vcpu.h"
#include "models/vmx/exit_reason.h"
#include "sim/config/policy.h"

#include <cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static double secs(const struct report *rep, uint64_t cycles) {
  return (double)cycles / (rep->clock_ghz * 1e9);
}
static uint64_t avg(uint64_t cycles, uint64_t count) { return count ? (cycles + count / 2) / count : 0; }

/* The MMU counters run from shadow_pages_allocated to tlb_misses_virt. */
static bool mmu_counter(const char *name) {
  int lo = -1, hi = -1, at = -1;
  for (unsigned c = 0; c < CTR_COUNT; c++) {
    if (c == CTR_SHADOW_ALLOCATED) lo = (int)c;
    if (c == CTR_TLB_MISSES_VIRT) hi = (int)c;
    if (!strcmp(counter_name(c), name)) at = (int)c;
  }
  return at >= lo && at <= hi;
}

static void print_counters(FILE *f, const struct report *rep, const char *title, bool mmu) {
  bool any = false;
  for (unsigned i = 0; i < rep->ncounters; i++) {
    if (!rep->counters[i].value || mmu_counter(rep->counters[i].name) != mmu) continue;
    if (!any) fprintf(f, "\n%s:\n", title);
    any = true;
    fprintf(f, "  %-24s %" PRIu64 "\n", rep->counters[i].name, rep->counters[i].value);
  }
}

static void print_versus(FILE *f, const struct report *rep);
static void print_sim_views(FILE *f, const struct report *rep);

static void print_table(FILE *f, const struct report *rep) {
  uint64_t total = rep->guest_cycles + rep->vmm_cycles;
  fprintf(f, "trace %s (%s, %u vCPU%s, %s-bit paging), policy %s, cpu %s (%.2f GHz)\n",
          rep->trace, rep->workload[0] ? rep->workload : "-", rep->vcpus, rep->vcpus == 1 ? "" : "s",
          rep->paging, rep->policy, rep->cpu, rep->clock_ghz);
  fprintf(f, "%" PRIu64 " events, %" PRIu64 " VM exits\n\n", rep->events, rep->total_exits);
  fprintf(f, " %-22s %10s %10s %7s %9s {%8s|%8s|%8s}\n", "VM-EXIT", "count", "secs", "pct%", "avg cyc",
          "p5", "p50", "p95");
  for (unsigned i = 0; i < rep->nrows; i++) {
    const struct report_row *r = &rep->rows[i];
    char name[40];
    snprintf(name, sizeof name, "%s%s", r->parent[0] ? "  " : "", r->name);
    fprintf(f, " %-22s %10" PRIu64 " %10.6f %6.2f%% %9" PRIu64 " {%8" PRIu64 "|%8" PRIu64 "|%8" PRIu64 "}\n",
            name, r->count, secs(rep, r->cycles), total ? 100.0 * (double)r->cycles / (double)total : 0.0,
            avg(r->cycles, r->count), r->p5, r->p50, r->p95);
  }
  if (!rep->nrows) fprintf(f, " (no VM exits)\n");
  fprintf(f, "\nTotal exits: %" PRIu64 ", hypervisor time %.6f s\n", rep->total_exits, secs(rep, rep->vmm_cycles));
  fprintf(f, "cycles: total %" PRIu64 " = guest %" PRIu64 " (%.1f%%) + hypervisor %" PRIu64 " (%.1f%%)",
          total, rep->guest_cycles, total ? 100.0 * (double)rep->guest_cycles / (double)total : 0.0,
          rep->vmm_cycles, total ? 100.0 * (double)rep->vmm_cycles / (double)total : 0.0);
  if (rep->vcpus > 1) fprintf(f, "; elapsed (busiest vCPU) %" PRIu64, rep->elapsed_cycles);
  fprintf(f, "\n");
  if (rep->marks) {
    double per = (double)rep->marks;
    fprintf(f, "per operation (%" PRIu64 " mark%s): %.3f exits, %.0f cycles, %.3f us (hypervisor %.3f us)\n",
            rep->marks, rep->marks == 1 ? "" : "s", (double)rep->total_exits / per, (double)total / per,
            secs(rep, total) * 1e6 / per, secs(rep, rep->vmm_cycles) * 1e6 / per);
  }
  print_counters(f, rep, "MMU", true);
  print_counters(f, rep, "other counters", false);
  if (report_has_measured(rep)) print_versus(f, rep);
  else if (rep->show_views && rep->nvrows) print_sim_views(f, rep);
}

/* ---- measured beside simulated ---- */

static const struct view_stat *find_vrow(const struct report *rep, uint8_t source, const struct view_stat *like) {
  for (unsigned i = 0; i < rep->nvrows; i++) {
    const struct view_stat *v = &rep->vrows[i];
    if (v->source == source && v->dim == like->dim && v->reason == like->reason && v->key == like->key) return v;
  }
  return NULL;
}

static void ratio_cell(FILE *f, uint64_t sim, uint64_t meas) {
  if (meas) fprintf(f, " %9.3f", (double)sim / (double)meas);
  else fprintf(f, " %9s", "-");
}

/* What the measured-beside-simulated table says beside a recorded reason
** whose simulated count alone would mislead (report_print.h).  The policy
** comes from the run's name, so a stored run prints the same; a name that
** cannot be resolved any more leaves only what needs no policy. */
enum reason_note report_reason_note(const struct report *rep, unsigned reason, uint64_t measured, uint64_t simulated,
                                    struct reason_note_text *out) {
  out->why = NULL;
  if (simulated && simulated >= measured) return NOTE_NONE;
  struct policy p;
  char err[512];
  bool pol = policy_from_name(&p, rep->policy, err, sizeof err) == 0;
  if (simulated) {
    out->why = pol ? timer_fewer_by(&p, reason) : NULL;
    return out->why ? NOTE_FEWER : NOTE_NONE;
  }
  if ((out->why = exit_reason_not_redecided(reason))) return NOTE_NOT_REDECIDED;
  if (pol && (out->why = ple_not_redecided(&p, measured, out->buf, sizeof out->buf))) return NOTE_NOT_REDECIDED;
  out->why = pol ? policy_removed_by(&p, reason) : NULL;
  if (!out->why && pol) out->why = timer_fewer_by(&p, reason);     /* every one of them was the guest's timer */
  return out->why ? NOTE_REMOVED : NOTE_NONE;
}

/* The note of a measured row of the reason view (none for breakdown rows). */
static enum reason_note row_note(const struct report *rep, const struct view_stat *measured,
                                 const struct view_stat *sim, struct reason_note_text *out) {
  out->why = NULL;
  if (!measured || measured->dim != VD_REASON) return NOTE_NONE;
  return report_reason_note(rep, measured->reason, measured->count, sim ? sim->count : 0, out);
}

/* Below a measured reason's row: its exits whose source the recording cannot tell. */
static void print_undecided(FILE *f, const struct report *rep, const struct view_stat *m) {
  for (unsigned i = 0; m && m->dim == VD_REASON && i < rep->nundecided; i++)
    if (rep->undecided[i].reason == m->reason)
      fprintf(f, "   (%" PRIu64 " of them undecided: %s)\n", rep->undecided[i].count, rep->undecided[i].why);
}

void report_undecided_json(cJSON *row, const struct report *rep, unsigned reason) {
  cJSON *a = NULL;
  for (unsigned i = 0; i < rep->nundecided; i++) {
    if (rep->undecided[i].reason != reason) continue;
    if (!a) a = cJSON_AddArrayToObject(row, "undecided");
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "count", (double)rep->undecided[i].count);
    cJSON_AddStringToObject(o, "why", rep->undecided[i].why);
    cJSON_AddItemToArray(a, o);
  }
}

/* Rows in the measured order, then simulated rows the recording did not have. */
static void print_versus_dims(FILE *f, const struct report *rep, bool reasons) {
  for (int pass = 0; pass < 2; pass++)
    for (unsigned i = 0; i < rep->nvrows; i++) {
      const struct view_stat *v = &rep->vrows[i];
      bool is_reason_view = v->dim < VD_CR3;
      if (is_reason_view != reasons || v->source != (pass ? VS_SIMULATED : VS_MEASURED)) continue;
      const struct view_stat *m = pass ? NULL : v, *sv = find_vrow(rep, VS_SIMULATED, v);
      if (pass && find_vrow(rep, VS_MEASURED, v)) continue;
      char name[48];
      snprintf(name, sizeof name, "%s%s", v->dim > VD_REASON && v->dim < VD_CR3 ? "  " : "", v->name);
      uint64_t mc = m ? m->count : 0, ma = m ? m->avg : 0, sc = sv ? sv->count : 0;
      uint64_t sa = sv && sv->count ? (sv->cycles + sv->count / 2) / sv->count : 0;
      struct reason_note_text note;
      enum reason_note kind = row_note(rep, m, sv, &note);
      if (kind == NOTE_NOT_REDECIDED || kind == NOTE_REMOVED) {
        fprintf(f, " %-24s %9" PRIu64 " %9" PRIu64 "  %s: %s\n", name, mc, ma,
                kind == NOTE_REMOVED ? "simulated 0" : "not re-decided", note.why);
        print_undecided(f, rep, m);
        continue;
      }
      fprintf(f, " %-24s %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64, name, mc, ma, sc, sa);
      ratio_cell(f, sc, mc);
      ratio_cell(f, sa, ma);
      if (kind == NOTE_FEWER) fprintf(f, "  fewer: %s", note.why);
      fprintf(f, "\n");
      print_undecided(f, rep, m);
    }
}

static void print_versus(FILE *f, const struct report *rep) {
  fprintf(f, "\nmeasured (the recording) beside simulated (policy %s, cpu %s):\n", rep->policy, rep->cpu);
  fprintf(f, " %-24s %9s %9s %9s %9s %9s %9s\n", "VM-EXIT", "measured", "avg cyc", "simulated", "avg cyc",
          "count s/m", "avg s/m");
  print_versus_dims(f, rep, true);
  if (rep->unmeasured_exits)
    fprintf(f, " (%" PRIu64 " recorded exit%s no measured time: the recording ended, or lost its records, before "
            "%s VM entry; simulated, not measured)\n", rep->unmeasured_exits,
            rep->unmeasured_exits == 1 ? " has" : "s have", rep->unmeasured_exits == 1 ? "its" : "their");
  fprintf(f, " by address space and vCPU:\n");
  print_versus_dims(f, rep, false);
}

/* The simulated views alone (run --views on a trace without measurements). */
static void print_sim_views(FILE *f, const struct report *rep) {
  fprintf(f, "\nviews of the simulated exits:\n");
  fprintf(f, " %-24s %9s %9s %9s {%8s|%8s|%8s} %9s\n", "VM-EXIT", "count", "cycles", "avg cyc", "p5", "p50", "p95", "max");
  for (unsigned i = 0; i < rep->nvrows; i++) {
    const struct view_stat *v = &rep->vrows[i];
    if (v->source != VS_SIMULATED) continue;
    char name[48];
    snprintf(name, sizeof name, "%s%s", v->dim > VD_REASON && v->dim < VD_CR3 ? "  " : "", v->name);
    fprintf(f, " %-24s %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " {%8" PRIu64 "|%8" PRIu64 "|%8" PRIu64 "} %9" PRIu64 "\n",
            name, v->count, v->cycles, v->count ? (v->cycles + v->count / 2) / v->count : 0, v->p5, v->p50, v->p95, v->max);
  }
}

static cJSON *vrow_json(const struct view_stat *v) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "count", (double)v->count);
  cJSON_AddNumberToObject(o, "cycles", (double)v->cycles);
  cJSON_AddNumberToObject(o, "avg", (double)v->avg);
  cJSON_AddNumberToObject(o, "min", (double)v->min);
  cJSON_AddNumberToObject(o, "p5", (double)v->p5);
  cJSON_AddNumberToObject(o, "p50", (double)v->p50);
  cJSON_AddNumberToObject(o, "p95", (double)v->p95);
  cJSON_AddNumberToObject(o, "max", (double)v->max);
  cJSON_AddNumberToObject(o, "stddev", round(v->stddev * 10) / 10);
  return o;
}

/* {"exits": {...}, "breakdown": {REASON: {...}}, "cr3": {...}, "vcpu": {...}} of one source. */
static cJSON *vrows_json(const struct report *rep, uint8_t source) {
  cJSON *o = cJSON_CreateObject();
  cJSON *exits = cJSON_AddObjectToObject(o, "exits"), *bd = cJSON_AddObjectToObject(o, "breakdown");
  cJSON *cr3 = cJSON_AddObjectToObject(o, "cr3"), *vcpu = cJSON_AddObjectToObject(o, "vcpu");
  for (unsigned i = 0; i < rep->nvrows; i++) {
    const struct view_stat *v = &rep->vrows[i];
    if (v->source != source) continue;
    cJSON *into = v->dim == VD_REASON ? exits : v->dim == VD_CR3 ? cr3 : v->dim == VD_VCPU ? vcpu : NULL;
    if (!into && !(into = cJSON_GetObjectItemCaseSensitive(bd, v->parent))) into = cJSON_AddObjectToObject(bd, v->parent);
    cJSON *row = vrow_json(v);
    struct reason_note_text note;
    enum reason_note kind = source == VS_MEASURED ? row_note(rep, v, find_vrow(rep, VS_SIMULATED, v), &note) : NOTE_NONE;
    if (kind != NOTE_NONE) cJSON_AddStringToObject(row, report_reason_note_key(kind), note.why);
    if (source == VS_MEASURED && v->dim == VD_REASON) report_undecided_json(row, rep, v->reason);
    cJSON_AddItemToObject(into, v->name, row);
  }
  return o;
}

static cJSON *row_json(const struct report_row *r) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "count", (double)r->count);
  cJSON_AddNumberToObject(o, "cycles", (double)r->cycles);
  cJSON_AddNumberToObject(o, "avg", (double)avg(r->cycles, r->count));
  cJSON_AddNumberToObject(o, "min", (double)r->min);
  cJSON_AddNumberToObject(o, "p5", (double)r->p5);
  cJSON_AddNumberToObject(o, "p50", (double)r->p50);
  cJSON_AddNumberToObject(o, "p95", (double)r->p95);
  cJSON_AddNumberToObject(o, "max", (double)r->max);
  return o;
}

void run_identity_json(cJSON *obj, const struct run_identity *id) {
  cJSON_AddStringToObject(obj, "trace", id->trace);
  if (id->trace_hash) cJSON_AddStringToObject(obj, "trace_hash", id->trace_hash);
  cJSON_AddStringToObject(obj, "workload", id->workload);
  cJSON_AddStringToObject(obj, "policy", id->policy);
  cJSON_AddStringToObject(obj, "cpu", id->cpu);
}

static cJSON *report_object(const struct report *rep) {
  cJSON *o = cJSON_CreateObject();
  run_identity_json(o, &(struct run_identity){ rep->trace, NULL, rep->workload, rep->policy, rep->cpu });
  json_add_number(o, "clock_ghz", rep->clock_ghz);
  cJSON_AddNumberToObject(o, "vcpus", rep->vcpus);
  cJSON_AddNumberToObject(o, "events", (double)rep->events);
  cJSON_AddNumberToObject(o, "total_exits", (double)rep->total_exits);
  cJSON *exits = cJSON_AddObjectToObject(o, "exits");
  cJSON *breakdown = cJSON_AddObjectToObject(o, "breakdown");
  for (unsigned i = 0; i < rep->nrows; i++) {
    const struct report_row *r = &rep->rows[i];
    if (!r->parent[0]) { cJSON_AddItemToObject(exits, r->name, row_json(r)); continue; }
    cJSON *sub = cJSON_GetObjectItemCaseSensitive(breakdown, r->parent);
    if (!sub) sub = cJSON_AddObjectToObject(breakdown, r->parent);
    cJSON_AddItemToObject(sub, r->name, row_json(r));
  }
  cJSON *cy = cJSON_AddObjectToObject(o, "cycles");
  cJSON_AddNumberToObject(cy, "total", (double)(rep->guest_cycles + rep->vmm_cycles));
  cJSON_AddNumberToObject(cy, "guest", (double)rep->guest_cycles);
  cJSON_AddNumberToObject(cy, "vmm", (double)rep->vmm_cycles);
  cJSON_AddNumberToObject(cy, "elapsed", (double)rep->elapsed_cycles);
  if (rep->marks) {
    double per = (double)rep->marks, total = (double)(rep->guest_cycles + rep->vmm_cycles);
    cJSON *op = cJSON_AddObjectToObject(o, "per_op");
    cJSON_AddNumberToObject(op, "marks", per);
    json_add_number(op, "exits", (double)rep->total_exits / per);
    json_add_number(op, "cycles", total / per);
    json_add_number(op, "us", total / per / (rep->clock_ghz * 1e3));
  }
  cJSON *ctr = cJSON_AddObjectToObject(o, "counters");
  for (unsigned i = 0; i < rep->ncounters; i++)
    cJSON_AddNumberToObject(ctr, rep->counters[i].name, (double)rep->counters[i].value);
  if (report_has_measured(rep)) {
    cJSON_AddItemToObject(o, "measured", vrows_json(rep, VS_MEASURED));
    json_add_number(o, "unmeasured_exits", (double)rep->unmeasured_exits);
  }
  if (rep->nvrows) cJSON_AddItemToObject(o, "views", vrows_json(rep, VS_SIMULATED));
  return o;
}

/* Every row starts with the run's identity, so that the CSVs of several runs
** concatenate into one table (`tail -n +2` drops the later headers). */
static void csv_identity(FILE *f, const struct report *rep) {
  const char *id[] = { rep->trace, rep->workload, rep->policy, rep->cpu };
  for (size_t i = 0; i < sizeof id / sizeof *id; i++) {
    csv_field(f, id[i]);
    fputc(',', f);
  }
}

#define CSV_HEADER "trace,workload,policy,cpu,section,name,parent,count,cycles,avg,min,p5,p50,p95,max\n"

static void print_csv_rows(FILE *f, const struct report *rep) {
  for (unsigned i = 0; i < rep->nrows; i++) {
    const struct report_row *r = &rep->rows[i];
    csv_identity(f, rep);
    fprintf(f, "%s,%s,%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n",
            r->parent[0] ? "breakdown" : "exit", r->name, r->parent, r->count, r->cycles,
            avg(r->cycles, r->count), r->min, r->p5, r->p50, r->p95, r->max);
  }
  csv_identity(f, rep);
  fprintf(f, "total,exits,,%" PRIu64 ",%" PRIu64 ",,,,,,\n", rep->total_exits, rep->vmm_cycles);
  csv_identity(f, rep);
  fprintf(f, "total,guest,,,%" PRIu64 ",,,,,,\n", rep->guest_cycles);
  csv_identity(f, rep);
  fprintf(f, "total,events,,%" PRIu64 ",,,,,,,\n", rep->events);
  for (unsigned i = 0; i < rep->ncounters; i++) {
    csv_identity(f, rep);
    fprintf(f, "counter,%s,,%" PRIu64 ",,,,,,,\n", rep->counters[i].name, rep->counters[i].value);
  }
  for (unsigned i = 0; i < rep->nvrows; i++) {
    const struct view_stat *v = &rep->vrows[i];
    csv_identity(f, rep);
    fprintf(f, "%s %s,%s,%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n",
            v->source == VS_MEASURED ? "measured" : "simulated", view_dim_name(v->dim), v->name, v->parent,
            v->count, v->cycles, v->avg, v->min, v->p5, v->p50, v->p95, v->max);
  }
}

static void print_json(FILE *f, cJSON *o) {
  char *s = cJSON_Print(o);
  fprintf(f, "%s\n", s);
  free(s);
  cJSON_Delete(o);
}

void report_print(FILE *f, const struct report *rep, enum report_format fmt) {
  if (fmt == FORMAT_JSON) {
    print_json(f, report_object(rep));
  } else if (fmt == FORMAT_CSV) {
    fputs(CSV_HEADER, f);
    print_csv_rows(f, rep);
  } else {
    print_table(f, rep);
  }
}

void report_print_runs(FILE *f, const struct report *reps, unsigned n, enum report_format fmt) {
  if (n == 1) {
    report_print(f, reps, fmt);
  } else if (fmt == FORMAT_JSON) {
    cJSON *a = cJSON_CreateArray();
    for (unsigned i = 0; i < n; i++) cJSON_AddItemToArray(a, report_object(&reps[i]));
    print_json(f, a);
  } else if (fmt == FORMAT_CSV) {            /* every row names its run already */
    fputs(CSV_HEADER, f);
    for (unsigned i = 0; i < n; i++) print_csv_rows(f, &reps[i]);
  } else {
    for (unsigned i = 0; i < n; i++) {
      if (i) fputc('\n', f);
      print_table(f, &reps[i]);
    }
  }
}
