/* Hypervisor policies: a fixed set of knobs, presets as JSON data, '+' composition, --set overrides. */
#ifndef VMXSIM_POLICY_H
#define VMXSIM_POLICY_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include "models/knobs.h"
#include "sim/base/format.h"

/* The policy `run` and `repl` use when no --policy is given (their --help and
** the man page say so). */
#define POLICY_DEFAULT "shadowcache"

/* Resolves "preset[+preset...]" (names of the presets in models/policies/, or
** paths to JSON files) with KEY=VALUE overrides, applied in order after every
** preset (a later value of a knob wins).  Returns 0, EXIT_USAGE (an unknown
** preset or knob, a bad value, an empty part of the spec) or EXIT_BADINPUT (a
** preset file that is not valid), with a message in err that names the
** file/line or lists the valid names.  p->name is policy_name's. */
int policy_resolve(struct policy *p, const char *spec, char *const *sets, int nsets,
                   char *err, size_t errlen);
/* policy_resolve, the preset files read as flags say (enum input_flags,
** util.h; with INPUT_HIDE_CONTENT, no message quotes them).  The spec and
** the overrides are the caller's, and messages still quote those. */
int policy_resolve_flags(struct policy *p, const char *spec, char *const *sets, int nsets, unsigned flags,
                         char *err, size_t errlen);
/* The name a policy resolved from spec and sets has, and runs are stored
** under, found without reading a preset: spec, then ",KEY=VALUE" for each
** knob the overrides set, once, in the knob table's order (models/knobs.h),
** with its last value spelled one way: decimal; a mask as 0x and lowercase
** hex; true or false; a choice's name.  So "ept" with vpid=on,prev_roots=2
** and with prev_roots=1,prev_roots=2,vpid=1 are both
** "ept,prev_roots=2,vpid=true".  0, or EXIT_USAGE with a message for a bad
** override; the name is cut at n - 1 bytes. */
int policy_name(const char *spec, char *const *sets, int nsets, char *name, size_t n, char *err, size_t errlen);
/* The knobs of a run's policy from its name (policy_name's form: SPEC then
** ",KEY=VALUE" per override), as policy_resolve finds them today: 0, or its
** error. */
int policy_from_name(struct policy *p, const char *name, char *err, size_t errlen);
/* Sets one knob from text: 0, or EXIT_USAGE with a message (unknown knob, bad
** value).  Counts and sizes take decimal, masks decimal or 0x hex, never a
** leading 0 (parse_u64); booleans true|false, 1|0, on|off, yes|no. */
int policy_set(struct policy *p, const char *key, const char *value, char *err, size_t errlen);
/* The resolved knobs as a JSON object text (caller frees). */
char *policy_to_json(const struct policy *p);
/* Prints the presets with their descriptions, then the knobs (type, default,
** values, meaning), as a table, CSV (one row per preset or knob, column
** "kind") or JSON ({"presets": [...], "knobs": [...]}). */
void policy_list(FILE *f, enum report_format fmt);
/* Names of the presets, NULL-terminated static array (for completion). */
const char *const *policy_preset_names(void);

#endif
