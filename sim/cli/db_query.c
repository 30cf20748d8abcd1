/* The option parser and the run selection the query commands share
** (db_query.h): one of each, so that runs, report and compare read an option
** the same way and `runs` lists the runs `compare` would take. */
#include "db_query.h"
#include "options.h"
#include "sim/config/policy.h"
#include "sim/replay/report.h"
#include "sim/base/util.h"
#include "sim/store/known.h"
#include "sim/store/store.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void cli_free_db_opts(struct db_opts *o) {
  for (unsigned i = 0; i < o->npolicy; i++) free(o->policy[i]);
  free(o->del);
}

/* "30d", "12h", "90" (days): the SQLite date modifier for that long ago. */
static int parse_age(struct db_opts *o, const char *arg) {
  static const struct { char unit; uint64_t secs; } units[] = {
    { 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 }, { 'w', 604800 } };
  char num[24];
  size_t len = strlen(arg);
  uint64_t n, mult = 86400;
  for (size_t i = 0; len && i < sizeof units / sizeof *units; i++)
    if (arg[len - 1] == units[i].unit) { mult = units[i].secs; len--; }
  if (len == 0 || len >= sizeof num || (memcpy(num, arg, len), num[len] = 0, !parse_u64(num, &n)) ||
      n > UINT64_MAX / mult / 2) {
    errorf("--older-than '%s': expected a number followed by s, m, h, d or w (e.g. 30d)%s", arg,
           len && len < sizeof num ? parse_u64_hint(num) : "");
    return EXIT_USAGE;
  }
  snprintf(o->older, sizeof o->older, "-%llu seconds", (unsigned long long)(n * mult));
  return 0;
}

/* "3,4,5" added to the --delete list.  Every item must be an id: an empty
** one ("3,,4", "3,") is refused, as a slip in a list of what to delete
** should stop the deletion rather than be passed over. */
static int add_delete_ids(struct db_opts *o, const char *arg) {
  char *copy = xstrdup(arg);
  int rc = 0;
  for (char *tok = copy, *next; tok && !rc; tok = next) {
    next = strchr(tok, ',');
    if (next) *next++ = 0;
    if (!*tok) {
      errorf("--delete '%s': an empty item in the list of run ids", arg);
      rc = EXIT_USAGE;
      break;
    }
    uint64_t v;
    if (!parse_u64(tok, &v) || v > INT64_MAX) {
      errorf("--delete: '%s' is not a run id (a number from 'vmxsim runs')%s", tok, parse_u64_hint(tok));
      rc = EXIT_USAGE;
      break;
    }
    o->del = xrealloc(o->del, (o->ndel + 1) * sizeof *o->del);
    o->del[o->ndel++] = (int64_t)v;
  }
  free(copy);
  return rc;
}

/* Adds policy spec with its overrides, by the name its runs are stored under
** (policy_name: "ept,vpid=on" finds the runs of "ept,vpid=true"); a policy
** named twice would be one run compared with itself. */
static int add_policy(struct db_opts *o, const char *arg, const char *spec, char *const *sets, int nsets) {
  char name[sizeof ((struct policy *)0)->name], err[1536];
  if (policy_name(spec, sets, nsets, name, sizeof name, err, sizeof err)) {
    errorf("--policy '%s': %s", arg, err);
    return EXIT_USAGE;
  }
  for (unsigned i = 0; i < o->npolicy; i++)
    if (!strcmp(o->policy[i], name)) {
      errorf("--policy '%s': policy %s is named twice", arg, name);
      return EXIT_USAGE;
    }
  if (o->npolicy == COMPARE_MAX_RUNS) {
    errorf("--policy: at most %d policies", COMPARE_MAX_RUNS);
    return EXIT_USAGE;
  }
  o->policy[o->npolicy++] = xstrdup(name);
  return 0;
}

/* Splits "A,B" into policies; a part with '=' is an override of the policy
** before it.  An empty part is refused, as `run` refuses it. */
static int add_policies(struct db_opts *o, const char *arg) {
  char *copy = xstrdup(arg), *spec = NULL, *sets[COMPARE_MAX_RUNS];
  int nsets = 0, rc = 0;
  for (char *t, *rest = copy; !rc && (t = option_list_next(&rest));) {
    if ((rc = option_list_empty("--policy", arg, t))) break;
    if (strchr(t, '=') && !spec) {
      errorf("--policy: '%s' overrides a knob, but no policy comes before it", t);
      rc = EXIT_USAGE;
    } else if (strchr(t, '=') && nsets == COMPARE_MAX_RUNS) {
      errorf("--policy: at most %d overrides for policy %s", COMPARE_MAX_RUNS, spec);
      rc = EXIT_USAGE;
    } else if (strchr(t, '=')) {
      sets[nsets++] = t;
    } else {
      if (spec) rc = add_policy(o, arg, spec, sets, nsets);
      spec = t;
      nsets = 0;
    }
  }
  if (!rc) rc = add_policy(o, arg, spec, sets, nsets);   /* the list has one item or more */
  free(copy);
  return rc;
}

int cli_parse_db_opts(int argc, char **argv, const char *usage, const char *allowed, struct db_opts *o,
                      char **operands, unsigned max, unsigned *n) {
  static const struct option longopts[] = {
    { "db", required_argument, 0, 'D' },    { "format", required_argument, 0, 'f' },
    { "trace", required_argument, 0, 't' }, { "policy", required_argument, 0, 'p' },
    { "cpu", required_argument, 0, 'c' },   { "workload", required_argument, 0, 'w' },
    { "last", no_argument, 0, 'l' },        { "older-than", required_argument, 0, 'O' },
    { "delete", required_argument, 0, 'X' }, { "prune", no_argument, 0, 'P' },
    { "dry-run", no_argument, 0, 'n' },     { "run", no_argument, 0, 'R' },
    { "mixed-cpus", no_argument, 0, 'M' },  { "partial", no_argument, 0, 'A' },
    { "skip-bad", no_argument, 0, 'B' },
    { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
  memset(o, 0, sizeof *o);
  o->db = STORE_DEFAULT_PATH;
  optind = 1;
  opterr = 0;
  int c;
  /* GNU getopt moves the operands after the options, so they may come anywhere. */
  while ((c = getopt_long(argc, argv, "f:t:p:c:w:lnh", longopts, NULL)) != -1) {
    if (c != '?' && c != 'h' && !strchr(allowed, c)) {
      const struct option *lo = longopts;
      while (lo->val != c) lo++;
      errorf("--%s does not apply to 'vmxsim %s'; see 'vmxsim %s --help'", lo->name, argv[0], argv[0]);
      return EXIT_USAGE;
    }
    switch (c) {
    case 'D': o->db = optarg; break;
    case 'f':
      if ((o->format = report_format_from_name(optarg)) < 0) {
        errorf("--format %s: expected table, json or csv", optarg);
        return EXIT_USAGE;
      }
      break;
    case 't': o->trace = optarg; break;
    case 'p': if (add_policies(o, optarg)) return EXIT_USAGE; break;
    case 'c': o->cpu = optarg; break;
    case 'w': o->workload = optarg; break;
    case 'l': o->last = true; break;
    case 'O': if (parse_age(o, optarg)) return EXIT_USAGE; break;
    case 'X': if (add_delete_ids(o, optarg)) return EXIT_USAGE; break;
    case 'P': o->prune = true; break;
    case 'n': o->dry_run = true; break;
    case 'R': o->run_missing = true; break;
    case 'M': o->mixed_cpus = true; break;
    case 'A': o->partial = true; break;
    case 'B': o->skip_bad = true; break;
    case 'h': fputs(usage, stdout); return -1;
    default:
      errorf("%s: unknown option or missing argument; see 'vmxsim %s --help'", argv[optind - 1], argv[0]);
      return EXIT_USAGE;
    }
  }
  if ((unsigned)(argc - optind) > max) {
    errorf("unexpected argument '%s'; see 'vmxsim %s --help'", argv[optind + (int)max], argv[0]);
    return EXIT_USAGE;
  }
  for (*n = 0; optind < argc; optind++) operands[(*n)++] = argv[optind];
  return 0;
}

bool cli_parse_run_id(const char *s, int64_t *id) {
  uint64_t v;
  if (!parse_u64(s, &v) || v > INT64_MAX) {
    errorf("'%s' is not a run id (a number from 'vmxsim runs')%s", s, parse_u64_hint(s));
    return false;
  }
  *id = (int64_t)v;
  return true;
}

/* A trace that is a file is matched by content, so renamed copies still match. */
int cli_make_filter(struct filter *fl, const struct db_opts *o, const char *policy) {
  struct stat sb;
  memset(fl, 0, sizeof *fl);
  fl->trace = o->trace;
  fl->policy = policy;
  fl->cpu = o->cpu;
  fl->workload = o->workload;
  fl->older = o->older[0] ? o->older : NULL;
  const char *file = o->trace_file ? o->trace_file : o->trace;
  if (file && stat(file, &sb) == 0 && S_ISREG(sb.st_mode)) {
    char err[600];
    struct file_seen seen;
    file_seen_take(file, &seen);
    bool known = store_known_hash(o->db, &seen, fl->hash);   /* a file stored before need not be hashed */
    file_seen_free(&seen);
    if (!known && hash_file(file, fl->hash, err, sizeof err) != EXIT_OK) {
      errorf("%s", err);
      return EXIT_BADINPUT;
    }
    fl->trace = NULL;
  }
  return 0;
}

static void bind_opt(sqlite3_stmt *st, int i, const char *s) {
  if (s && *s) sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
  else sqlite3_bind_null(st, i);
}

int cli_prepare_filtered(sqlite3 *db, const char *sql, const struct filter *fl, sqlite3_stmt **st) {
  int rc = sqlite3_prepare_v2(db, sql, -1, st, NULL);
  if (rc != SQLITE_OK) return rc;
  bind_opt(*st, 1, fl->hash);
  bind_opt(*st, 2, fl->trace);
  bind_opt(*st, 3, fl->policy);
  bind_opt(*st, 4, fl->cpu);
  bind_opt(*st, 5, fl->workload);
  bind_opt(*st, 6, fl->older);
  if (fl->whole_only) sqlite3_bind_int(*st, 8, 1);   /* SQLITE_RANGE for a statement without ?8: nothing to bind */
  return SQLITE_OK;
}

int cli_query_error(sqlite3 *db, const char *path) {
  errorf("results database %s: cannot query: %s", path, sqlite3_errmsg(db));
  return EXIT_DB;
}

int cli_open_db_for(const char *path, bool create, sqlite3 **db) {
  char err[1024];
  int rc = store_open(path, create, db, err, sizeof err);
  if (rc) errorf("%s", err);
  return rc;
}

int cli_open_db_readonly(const char *path, sqlite3 **db) {
  char err[1024];
  int rc = store_open_readonly(path, db, err, sizeof err);
  if (rc) errorf("%s", err);
  return rc;
}
