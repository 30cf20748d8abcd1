/* The output formats every listing offers (a table, JSON, CSV), and the JSON
** and CSV atoms they share. */
#ifndef VMXSIM_FORMAT_H
#define VMXSIM_FORMAT_H

#include <stdio.h>

enum report_format { FORMAT_TABLE, FORMAT_JSON, FORMAT_CSV };
int report_format_from_name(const char *s);   /* -1 when unknown */

struct cJSON;
/* Adds number v to obj under key in its shortest round-trip form (num_shortest);
** NaN as null. */
void json_add_number(struct cJSON *obj, const char *key, double v);
/* Writes s as one CSV field (RFC 4180: quoted when it holds a comma, a quote or a newline). */
void csv_field(FILE *f, const char *s);
/* v in its shortest round-trip form as a JSON value (NaN: null). */
struct cJSON *json_number(double v);

#endif
