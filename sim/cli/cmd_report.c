/* `vmxsim report`: prints a stored run's report again, as the batch run printed it. */
#include "commands.h"
#include "db_query.h"
#include "sim/replay/report.h"
#include "sim/base/util.h"
#include "sim/store/store.h"
#include "sim/present/report_print.h"

#include <stdlib.h>

static const char report_usage[] =
  "usage: vmxsim report [RUN_ID | --last] [--format table|json|csv] [--db FILE]\n"
  "\n"
  "Prints a stored run's report exactly as the batch run printed it (default: the\n"
  "last run stored).  'vmxsim runs' lists the run ids.\n"
  "\n"
  "  -l, --last          the most recently stored run (the default)\n"
  "  -f, --format F      table (default; reads like xenalyze --summary), json, csv\n"
  "      --db FILE       results database (default " STORE_DEFAULT_PATH ")\n"
  "\n"
  "example: vmxsim report 12 --format json\n";

int cmd_report(int argc, char **argv) {
  struct db_opts o;
  char *ids[1];
  unsigned n;
  int64_t id = -1;
  int rc = cli_parse_db_opts(argc, argv, report_usage, "Dfl", &o, ids, 1, &n);
  if (!rc && n && o.last) { errorf("give a RUN_ID or --last, not both"); rc = EXIT_USAGE; }
  if (!rc && n && !cli_parse_run_id(ids[0], &id)) rc = EXIT_USAGE;
  struct report *rep = xmalloc(sizeof *rep);
  char err[1024];
  if (!rc) {
    rc = store_load(o.db, id, rep, NULL, err, sizeof err);
    if (rc) errorf("%s", err);
    else report_print(stdout, rep, (enum report_format)o.format);
  }
  if (!rc) report_free(rep);
  free(rep);
  cli_free_db_opts(&o);
  return rc < 0 ? EXIT_OK : rc;
}
