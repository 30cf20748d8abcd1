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

static bool id16(const cJSON *j) {
  return cJSON_IsNumber(j) && j->valuedouble >= 0 && j->valuedouble <= 65535 && j->valuedouble == (int)j->valuedouble;
}

int trace_meta_vcpu_names(const char *meta, const char *path, struct trace_vcpu_names *m, char *err,
                          size_t errlen) {
  m->n = 0;
  cJSON *j = meta && meta[0] ? cJSON_Parse(meta) : NULL;
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(j, "vcpus"), *e;
  if (!cJSON_IsArray(a)) a = NULL;
  int rc = EXIT_OK;
  cJSON_ArrayForEach(e, a) {
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(e, "domain"), *v = cJSON_GetObjectItemCaseSensitive(e, "vcpu");
    if (m->n == TRACE_VCPU_MAX || !id16(d) || !id16(v)) {
      snprintf(err, errlen, "%s: metadata \"vcpus\"[%u]: expected {\"domain\": 0..65535, \"vcpu\": 0..65535}, at most "
               "%d of them", path, m->n, TRACE_VCPU_MAX);
      rc = EXIT_BADINPUT;
      break;
    }
    m->domain[m->n] = (int)d->valuedouble;
    m->vcpu[m->n] = (int)v->valuedouble;
    snprintf(m->name[m->n], sizeof m->name[m->n], "d%dv%d", m->domain[m->n], m->vcpu[m->n]);
    m->names[m->n] = m->name[m->n];
    m->n++;
  }
  cJSON_Delete(j);
  return rc;
}
