/* Exit-reason names, indexed by SDM number. */
#include "exit_reason.h"

#include <stddef.h>
#include <strings.h>

static const char *const names[EXIT_REASON_MAX] = {
#define X(name, num) [num] = #name,
  EXIT_REASONS(X)
#undef X
};

const char *exit_reason_name(unsigned reason) {
  return reason < EXIT_REASON_MAX ? names[reason] : NULL;
}

int exit_reason_by_name(const char *name) {
  for (int i = 0; i < EXIT_REASON_MAX; i++)
    if (names[i] && strcasecmp(names[i], name) == 0) return i;
  return -1;
}
