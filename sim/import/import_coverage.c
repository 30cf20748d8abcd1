/* What a recording holds against what its format's results need: the events
** seen (and, where the recording says so, recorded), the recorder's own
** warnings about lost data, and the results a missing event takes away.  The
** importers only report what they see (import_saw, import_recorded,
** import_recorder_warning); import_coverage compares, fills the metadata
** member "coverage" and leaves warnings for the front end to print.  An
** incomplete recording is still imported: the warnings say what it lacks.
** What a format's results need is a list in its row (struct import_format's
** needs), kept in the importer's own file beside the parsing it describes. */
#include "import.h"
#include "sim/base/util.h"

#include <cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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

unsigned import_coverage(struct import *im, const struct import_format *format) {
  size_t nneeds = format->nneeds;
  const struct import_need *needs = format->needs;
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
