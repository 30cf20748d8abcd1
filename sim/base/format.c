/* The output formats every listing offers, and the JSON and CSV atoms they share (format.h). */
#include "format.h"
#include "util.h"

#include <cJSON.h>
#include <math.h>
#include <string.h>

int report_format_from_name(const char *s) {
  if (strcmp(s, "table") == 0) return FORMAT_TABLE;
  if (strcmp(s, "json") == 0) return FORMAT_JSON;
  if (strcmp(s, "csv") == 0) return FORMAT_CSV;
  return -1;
}

cJSON *json_number(double v) {
  char buf[NUM_TEXT_MAX];
  if (isnan(v) || isinf(v)) return cJSON_CreateNull();
  return cJSON_CreateRaw(num_shortest(buf, v));
}

void json_add_number(cJSON *obj, const char *key, double v) { cJSON_AddItemToObject(obj, key, json_number(v)); }

void csv_field(FILE *f, const char *s) {
  if (!strpbrk(s, ",\"\n\r")) { fputs(s, f); return; }
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}
