/* `vmxsim policies` and `vmxsim cpus`: list the presets and profiles compiled in,
** as a table, CSV or JSON. */
#include "commands.h"
#include "sim/config/policy.h"
#include "sim/config/profile.h"
#include "sim/replay/report.h"
#include "sim/base/util.h"

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

int cmd_cpus(int argc, char **argv) {
  int fmt = parse_format(argc, argv,
    "usage: vmxsim cpus [--format table|csv|json]\n"
    "\n"
    "Lists the CPU cost profiles (models/cpus/NAME.json): name, clock and description.\n"
    "Each value in a profile carries its source and kind (measured, derived, estimated).\n"
    "\n"
    "example: vmxsim cpus --format csv\n");
  if (fmt < 0) return fmt == -1 ? EXIT_OK : -fmt;
  profile_list(stdout, (enum report_format)fmt);
  return EXIT_OK;
}
