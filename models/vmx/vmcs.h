/* The VMCS: fields with their real encodings, storage, and access counting.
**
** SDM 24.11.2 (the encodings themselves: appendix B): a field encoding is a
** 32-bit value whose bits 14:13
** give the width (0 16-bit, 1 64-bit, 2 32-bit, 3 natural), bits 11:10 the type
** (0 control, 1 read-only data, 2 guest state, 3 host state), bits 9:1 an index
** and bit 0 selects the high half of a 64-bit field.  Width and read-only-ness
** are derived from the encoding, never stored.
*/
#ifndef VMXSIM_VMCS_H
#define VMXSIM_VMCS_H

#include <stdint.h>
#include <stdbool.h>

/* X(NAME, encoding) -- one list generates the enum, the names and the storage. */
#define VMCS_FIELDS(X)                                  \
  X(VIRTUAL_PROCESSOR_ID,            0x0000)            \
  X(POSTED_INTR_NV,                  0x0002)            \
  X(GUEST_INTR_STATUS,               0x0810)            \
  X(IO_BITMAP_A,                     0x2000)            \
  X(IO_BITMAP_B,                     0x2002)            \
  X(MSR_BITMAP,                      0x2004)            \
  X(EPT_POINTER,                     0x201A)            \
  X(EOI_EXIT_BITMAP0,                0x201C)            \
  X(EOI_EXIT_BITMAP1,                0x201E)            \
  X(EOI_EXIT_BITMAP2,                0x2020)            \
  X(EOI_EXIT_BITMAP3,                0x2022)            \
  X(TERTIARY_VM_EXEC_CONTROL,        0x2034)            \
  X(GUEST_PHYSICAL_ADDRESS,          0x2400)            \
  X(VMCS_LINK_POINTER,               0x2800)            \
  X(GUEST_IA32_DEBUGCTL,             0x2802)            \
  X(PIN_BASED_VM_EXEC_CONTROL,       0x4000)            \
  X(CPU_BASED_VM_EXEC_CONTROL,       0x4002)            \
  X(EXCEPTION_BITMAP,                0x4004)            \
  X(PAGE_FAULT_ERROR_CODE_MASK,      0x4006)            \
  X(PAGE_FAULT_ERROR_CODE_MATCH,     0x4008)            \
  X(CR3_TARGET_COUNT,                0x400A)            \
  X(VM_EXIT_CONTROLS,                0x400C)            \
  X(VM_ENTRY_CONTROLS,               0x4012)            \
  X(VM_ENTRY_INTR_INFO_FIELD,        0x4016)            \
  X(TPR_THRESHOLD,                   0x401C)            \
  X(SECONDARY_VM_EXEC_CONTROL,       0x401E)            \
  X(PLE_GAP,                         0x4020)            \
  X(PLE_WINDOW,                      0x4022)            \
  X(VM_INSTRUCTION_ERROR,            0x4400)            \
  X(VM_EXIT_REASON,                  0x4402)            \
  X(VM_EXIT_INTR_INFO,               0x4404)            \
  X(VM_EXIT_INTR_ERROR_CODE,         0x4406)            \
  X(VM_EXIT_INSTRUCTION_LEN,         0x440C)            \
  X(VMX_INSTRUCTION_INFO,            0x440E)            \
  X(VMX_PREEMPTION_TIMER_VALUE,      0x482E)            \
  X(CR0_GUEST_HOST_MASK,             0x6000)            \
  X(CR4_GUEST_HOST_MASK,             0x6002)            \
  X(CR0_READ_SHADOW,                 0x6004)            \
  X(CR4_READ_SHADOW,                 0x6006)            \
  X(CR3_TARGET_VALUE0,               0x6008)            \
  X(CR3_TARGET_VALUE1,               0x600A)            \
  X(CR3_TARGET_VALUE2,               0x600C)            \
  X(CR3_TARGET_VALUE3,               0x600E)            \
  X(EXIT_QUALIFICATION,              0x6400)            \
  X(GUEST_LINEAR_ADDRESS,            0x640A)            \
  X(GUEST_CR0,                       0x6800)            \
  X(GUEST_CR3,                       0x6802)            \
  X(GUEST_CR4,                       0x6804)            \
  X(GUEST_DR7,                       0x681A)            \
  X(GUEST_RSP,                       0x681C)            \
  X(GUEST_RIP,                       0x681E)            \
  X(GUEST_RFLAGS,                    0x6820)            \
  X(HOST_CR0,                        0x6C00)            \
  X(HOST_CR3,                        0x6C02)            \
  X(HOST_CR4,                        0x6C04)            \
  X(HOST_RSP,                        0x6C14)            \
  X(HOST_RIP,                        0x6C16)

enum vmcs_field {
#define X(name, enc) VMCS_##name,
  VMCS_FIELDS(X)
#undef X
  VMCS_FIELD_COUNT
};

enum vmcs_width { VMCS_W16 = 0, VMCS_W64 = 1, VMCS_W32 = 2, VMCS_WNATURAL = 3 };
enum vmcs_type  { VMCS_T_CONTROL = 0, VMCS_T_RODATA = 1, VMCS_T_GUEST = 2, VMCS_T_HOST = 3 };

static inline unsigned vmcs_enc_width(uint32_t enc) { return (enc >> 13) & 3; }
static inline unsigned vmcs_enc_type(uint32_t enc)  { return (enc >> 10) & 3; }
static inline bool vmcs_enc_readonly(uint32_t enc)  { return vmcs_enc_type(enc) == VMCS_T_RODATA; }

/* Guest CR3-target value fields are consecutive encodings, 2 apart. */
#define VMCS_CR3_TARGET_FIELDS 4

struct vmcs {
  uint64_t f[VMCS_FIELD_COUNT];   /* field values, masked to their width */
  uint64_t reads, writes;         /* VMREAD/VMWRITE executed by the hypervisor */
};

uint32_t    vmcs_encoding(enum vmcs_field f);
const char *vmcs_name(enum vmcs_field f);
int         vmcs_field_by_name(const char *name);    /* -1 when unknown; case-insensitive */
int         vmcs_field_by_encoding(uint32_t enc);    /* -1 when unknown */
unsigned    vmcs_width_bits(enum vmcs_field f);      /* 16, 32 or 64 */

/* Hypervisor accesses (VMREAD/VMWRITE): counted, because each costs cycles. */
uint64_t vmcs_read(struct vmcs *v, enum vmcs_field f);
void     vmcs_write(struct vmcs *v, enum vmcs_field f, uint64_t val);
/* The bits a field holds, by field: all ones up to its width (natural width
** is 64 bits on a 64-bit host, SDM 24.11.2). */
#define VMCS_ENC_MASK(enc) ((((enc) >> 13) & 3) == VMCS_W16 ? 0xffffull : \
                            (((enc) >> 13) & 3) == VMCS_W32 ? 0xffffffffull : ~0ull)
extern const uint64_t vmcs_field_mask[VMCS_FIELD_COUNT];
/* Processor-internal accesses (exit decisions, VM exit/entry microcode): free. */
static inline uint64_t vmcs_peek(const struct vmcs *v, enum vmcs_field f) { return v->f[f]; }
static inline void vmcs_poke(struct vmcs *v, enum vmcs_field f, uint64_t val) { v->f[f] = val & vmcs_field_mask[f]; }

#endif
