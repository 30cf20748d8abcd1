/* `vmxsim calibrate`: a CPU profile fitted to a recording's measured exit costs (sim/cli/calibrate.h). */
#include "commands.h"
#include "options.h"
#include "calibrate.h"
#include "sim/base/outfile.h"
#include "sim/config/profile.h"
#include "sim/base/util.h"

#include <cJSON.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SETS 64

static const char calibrate_usage[] =
  "usage: vmxsim calibrate RECORDING --cpu BASE -o PROFILE.json [--policy P] [--set K=V]...\n"
  "                        [--min-samples N] [--name NAME] [--skip-bad] [--domain D]\n"
  "\n"
  "Fits a CPU cost profile to your host from the exit costs a recording measured:\n"
  "RECORDING is a KVM or Xen recording of that host (trace-cmd's trace.dat, KVM ftrace\n"
  "text, xentrace), or a trace imported from one.  It is replayed under P, the policy the host\n"
  "ran, on the BASE profile; then per exit reason (and per CR and DR breakdown row) the\n"
  "handler cost becomes the one that makes the simulated average equal the measured one.\n"
  "With enough CPUID exits (the lightest exit, as kvm-unit-tests' vmexit test uses it)\n"
  "the hardware round trip is fitted first.  Every fitted value says 'measured', the\n"
  "recording's file hash and date, the sample count and spread; a value with fewer than\n"
  "--min-samples exits keeps the base profile's value and says so.  PROFILE.json then\n"
  "works wherever a profile name does: vmxsim --cpu PROFILE.json --policy X RECORDING\n"
  "answers what policy X would cost on that host.\n"
  "\n"
  "  -c, --cpu BASE        the profile to start from (name or path; required)\n"
  "  -o, --output FILE     the profile to write (required)\n"
  "  -p, --policy P        the recording host's policy (default ept)\n"
  "  -s, --set K=V         override one knob of P\n"
  "      --min-samples N   measured exits a value needs (default 20)\n"
  "      --name NAME       the profile's name (default: FILE's base name)\n"
  RECORDING_SKIP_BAD_USAGE
  "  -d, --domain D        a xentrace recording: replay Xen domain D's vCPUs only, as\n"
  "                        run does.  A recording of one guest domain replays that\n"
  "                        guest (dom0's exits apart: --domain 0 replays them); one of\n"
  "                        several guest domains needs --domain (the message lists\n"
  "                        them); a trace imported from one must hold one domain\n"
  "                        (import --domain D)\n"
  "\n"
  "example:\n"
  "  vmxsim import xentrace xen.bin -o xen.trace\n"
  "  vmxsim calibrate xen.trace --cpu skylake-xen-2018 --policy shadowcache -o myhost.json\n"
  "  vmxsim --cpu myhost.json --policy ept xen.trace\n";

struct calibrate_args {
  struct calibrate_opts c;
  const char *output;
  char *sets[MAX_SETS];
  char name[64];
  struct recording_opts rec;   /* --skip-bad */
  int domain;                  /* --domain: the Xen domain replayed; -1: the recording's one guest */
};

static int parse_calibrate_args(int argc, char **argv, struct calibrate_args *a) {
  static const struct option longopts[] = {
    { "cpu", required_argument, 0, 'c' }, { "output", required_argument, 0, 'o' },
    { "policy", required_argument, 0, 'p' }, { "set", required_argument, 0, 's' },
    { "min-samples", required_argument, 0, 'm' }, { "name", required_argument, 0, 'n' },
    { "skip-bad", no_argument, 0, 'B' }, { "domain", required_argument, 0, 'd' },
    { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
  memset(a, 0, sizeof *a);
  a->c.policy = "ept";
  a->c.min_samples = CALIBRATE_MIN_SAMPLES;
  a->domain = -1;
  a->c.sets = a->sets;
  int ch;
  optind = 1;
  opterr = 0;
  while ((ch = getopt_long(argc, argv, "c:o:p:s:d:h", longopts, NULL)) != -1) {
    switch (ch) {
    case 'c': a->c.base = optarg; break;
    case 'o': a->output = optarg; break;
    case 'p': a->c.policy = optarg; break;
    case 's':
      if (a->c.nsets == MAX_SETS) { errorf("too many --set options (max %d)", MAX_SETS); return EXIT_USAGE; }
      a->sets[a->c.nsets++] = optarg;
      break;
    case 'm': if (option_unsigned("--min-samples", optarg, &a->c.min_samples)) return EXIT_USAGE; break;
    case 'n': a->c.name = optarg; break;
    case 'B': a->rec.skip_bad = true; break;
    case 'd': if (option_domain(optarg, &a->domain)) return EXIT_USAGE; break;
    case 'h': fputs(calibrate_usage, stdout); return -1;
    default:
      errorf("%s: unknown option or missing argument; see 'vmxsim calibrate --help'", argv[optind - 1]);
      return EXIT_USAGE;
    }
  }
  if (optind != argc - 1) {
    errorf("calibrate: %s; see 'vmxsim calibrate --help'", optind >= argc ? "no recording given" : "one recording expected");
    return EXIT_USAGE;
  }
  a->c.recording = argv[optind];
  if (!a->c.base) { errorf("calibrate: --cpu BASE is required (the profile to start from; 'vmxsim cpus' lists them)"); return EXIT_USAGE; }
  if (!a->output) { errorf("calibrate: -o PROFILE.json is required"); return EXIT_USAGE; }
  if (!a->c.name) {                           /* the file's base name without .json */
    const char *b = strrchr(a->output, '/');
    snprintf(a->name, sizeof a->name, "%s", b ? b + 1 : a->output);
    char *dot = strstr(a->name, ".json");
    if (dot && dot != a->name) *dot = 0;
    a->c.name = a->name;
  }
  return EXIT_OK;
}

/* A round trip fitted at under half the base profile's is below what the
** hardware transitions alone take on any processor profiled: the recording's
** spans most likely begin and end inside the host (xentrace's VMEXIT and
** VMENTRY records, KVM's kvm_exit and kvm_entry tracepoints are written there),
** so part of each transition lies outside what was measured. */
static void warn_short_roundtrip(const struct calibrate_result *r) {
  for (unsigned i = 0; i < r->nfits; i++) {
    const struct calibrate_fit *f = &r->fits[i];
    if (strcmp(f->param, "vm_roundtrip") || !f->fitted || 2 * f->value >= f->base) continue;
    fprintf(stderr, "vmxsim: calibrate: the fitted round trip, %" PRIu64 " cycles, is under half the base "
            "profile's %" PRIu64 ": the recording's exit spans probably start and end inside the host (as xentrace's "
            "and KVM's tracepoints do), so part of each hardware transition is outside them; the profile reproduces "
            "the exits as that tracer measured them, and the round trip it gives is no hardware figure\n",
            f->value, f->base);
  }
}

/* Measured exits the replay under the policy never took: no cost of theirs was fitted. */
static void warn_unmatched(const struct calibrate_args *a, const struct calibrate_result *r) {
  for (unsigned i = 0; i < r->nunmatched; i++)
    fprintf(stderr, "vmxsim: warning: calibrate: %" PRIu64 " measured %s exits have no simulated counterpart under "
            "policy %s, so no cost of theirs is fitted (is %s the policy the host ran? 'vmxsim summary' shows what "
            "the recording holds)\n", r->unmatched[i].count, exit_reason_name(r->unmatched[i].reason),
            a->c.policy, a->c.policy);
}

static void print_fits(const struct calibrate_args *a, const struct calibrate_result *r) {
  printf("profile %s fitted to %s (xxh64 %s, %s) under policy %s, from %s:\n\n", a->c.name,
         a->c.source ? a->c.source : a->c.recording,
         r->hash, r->date, a->c.policy, a->c.base);
  printf(" %-34s %8s %8s %9s %9s %9s  %s\n", "parameter", "base", "fitted", "exits", "meas.avg", "stddev", "");
  for (unsigned i = 0; i < r->nfits; i++) {
    const struct calibrate_fit *f = &r->fits[i];
    printf(" %-34s %8" PRIu64 " %8" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9.0f  %s\n", f->param, f->base, f->value,
           f->samples, f->measured_avg, f->stddev,
           !f->fitted ? "kept: too few exits" : f->clamped ? "measured (clamped at 0)" : "measured");
  }
  printf("\nwritten to %s; use it as --cpu %s\n", a->output, a->output);
  warn_short_roundtrip(r);
  warn_unmatched(a, r);
}

int cmd_calibrate(int argc, char **argv) {
  struct calibrate_args a;
  int rc = parse_calibrate_args(argc, argv, &a);
  if (rc) return rc < 0 ? EXIT_OK : rc;
  char *imported = NULL, *scratch = NULL;
  recording_domain(a.domain, true);               /* a replay, as run's: one domain */
  if ((rc = recording_import(a.c.recording, &a.rec, &imported, &scratch)) ||
      (!imported && (rc = trace_domain_check(a.c.recording, a.domain)))) {
    recording_remove(imported, scratch);
    return rc;
  }
  if (imported) {
    a.c.source = a.c.recording;
    a.c.recording = imported;
  }
  struct calibrate_result *r = xmalloc(sizeof *r);
  char err[1024];
  rc = calibrate(&a.c, r, err, sizeof err);
  if (!rc) {
    char *text = cJSON_Print(r->profile);
    size_t n = strlen(text);
    text = xrealloc(text, n + 2);
    memcpy(text + n, "\n", 2);
    rc = outfile_write_text(a.output, text, err, sizeof err);
    free(text);
  }
  if (!rc) {                                  /* what was written must load as a profile */
    struct profile check;
    rc = profile_load(&check, a.output, err, sizeof err);
    profile_free(&check);
  }
  if (rc) errorf("%s", err);
  else print_fits(&a, r);
  cJSON_Delete(r->profile);
  free(r);
  recording_remove(imported, scratch);
  return rc;
}
