/* The MMU tests' tiny VM (test_mmu.c, test_mmu_faults.c): one vCPU of an
** engine under a policy, driven by hand-made events, and what the tests read
** of it. */
#ifndef VMXSIM_TEST_MMU_VM_H
#define VMXSIM_TEST_MMU_VM_H

#include <stdio.h>
#include <string.h>
#include "models/vmx/exit_reason.h"
#include "sim/replay/engine.h"

#define KERNEL_TEXT 0xffffffff81000000ull
#define USER_CODE   0x400000ull

/* ---- a tiny VM driven by hand-made events ---- */

struct vm {
  struct policy pol;
  struct profile prof;
  struct engine e;
};

static inline void vm_start(struct vm *vm, const char *policy, const char *const *sets, int nsets, unsigned paging) {
  char err[512];
  assert_int_equal(policy_resolve(&vm->pol, policy, (char *const *)sets, nsets, err, sizeof err), 0);
  /* EPT policies need a CPU with EPT (the 2007 Core 2 has none). */
  assert_int_equal(profile_load(&vm->prof, strstr(policy, "ept") ? "nehalem-2009" : "core2-2007", err, sizeof err), 0);
  assert_int_equal(engine_init(&vm->e, &vm->pol, &vm->prof, 1, paging, err, sizeof err), 0);
}

static inline void vm_stop(struct vm *vm) {
  engine_free(&vm->e);
  profile_free(&vm->prof);
}

static inline void ev(struct vm *vm, unsigned type, unsigned aux, uint64_t a, uint64_t b) {
  struct trace_event e = { .type = (uint8_t)type, .aux = (uint8_t)aux, .a = a, .b = b };
  engine_step(&vm->e, &e);
}

static inline void init_cr3(struct vm *vm, uint64_t cr3) { ev(vm, EV_INIT, 3, cr3, 0); }
static inline void cr3w(struct vm *vm, uint64_t cr3) { ev(vm, EV_CR_WRITE, 3, cr3, 0); }
static inline void touch(struct vm *vm, uint64_t va, uint64_t pages) { ev(vm, EV_TOUCH, 0, va, pages); }
static inline uint64_t ctr(const struct vm *vm, enum counter c) { return vm->e.st.counter[c]; }
static inline uint64_t exits(const struct vm *vm, unsigned reason) { return vm->e.st.row[reason].count; }
static inline uint64_t cr3_exits(const struct vm *vm) { return vm->e.st.row[STAT_CR_BASE + CRSUB_CR3W].count; }

/* What the REPL's `info shadow` prints for the VM now (malloc'd). */
static inline char *shadow_text(struct vm *vm) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  mmu_print_shadow(vm->e.mmu, f);
  fclose(f);
  return text;
}

static inline uint64_t space(unsigned i) { return 0x10000000ull + (uint64_t)i * 0x100000; }

/* `switches` CR3 writes going round the first n address spaces, each touching user code. */
static inline void cycle(struct vm *vm, unsigned n, unsigned switches) {
  for (unsigned i = 0; i < switches; i++) {
    cr3w(vm, space(i % n));
    touch(vm, USER_CODE, 1);
  }
}

#endif
