/* `vmxsim policies` and `vmxsim cpus`: list the presets and profiles compiled in,
** as a table, CSV or JSON. */
#include "commands.h"
#include "sim/config/policy.h"
#include "sim/config/profile.h"
#include "sim/replay/report.h"
#include "sim/base/util.h"

#include <stdlib.h>
#include <string.h>

/* [--format F] and --help; returns the format, -1 after --help, or -EXIT_USAGE. */
static int parse_format(int argc, char **argv, const char *usage) {
  int fmt = FORMAT_TABLE;
  for (int i = 1; i < argc; i++) {
    const char *v = NULL;
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      fputs(usage, stdout);
      return -1;
    }
    if (!strncmp(argv[i], "--format=", 9)) v = argv[i] + 9;
    else if ((!strcmp(argv[i], "--format") || !strcmp(argv[i], "-f")) && i + 1 < argc) v = argv[++i];
    else if (!strcmp(argv[i], "--format") || !strcmp(argv[i], "-f")) {
      errorf("%s: option '%s' needs a value (table, csv or json)", argv[0], argv[i]);
      return -EXIT_USAGE;
    } else {
      errorf("%s: unexpected argument '%s'; see 'vmxsim %s --help'", argv[0], argv[i], argv[0]);
      return -EXIT_USAGE;
    }
    if ((fmt = report_format_from_name(v)) < 0) {
      errorf("%s: --format %s: expected table, csv or json", argv[0], v);
      return -EXIT_USAGE;
    }
  }
  return fmt;
}

int cmd_policies(int argc, char **argv) {
  int fmt = parse_format(argc, argv,
    "usage: vmxsim policies [--format table|csv|json]\n"
    "\n"
    "Lists the policy presets (models/policies/) and every knob with its type, default,\n"
    "values and meaning.  CSV has one row per preset or knob (column 'kind'); JSON is\n"
    "one object {\"presets\": [...], \"knobs\": [...]}.\n"
    "\n"
    "example: vmxsim policies --format json\n");
  if (fmt < 0) return fmt == -1 ? EXIT_OK : -fmt;
  policy_list(stdout, (enum report_format)fmt);
  return EXIT_OK;
}

static const char cpus_usage[] =
  "usage: vmxsim cpus [--format table|csv|json]\n"
  "       vmxsim cpus --controls [--format table|csv|json] [CPU...]\n"
  "\n"
  "Lists the CPU cost profiles (models/cpus/NAME.json): name, clock and description.\n"
  "Each value in a profile carries its source and kind (measured, derived, estimated).\n"
  "\n"
  "options:\n"
  "      --controls      instead, which VMX controls each profile's CPU has: TPR shadow,\n"
  "                      EPT, VPID, unrestricted guest, APIC-access and APIC-register\n"
  "                      virtualization, virtual-interrupt delivery, posted interrupts,\n"
  "                      virtualize x2APIC mode, the VMX-preemption timer, PAUSE-loop\n"
  "                      exiting, IPI virtualization (a policy that sets one the CPU\n"
  "                      lacks fails VM entry, exit code 4); of the built-in profiles,\n"
  "                      or of each CPU given (a profile name or a JSON file)\n"
  "  -f, --format F      table (default), csv (0/1 per control) or json\n"
  "\n"
  "example: vmxsim cpus --format csv\n"
  "         vmxsim cpus --controls skylake-2019 myhost.json\n";

/* Splits cpus' arguments: --controls, the CPUs named (the words that are not
** options or --format's value), and the rest for parse_format (argv[0] first). */
static bool split_cpus_args(int argc, char **argv, char **rest, int *nrest, const char **cpus) {
  bool controls = false;
  int ncpus = 0;
  *nrest = 0;
  rest[(*nrest)++] = argv[0];
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--controls")) controls = true;
    else if (argv[i][0] == '-') {
      rest[(*nrest)++] = argv[i];
      if ((!strcmp(argv[i], "--format") || !strcmp(argv[i], "-f")) && i + 1 < argc) rest[(*nrest)++] = argv[++i];
    } else cpus[ncpus++] = argv[i];
  }
  cpus[ncpus] = NULL;
  return controls;
}

int cmd_cpus(int argc, char **argv) {
  char **rest = xcalloc((size_t)argc + 1, sizeof *rest);
  const char **cpus = xcalloc((size_t)argc + 1, sizeof *cpus);
  int nrest, rc = EXIT_OK;
  bool controls = split_cpus_args(argc, argv, rest, &nrest, cpus);
  int fmt = parse_format(nrest, rest, cpus_usage);
  if (fmt < 0) rc = fmt == -1 ? EXIT_OK : -fmt;
  else if (cpus[0] && !controls) {
    errorf("cpus: unexpected argument '%s' (profiles are named only with --controls); see 'vmxsim cpus --help'", cpus[0]);
    rc = EXIT_USAGE;
  } else if (!controls) {
    profile_list(stdout, (enum report_format)fmt);
  } else {
    char err[1024];
    rc = profile_list_controls(stdout, (enum report_format)fmt, cpus, err, sizeof err);
    if (rc) errorf("cpus --controls: %s", err);
  }
  free(rest);
  free(cpus);
  return rc;
}
