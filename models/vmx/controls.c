/* Names of the VMX control bits (see controls.h). */
#include "controls.h"

#include <stddef.h>

struct control { uint32_t bit; const char *name; };

static const struct control pin[] = {
#define X(name, bit, text) { 1u << bit, text },
  PIN_CONTROLS(X)
#undef X
};
static const struct control cpu[] = {
#define X(name, bit, text) { 1u << bit, text },
  CPU_CONTROLS(X)
#undef X
};
static const struct control sec[] = {
#define X(name, bit, text) { 1u << bit, text },
  SEC_CONTROLS(X)
#undef X
};

static const struct control ter[] = {
#define X(name, bit, text) { 1u << bit, text },
  TER_CONTROLS(X)
#undef X
};

static const char *find(const struct control *list, size_t n, uint32_t bit) {
  for (size_t i = 0; i < n; i++)
    if (list[i].bit == bit) return list[i].name;
  return NULL;
}

const char *control_name(enum control_field f, uint32_t bit) {
  switch (f) {
  case CTL_PIN: return find(pin, sizeof pin / sizeof *pin, bit);
  case CTL_CPU: return find(cpu, sizeof cpu / sizeof *cpu, bit);
  case CTL_SEC: return find(sec, sizeof sec / sizeof *sec, bit);
  case CTL_TER: return find(ter, sizeof ter / sizeof *ter, bit);
  }
  return NULL;
}
