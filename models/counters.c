/* The names of the stat keys and counters (counters.h). */
#include "counters.h"

#include <stdio.h>
#include <string.h>

static const char *const cr_sub_names[] = {
#define X(e, n) n,
  CR_SUBKEYS(X)
#undef X
};
static const char *const counter_names[] = {
#define X(e, n, d) n,
  COUNTERS(X)
#undef X
};

const char *stat_key_name(unsigned key) {
  static char dr_names[16][12];
  if (key < STAT_CR_BASE) return exit_reason_name(key);
  if (key < STAT_DR_BASE) return cr_sub_names[key - STAT_CR_BASE];
  if (key >= STAT_KEYS) return NULL;
  unsigned i = key - STAT_DR_BASE;
  if (!dr_names[i][0]) snprintf(dr_names[i], sizeof dr_names[i], "dr%u %s", i / 2, i % 2 ? "read" : "write");
  return dr_names[i];
}

int stat_key_by_name(const char *name) {
  for (unsigned k = 0; k < STAT_KEYS; k++) {
    const char *n = stat_key_name(k);
    if (n && strcmp(n, name) == 0) return (int)k;
  }
  return -1;
}


unsigned stat_key_parent(unsigned key) {
  if (key < STAT_CR_BASE) return key;
  return key < STAT_DR_BASE ? EXIT_REASON_CR_ACCESS : EXIT_REASON_DR_ACCESS;
}
const char *counter_name(unsigned c) { return c < CTR_COUNT ? counter_names[c] : NULL; }
