/* `vmxsim migrate`: brings a results database's schema up to this vmxsim's.
** The read-only commands (runs, report, compare) never do, and name this one. */
#include "commands.h"
#include "sim/base/util.h"
#include "sim/store/store.h"

#include <stdio.h>
#include <string.h>

static const char usage[] =
  "usage: vmxsim migrate [--db FILE]\n"
  "\n"
  "Upgrades the results database (default " STORE_DEFAULT_PATH ") to this vmxsim's schema\n"
  "version, in one transaction; a current database is left as it is.  Storing a run\n"
  "upgrades it too; runs, report and compare only read, and ask for this.\n"
  "\n"
  "example:\n"
  "  vmxsim migrate --db results/vmxsim.db\n";

int cmd_migrate(int argc, char **argv) {
  const char *db = STORE_DEFAULT_PATH;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      fputs(usage, stdout);
      return EXIT_OK;
    }
    if (!strncmp(argv[i], "--db=", 5)) db = argv[i] + 5;
    else if (!strcmp(argv[i], "--db") && i + 1 < argc) db = argv[++i];
    else {
      errorf("migrate: unexpected argument '%s'; see 'vmxsim migrate --help'", argv[i]);
      return EXIT_USAGE;
    }
  }
  char err[1024];
  int from, to;
  int rc = store_migrate_file(db, &from, &to, err, sizeof err);
  if (rc) errorf("%s", err);
  else if (from == to) fprintf(stderr, "vmxsim: results database %s: schema version %d, already current\n", db, to);
  else fprintf(stderr, "vmxsim: results database %s: schema version %d upgraded to %d\n", db, from, to);
  return rc;
}
