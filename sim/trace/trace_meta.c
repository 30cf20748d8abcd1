/* The members of a trace's metadata that vmxsim reads (trace_meta.h). */
#include "trace_meta.h"
#include "trace.h"
#include "sim/base/util.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

const struct meta_range trace_meta_cpu_ghz = { 0, CLOCK_GHZ_MAX, true, false, false,
                                               "a clock above 0 and at most 10 GHz (or give --cpu-ghz)" };
const struct meta_range trace_meta_span_cycles = { 0, 9223372036854775808.0, false, false, true,
                                                   "a whole number of cycles, 0 to 2^63" };
const struct meta_range trace_meta_count = { 0, 9223372036854775808.0, false, false, true,
                                             "a whole number, 0 to 2^63" };

static bool in_range(const cJSON *v, const struct meta_range *want) {
  if (!cJSON_IsNumber(v)) return false;
  double d = v->valuedouble;
  return meta_range_holds(want, d) && (!want->whole || d == floor(d));
}

int trace_meta_number(const char *meta, const char *path, const char *key, const struct meta_range *want,
                      double def, double *out, char *err, size_t errlen) {
  cJSON *j = cJSON_Parse(meta ? meta : "");
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
  int rc = EXIT_OK;
  *out = def;
  if (v && !in_range(v, want)) {
    char *text = cJSON_PrintUnformatted(v);
    snprintf(err, errlen, "%s: byte %u: metadata \"%s\": %.40s is not %s", path, TRACE_HEADER_SIZE, key,
             text ? text : "?", want->range);
    free(text);
    rc = EXIT_BADINPUT;
  } else if (v) {
    *out = v->valuedouble;
  }
  cJSON_Delete(j);
  return rc;
}
