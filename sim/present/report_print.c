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

/* Why a measured reason's row has no simulated exits to show: vmxsim never
** decides exits of that reason (exit_reason_not_redecided), so a 0 there
** would pass for a replay's answer.  NULL for breakdown rows and for reasons
** the replay decided, 0 times included. */
static const char *not_redecided(const struct view_stat *measured, const struct view_stat *sim) {
  if (!measured || measured->dim != VD_REASON || (sim && sim->count)) return NULL;
  return exit_reason_not_redecided(measured->reason);
}

/* Why a measured reason's row has no simulated exits although the replay
** decides them: the run's policy removed them or replays them as another
** reason (policy_removed_by).  The policy comes from the run's name, so a
** stored run prints the same; NULL when it says nothing or cannot be
** resolved any more. */
static const char *removed_by(const struct report *rep, const struct view_stat *measured, const struct view_stat *sim) {
  if (!measured || measured->dim != VD_REASON || (sim && sim->count)) return NULL;
  struct policy p;
  char err[512];
  if (policy_from_name(&p, rep->policy, err, sizeof err)) return NULL;
  return policy_removed_by(&p, measured->reason);
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
      const char *why = not_redecided(m, sv);
      if (why) {
        fprintf(f, " %-24s %9" PRIu64 " %9" PRIu64 "  not re-decided: %s\n", name, mc, ma, why);
        continue;
      }
      const char *removed = removed_by(rep, m, sv);
      if (removed) {
        fprintf(f, " %-24s %9" PRIu64 " %9" PRIu64 "  simulated 0: %s\n", name, mc, ma, removed);
        continue;
      }
      fprintf(f, " %-24s %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64, name, mc, ma, sc, sa);
      ratio_cell(f, sc, mc);
      ratio_cell(f, sa, ma);
      fprintf(f, "\n");
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
    const char *why = source == VS_MEASURED ? not_redecided(v, find_vrow(rep, VS_SIMULATED, v)) : NULL;
    if (why) cJSON_AddStringToObject(row, "not_redecided", why);
    const char *removed = source == VS_MEASURED && !why ? removed_by(rep, v, find_vrow(rep, VS_SIMULATED, v)) : NULL;
    if (removed) cJSON_AddStringToObject(row, "removed_by", removed);
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
