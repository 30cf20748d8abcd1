/* The VMCS: field table, name and encoding lookup, counted accesses. */
#include "vmcs.h"

#include <string.h>
#include <strings.h>

static const uint32_t encodings[VMCS_FIELD_COUNT] = {
#define X(name, enc) enc,
  VMCS_FIELDS(X)
#undef X
};
static const char *const names[VMCS_FIELD_COUNT] = {
#define X(name, enc) #name,
  VMCS_FIELDS(X)
#undef X
};

#define X(name, enc) VMCS_ENC_MASK(enc),
const uint64_t vmcs_field_mask[VMCS_FIELD_COUNT] = { VMCS_FIELDS(X) };
#undef X

uint32_t vmcs_encoding(enum vmcs_field f) { return encodings[f]; }
const char *vmcs_name(enum vmcs_field f) { return names[f]; }

int vmcs_field_by_name(const char *name) {
  for (int i = 0; i < VMCS_FIELD_COUNT; i++)
    if (strcasecmp(names[i], name) == 0) return i;
  return -1;
}

int vmcs_field_by_encoding(uint32_t enc) {
  for (int i = 0; i < VMCS_FIELD_COUNT; i++)
    if (encodings[i] == enc) return i;
  return -1;
}

unsigned vmcs_width_bits(enum vmcs_field f) {
  /* Natural width is 64 bits on a 64-bit host (SDM 24.11.2). */
  static const unsigned bits[4] = { 16, 64, 32, 64 };
  return bits[vmcs_enc_width(encodings[f])];
}

uint64_t vmcs_read(struct vmcs *v, enum vmcs_field f) {
  v->reads++;
  return v->f[f];
}

void vmcs_write(struct vmcs *v, enum vmcs_field f, uint64_t val) {
  v->writes++;
  vmcs_poke(v, f, val);
}
