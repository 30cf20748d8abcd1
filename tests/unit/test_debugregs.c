/* Debug registers around VM exits: the processor's DR7 handling (SDM 27.3.1:
** "save debug controls" saves DR7 and IA32_DEBUGCTL first; 27.5.1: every exit
** loads DR7 = 0x400; 26.3.2.1: "load debug controls" reloads them at entry;
** both controls are bit 2 = 0x4, SDM 24.7.1, 24.8.1) and the hypervisor's switching
** policies (eager, lazy, KVM's MOV-DR scheme), through the vcpu layer. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "models/vmx/controls.h"
#include "models/hv/dr.h"
#include "models/vmx/exit.h"
#include "models/vmx/exit_reason.h"
#include "models/hv/vcpu.h"
#include "sim/config/policy.h"
#include "sim/replay/stats.h"
#include "models/work.h"

static struct policy P;
static struct vcpu V;
static uint64_t ctr[CTR_COUNT];
static struct work W;

/* vcpu_setup with a resolved policy; sets are KEY=VALUE overrides. */
static void setup(const char *spec, const char *set1, const char *set2) {
  char err[1024];
  char *sets[2] = { NULL, NULL };
  int n = 0;
  if (set1) sets[n++] = (char *)set1;
  if (set2) sets[n++] = (char *)set2;
  if (policy_resolve(&P, spec, sets, n, err, sizeof err)) fail_msg("policy %s: %s", spec, err);
  vcpu_setup(&V, 0, &P);
  memset(ctr, 0, sizeof ctr);
  work_clear(&W);
}

static struct trace_event mkev(uint8_t type, uint8_t aux, uint64_t a, uint64_t b) {
  return (struct trace_event){ .type = type, .aux = aux, .a = a, .b = b };
}

/* One guest action as the engine runs it: decide, then either the three exit
** steps (and a native re-execution when asked) or the no-exit effect. */
static struct exit_decision step(struct trace_event ev) {
  struct exit_decision d = vmx_decide(&V.vmx, &ev);
  if (d.exits) {
    struct vcpu_result r = { 0 };
    vcpu_exit_begin(&V, d.reason, d.qual, &W, ctr);
    struct vmx_exit_info xi = vmx_exit_info_of(&d);
    vcpu_handle_exit(&V, &ev, &xi, &r);
    vcpu_exit_end(&V, &W, ctr);
    if (r.reexecute) {
      struct vmx_native again = { 0 };
      vcpu_no_exit(&V, &ev, ev.a, &again);
    }
  } else {
    struct vmx_native r = { 0 };
    vcpu_no_exit(&V, &ev, ev.a, &r);
  }
  return d;
}

static struct exit_decision cpuid(void) { return step(mkev(EV_CPUID, 0, 0, 0)); }
static struct exit_decision drw(unsigned dr, uint64_t val) { return step(mkev(EV_DR_WRITE, (uint8_t)dr, val, 0)); }
static struct exit_decision drr(unsigned dr) { return step(mkev(EV_DR_READ, (uint8_t)dr, 0, 0)); }

static bool mov_dr_exiting(void) { return cpu_ctl(&V.vmx.vmcs, CPU_MOV_DR_EXITING); }

/* ------------------------------------------------------------------------ */
/* Processor actions                                                         */

static void debug_control_bits_are_0x4_not_0x2(void **state) {
  (void)state;
  assert_int_equal(EXIT_SAVE_DEBUG_CONTROLS, 0x4);
  assert_int_equal(ENTRY_LOAD_DEBUG_CONTROLS, 0x4);
  setup("nocache", NULL, NULL);
  assert_int_equal(vmcs_peek(&V.vmx.vmcs, VMCS_VM_EXIT_CONTROLS) & 0x6, 0x4);
  assert_int_equal(vmcs_peek(&V.vmx.vmcs, VMCS_VM_ENTRY_CONTROLS) & 0x6, 0x4);
}

static void exit_control_0x2_does_not_save_dr7(void **state) {
  (void)state;
  setup("nocache", NULL, NULL);
  vmcs_poke(&V.vmx.vmcs, VMCS_VM_EXIT_CONTROLS, 0x2);
  vmcs_poke(&V.vmx.vmcs, VMCS_GUEST_DR7, 0x400);
  V.vmx.dr[7] = 0x455;
  vmx_cpu_exit(&V.vmx, &(struct vmx_exit_info){ .reason = EXIT_REASON_CPUID });
  assert_int_equal(vmcs_peek(&V.vmx.vmcs, VMCS_GUEST_DR7), 0x400);
  assert_int_equal(V.vmx.dr[7], 0x400);
}

static void entry_control_0x2_does_not_load_dr7(void **state) {
  (void)state;
  setup("nocache", NULL, NULL);
  vmcs_poke(&V.vmx.vmcs, VMCS_VM_ENTRY_CONTROLS, 0x2);
  vmcs_poke(&V.vmx.vmcs, VMCS_GUEST_DR7, 0x4aa);
  V.vmx.dr[7] = 0x400;
  vmx_cpu_entry(&V.vmx);
  assert_int_equal(V.vmx.dr[7], 0x400);
}

static void every_vm_exit_loads_dr7_0x400_whatever_the_debug_controls(void **state) {
  (void)state;
  for (unsigned ctl = 0; ctl < 4; ctl++) {
    setup("nocache", NULL, NULL);
    vmcs_poke(&V.vmx.vmcs, VMCS_VM_EXIT_CONTROLS, ctl & 1 ? EXIT_SAVE_DEBUG_CONTROLS : 0);
    vmcs_poke(&V.vmx.vmcs, VMCS_VM_ENTRY_CONTROLS, ctl & 2 ? ENTRY_LOAD_DEBUG_CONTROLS : 0);
    V.vmx.dr[7] = 0x4ff;
    vmx_cpu_exit(&V.vmx, &(struct vmx_exit_info){ .reason = EXIT_REASON_CPUID });
    if (V.vmx.dr[7] != DR7_RESET)
      fail_msg("controls %u: DR7 after exit 0x%llx, expected 0x400", ctl, (unsigned long long)V.vmx.dr[7]);
  }
}

static void vm_exit_leaves_dr7_0x400_in_hardware_under_lazy_switching(void **state) {
  (void)state;
  /* Lazy, no host debugger: the hypervisor writes no DR after the exit, so
  ** hw_dr[7] after vcpu_exit_begin is what the processor left. */
  for (unsigned ctl = 0; ctl < 4; ctl++) {
    setup("nocache+lazydr", "mov_dr_exiting=false", NULL);
    vmcs_poke(&V.vmx.vmcs, VMCS_VM_EXIT_CONTROLS, ctl & 1 ? EXIT_SAVE_DEBUG_CONTROLS : 0);
    vmcs_poke(&V.vmx.vmcs, VMCS_VM_ENTRY_CONTROLS, ctl & 2 ? ENTRY_LOAD_DEBUG_CONTROLS : 0);
    assert_false(drw(7, 0x4ff).exits);         /* guest arms breakpoints natively */
    assert_int_equal(V.vmx.dr[7], 0x4ff);
    vcpu_exit_begin(&V, EXIT_REASON_CPUID, 0, &W, ctr);
    if (V.vmx.dr[7] != DR7_RESET)
      fail_msg("controls %u: DR7 after exit 0x%llx, expected 0x400", ctl, (unsigned long long)V.vmx.dr[7]);
  }
}

static void vm_exit_leaves_dr7_0x400_in_hardware_under_eager_switching(void **state) {
  (void)state;
  for (unsigned ctl = 0; ctl < 4; ctl++) {
    setup("nocache", "mov_dr_exiting=false", NULL);
    vmcs_poke(&V.vmx.vmcs, VMCS_VM_EXIT_CONTROLS, ctl & 1 ? EXIT_SAVE_DEBUG_CONTROLS : 0);
    vmcs_poke(&V.vmx.vmcs, VMCS_VM_ENTRY_CONTROLS, ctl & 2 ? ENTRY_LOAD_DEBUG_CONTROLS : 0);
    assert_false(drw(7, 0x4ff).exits);
    vcpu_exit_begin(&V, EXIT_REASON_CPUID, 0, &W, ctr);
    /* no host debugger: the host's DR7 is 0x400 as well */
    assert_int_equal(V.vmx.dr[7], DR7_RESET);
  }
}

static void save_debug_controls_saves_dr7_to_guest_dr7_before_loading_0x400(void **state) {
  (void)state;
  setup("nocache+lazydr", "mov_dr_exiting=false", NULL);
  assert_false(drw(7, 0x455).exits);
  vcpu_exit_begin(&V, EXIT_REASON_CPUID, 0, &W, ctr);
  assert_int_equal(vmcs_peek(&V.vmx.vmcs, VMCS_GUEST_DR7), 0x455);
  assert_int_equal(V.vmx.dr[7], DR7_RESET);
}

static void every_vm_exit_clears_debugctl_after_saving_it(void **state) {
  (void)state;
  setup("nocache", NULL, NULL);
  /* IA32_DEBUGCTL (MSR 0x1d9) is intercepted: the write exits and lands in
  ** GUEST_IA32_DEBUGCTL, which VM entry loads (load debug controls). */
  assert_true(step(mkev(EV_WRMSR, 0, 0x1d9, 0x3)).exits);
  assert_int_equal(V.vmx.debugctl, 0x3);
  vcpu_exit_begin(&V, EXIT_REASON_CPUID, 0, &W, ctr);
  assert_int_equal(V.vmx.debugctl, 0);                            /* SDM 27.5.1 */
  assert_int_equal(vmcs_peek(&V.vmx.vmcs, VMCS_GUEST_IA32_DEBUGCTL), 0x3);
  vcpu_exit_end(&V, &W, ctr);
  assert_int_equal(V.vmx.debugctl, 0x3);
}

static void emulated_dr7_write_with_high_bits_injects_gp_instead(void **state) {
  (void)state;
  setup("nocache", NULL, NULL);
  assert_true(drw(7, 0x100000401ull).exits);
  assert_int_equal(vmcs_peek(&V.vmx.vmcs, VMCS_GUEST_DR7), DR7_RESET);
  assert_int_equal(vmcs_peek(&V.vmx.vmcs, VMCS_VM_ENTRY_INTR_INFO_FIELD) & 0xff, 13);
}

static void without_save_debug_controls_guest_dr7_is_not_updated(void **state) {
  (void)state;
  setup("nocache+lazydr", "mov_dr_exiting=false", NULL);
  vmcs_poke(&V.vmx.vmcs, VMCS_VM_EXIT_CONTROLS, 0);
  assert_false(drw(7, 0x455).exits);
  vcpu_exit_begin(&V, EXIT_REASON_CPUID, 0, &W, ctr);
  assert_int_equal(vmcs_peek(&V.vmx.vmcs, VMCS_GUEST_DR7), DR7_RESET);
  assert_int_equal(V.vmx.dr[7], DR7_RESET);
}

static void load_debug_controls_loads_dr7_from_guest_dr7_on_entry(void **state) {
  (void)state;
  setup("nocache+lazydr", NULL, NULL);
  vcpu_exit_begin(&V, EXIT_REASON_CPUID, 0, &W, ctr);
  vmcs_poke(&V.vmx.vmcs, VMCS_GUEST_DR7, 0x4aa);
  vcpu_exit_end(&V, &W, ctr);
  assert_int_equal(V.vmx.dr[7], 0x4aa);
}

static void without_load_debug_controls_entry_leaves_dr7_alone(void **state) {
  (void)state;
  setup("nocache+lazydr", NULL, NULL);
  vmcs_poke(&V.vmx.vmcs, VMCS_VM_ENTRY_CONTROLS, 0);
  vcpu_exit_begin(&V, EXIT_REASON_CPUID, 0, &W, ctr);
  vmcs_poke(&V.vmx.vmcs, VMCS_GUEST_DR7, 0x4aa);
  vcpu_exit_end(&V, &W, ctr);
  assert_int_equal(V.vmx.dr[7], DR7_RESET);
}

static void guest_dr7_round_trips_through_an_exit(void **state) {
  (void)state;
  setup("nocache+lazydr", "mov_dr_exiting=false", NULL);
  assert_false(drw(7, 0x401).exits);
  assert_true(cpuid().exits);
  assert_int_equal(V.vmx.dr[7], 0x401);
  assert_int_equal(vmcs_peek(&V.vmx.vmcs, VMCS_GUEST_DR7), 0x401);
}

/* ------------------------------------------------------------------------ */
/* Eager and lazy switching costs                                            */

static void eager_round_trip_saves_and_restores_six_host_debug_registers(void **state) {
  (void)state;
  setup("nocache", NULL, NULL);
  assert_int_equal(P.dr_switch, DR_EAGER);
  assert_true(cpuid().exits);
  assert_int_equal(ctr[CTR_DR_HOST_SAVES], 6);
  assert_int_equal(ctr[CTR_DR_HOST_RESTORES], 6);
  assert_int_equal(work_count(&W, PP_DR_READ), 6);
  assert_int_equal(work_count(&W, PP_DR_WRITE), 6);
  assert_true(cpuid().exits);
  assert_true(cpuid().exits);
  assert_int_equal(ctr[CTR_DR_HOST_SAVES], 18);
  assert_int_equal(ctr[CTR_DR_HOST_RESTORES], 18);
  assert_int_equal(work_count(&W, PP_DR_READ), 18);
  assert_int_equal(work_count(&W, PP_DR_WRITE), 18);
  assert_int_equal(ctr[CTR_DR_GUEST_LOADS], 0);
  assert_int_equal(ctr[CTR_DR_GUEST_SAVES], 0);
}

static void lazy_without_host_debugging_or_guest_use_does_no_dr_work_on_cpuid(void **state) {
  (void)state;
  setup("nocache+lazydr", NULL, NULL);
  assert_int_equal(P.dr_switch, DR_LAZY);
  for (int i = 0; i < 3; i++) assert_true(cpuid().exits);
  assert_int_equal(work_count(&W, PP_DR_READ), 0);
  assert_int_equal(work_count(&W, PP_DR_WRITE), 0);
  assert_int_equal(ctr[CTR_DR_HOST_SAVES], 0);
  assert_int_equal(ctr[CTR_DR_HOST_RESTORES], 0);
  assert_int_equal(ctr[CTR_DR_GUEST_LOADS], 0);
  assert_int_equal(ctr[CTR_DR_GUEST_SAVES], 0);
}

/* ------------------------------------------------------------------------ */
/* KVM's MOV-DR scheme                                                       */

static void first_guest_mov_dr_exits_then_exiting_is_cleared_and_guest_drs_loaded(void **state) {
  (void)state;
  setup("nocache+lazydr", NULL, NULL);
  assert_true(mov_dr_exiting());
  struct exit_decision d = drw(0, 0x1000);
  assert_true(d.exits);
  assert_int_equal(d.reason, EXIT_REASON_DR_ACCESS);
  assert_int_equal(d.qual, 0x0);
  assert_false(mov_dr_exiting());
  assert_true(V.guest_dr_live);
  assert_int_equal(ctr[CTR_DR_GUEST_LOADS], 5);
  /* the instruction re-executed natively after the entry */
  assert_int_equal(V.vmx.dr[0], 0x1000);
  assert_int_equal(V.guest_dr[0], 0x1000);
}

static void next_guest_mov_dr_does_not_exit(void **state) {
  (void)state;
  setup("nocache+lazydr", NULL, NULL);
  assert_true(drw(0, 0x1000).exits);
  struct exit_decision d = drw(1, 0x2000);
  assert_false(d.exits);
  assert_int_equal(d.why, WHY_CONTROL_CLEAR);
  assert_false(drr(0).exits);
  assert_int_equal(V.vmx.dr[1], 0x2000);
  assert_int_equal(V.dr_mismatches, 0);
}

static void next_exit_of_any_kind_reads_guest_drs_back_and_sets_mov_dr_exiting(void **state) {
  (void)state;
  setup("nocache+lazydr", NULL, NULL);
  assert_true(drw(0, 0x1000).exits);
  assert_false(drw(2, 0x3000).exits);
  assert_int_equal(ctr[CTR_DR_GUEST_SAVES], 0);
  vcpu_exit_begin(&V, EXIT_REASON_HLT, 0, &W, ctr);
  assert_true(mov_dr_exiting());
  assert_false(V.dr_wont_exit);
  assert_int_equal(ctr[CTR_DR_GUEST_SAVES], 5);
  assert_int_equal(V.guest_dr[0], 0x1000);
  assert_int_equal(V.guest_dr[2], 0x3000);
  /* the host's registers are back after the exit */
  assert_int_equal(V.vmx.dr[0], V.host_dr[0]);
  assert_int_equal(V.vmx.dr[2], V.host_dr[2]);
  vcpu_exit_end(&V, &W, ctr);
  /* and the guest's next MOV DR exits again */
  struct exit_decision d = drr(2);
  assert_true(d.exits);
  assert_int_equal(d.reason, EXIT_REASON_DR_ACCESS);
  assert_int_equal(d.qual, 0x12);
  assert_int_equal(V.dr_mismatches, 0);
}

static void mov_dr_exiting_is_cleared_again_after_each_first_use(void **state) {
  (void)state;
  setup("nocache+lazydr", NULL, NULL);
  for (int round = 0; round < 3; round++) {
    assert_true(drw(3, 0x4000u + (unsigned)round).exits);
    assert_false(mov_dr_exiting());
    assert_false(drr(3).exits);
    assert_true(cpuid().exits);
    assert_true(mov_dr_exiting());
  }
  assert_int_equal(V.guest_dr[3], 0x4002);
  assert_int_equal(V.dr_mismatches, 0);
}

/* ------------------------------------------------------------------------ */
/* The guest sees its own debug registers                                    */

static const uint64_t guest_vals[4] = { 0xffffffff81001000ull, 0x2000, 0x7fff0000c000ull, 0x4008 };
#define GUEST_DR7 0x4ffull   /* L0-3/G0-3 armed */

static void guest_writes_dr0_3_and_dr7_and_reads_them_back(void) {
  for (unsigned i = 0; i < 4; i++) drw(i, guest_vals[i]);
  drw(7, GUEST_DR7);
  assert_true(cpuid().exits);
  for (unsigned i = 0; i < 4; i++) drr(i);
  drr(7);
  assert_true(cpuid().exits);
  assert_true(step(mkev(EV_HLT, 0, 0, 0)).exits);
  for (unsigned i = 0; i < 4; i++) drr(i);
  drr(7);
  for (unsigned i = 0; i < 4; i++) assert_int_equal(V.guest_dr[i], guest_vals[i]);
  assert_int_equal(V.guest_dr[7], GUEST_DR7);
  assert_int_equal(V.dr_mismatches, 0);
  /* the guest's breakpoints are armed in hardware while it runs */
  for (unsigned i = 0; i < 4; i++) assert_int_equal(V.vmx.dr[i], guest_vals[i]);
  assert_int_equal(V.vmx.dr[7], GUEST_DR7);
}

static void guest_sees_its_own_debug_registers_under_eager_switching(void **state) {
  (void)state;
  setup("nocache", "mov_dr_exiting=false", NULL);   /* native reads and writes */
  guest_writes_dr0_3_and_dr7_and_reads_them_back();
}

static void guest_sees_its_own_debug_registers_under_eager_switching_with_mov_dr_exiting(void **state) {
  (void)state;
  setup("nocache", NULL, NULL);
  guest_writes_dr0_3_and_dr7_and_reads_them_back();
}

static void guest_sees_its_own_debug_registers_under_lazy_switching(void **state) {
  (void)state;
  setup("nocache+lazydr", NULL, NULL);
  guest_writes_dr0_3_and_dr7_and_reads_them_back();
}

static void guest_sees_its_own_debug_registers_under_lazy_switching_with_host_debugger(void **state) {
  (void)state;
  setup("nocache+lazydr", "host_debugged=true", NULL);
  guest_writes_dr0_3_and_dr7_and_reads_them_back();
}

static void lazy_with_host_debugger_restores_host_dr7_after_every_exit(void **state) {
  (void)state;
  setup("nocache+lazydr", "host_debugged=true", NULL);
  uint64_t host7 = V.host_dr[7], host0 = V.host_dr[0];
  assert_int_not_equal(host7, DR7_RESET);
  for (int i = 0; i < 3; i++) {
    vcpu_exit_begin(&V, EXIT_REASON_CPUID, 0, &W, ctr);
    assert_int_equal(V.vmx.dr[7], host7);
    assert_int_equal(V.vmx.dr[0], host0);
    vcpu_exit_end(&V, &W, ctr);
    assert_int_equal(V.vmx.dr[7], DR7_RESET);   /* guest's DR7 while it runs */
  }
  assert_int_equal(ctr[CTR_DR_HOST_RESTORES], 18);
  assert_int_equal(ctr[CTR_DR_HOST_SAVES], 0);   /* taken from the thread's copy */
  /* also after the guest used its debug registers */
  assert_true(drw(0, 0x1000).exits);
  assert_false(drw(7, 0x401).exits);
  vcpu_exit_begin(&V, EXIT_REASON_HLT, 0, &W, ctr);
  assert_int_equal(V.vmx.dr[7], host7);
  assert_int_equal(V.vmx.dr[0], host0);
  assert_int_equal(vmcs_peek(&V.vmx.vmcs, VMCS_GUEST_DR7), 0x401);
  vcpu_exit_end(&V, &W, ctr);
  assert_int_equal(V.vmx.dr[7], 0x401);
  assert_int_equal(V.vmx.dr[0], 0x1000);
}

/* ------------------------------------------------------------------------ */
/* Faulting MOV DR: the register is not written                              */

#define UD_VECTOR 6
#define GP_VECTOR 13

static void native_dr7_write_with_high_bits_faults_and_leaves_dr7_unchanged(void **state) {
  (void)state;
  /* SDM Vol. 2B MOV DR: a 1 written to DR6/DR7 bits 63:32 is #GP(0); nothing is
  ** written, so the next exit cannot save high bits into GUEST_DR7 (which
  ** would fail the VM-entry check "bits 63:32 of DR7 are 0", SDM 26.3.1.1). */
  setup("nocache+lazydr", "mov_dr_exiting=false", NULL);
  assert_false(drw(7, 0x401).exits);
  assert_false(drw(7, 0x100000455ull).exits);
  assert_false(drw(6, 0x1ffff0ff0ull).exits);
  print_message("DR7 0x%llx (expected 0x401), DR6 0x%llx (expected 0xffff0ff0)\n",
                (unsigned long long)V.vmx.dr[7], (unsigned long long)V.vmx.dr[6]);
  assert_int_equal(V.vmx.dr[7], 0x401);
  assert_int_equal(V.vmx.dr[6], 0xffff0ff0);
  assert_true(cpuid().exits);
  assert_int_equal(vmcs_peek(&V.vmx.vmcs, VMCS_GUEST_DR7), 0x401);
  assert_int_equal(V.dr_mismatches, 0);
}

static void lazily_reexecuted_dr7_write_with_high_bits_leaves_dr7_unchanged(void **state) {
  (void)state;
  setup("nocache+lazydr", NULL, NULL);
  assert_true(drw(7, 0x100000401ull).exits);   /* exits, re-executes natively: #GP */
  assert_true(cpuid().exits);
  uint64_t g7 = vmcs_peek(&V.vmx.vmcs, VMCS_GUEST_DR7);
  print_message("GUEST_DR7 0x%llx (expected 0x400)\n", (unsigned long long)g7);
  assert_int_equal(g7, DR7_RESET);
  assert_int_equal(V.guest_dr[7], DR7_RESET);
}

static void native_mov_dr4_dr5_alias_dr6_dr7_when_cr4_de_is_clear(void **state) {
  (void)state;
  setup("nocache+lazydr", "mov_dr_exiting=false", NULL);
  assert_false(drw(5, 0x401).exits);
  assert_int_equal(V.vmx.dr[7], 0x401);
  assert_false(drr(4).exits);
  assert_int_equal(V.dr_mismatches, 0);
}

static void native_mov_dr4_dr5_with_cr4_de_set_is_ud_and_writes_nothing(void **state) {
  (void)state;
  setup("nocache+lazydr", "mov_dr_exiting=false", NULL);
  vcpu_init_reg(&V, 4, CR4_PAE | CR4_PGE | CR4_DE);
  assert_false(drw(5, 0x401).exits);
  print_message("DR7 0x%llx (expected 0x400)\n", (unsigned long long)V.vmx.dr[7]);
  assert_int_equal(V.vmx.dr[7], DR7_RESET);
  assert_int_equal(V.guest_dr[7], DR7_RESET);
}

static void emulated_mov_to_dr5_writes_dr7_when_cr4_de_is_clear(void **state) {
  (void)state;
  /* KVM kvm_set_dr: DR4/DR5 are DR6/DR7 (CR4.DE = 0); the MOV-DR exit has
  ** priority over the alias and #UD checks, so the handler must apply them. */
  setup("nocache", NULL, NULL);
  assert_true(drw(5, 0x401).exits);
  uint64_t g7 = vmcs_peek(&V.vmx.vmcs, VMCS_GUEST_DR7);
  print_message("GUEST_DR7 0x%llx (expected 0x401), guest DR7 0x%llx (expected 0x401)\n",
                (unsigned long long)g7, (unsigned long long)V.guest_dr[7]);
  assert_int_equal(g7, 0x401);
  assert_int_equal(V.guest_dr[7], 0x401);
  assert_int_equal(V.vmx.dr[7], 0x401);        /* loaded at entry */
  assert_true(drw(4, 0x1ffff0ff0ull).exits);  /* DR6 with high bits: #GP */
  assert_int_equal(vmcs_peek(&V.vmx.vmcs, VMCS_VM_ENTRY_INTR_INFO_FIELD) & 0xff, GP_VECTOR);
  assert_int_equal(V.guest_dr[6], 0xffff0ff0);
}

static void emulated_mov_dr5_with_cr4_de_set_injects_ud(void **state) {
  (void)state;
  setup("nocache", NULL, NULL);
  vcpu_init_reg(&V, 4, CR4_PAE | CR4_PGE | CR4_DE);
  vmcs_poke(&V.vmx.vmcs, VMCS_VM_EXIT_INSTRUCTION_LEN, 3);          /* mov %rax,%dr5 */
  uint64_t rip = vmcs_peek(&V.vmx.vmcs, VMCS_GUEST_RIP);
  assert_true(drw(5, 0x401).exits);
  uint64_t info = vmcs_peek(&V.vmx.vmcs, VMCS_VM_ENTRY_INTR_INFO_FIELD);
  print_message("entry interruption info 0x%llx (expected vector 6, valid)\n", (unsigned long long)info);
  assert_int_equal(info & 0xff, UD_VECTOR);
  assert_true(info >> 31 & 1);
  assert_int_equal(V.guest_dr[7], DR7_RESET);
  assert_int_equal(vmcs_peek(&V.vmx.vmcs, VMCS_GUEST_DR7), DR7_RESET);
  assert_int_equal(vmcs_peek(&V.vmx.vmcs, VMCS_GUEST_RIP), rip);   /* a fault: RIP not advanced */
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(debug_control_bits_are_0x4_not_0x2),
    cmocka_unit_test(exit_control_0x2_does_not_save_dr7),
    cmocka_unit_test(entry_control_0x2_does_not_load_dr7),
    cmocka_unit_test(every_vm_exit_loads_dr7_0x400_whatever_the_debug_controls),
    cmocka_unit_test(vm_exit_leaves_dr7_0x400_in_hardware_under_lazy_switching),
    cmocka_unit_test(vm_exit_leaves_dr7_0x400_in_hardware_under_eager_switching),
    cmocka_unit_test(save_debug_controls_saves_dr7_to_guest_dr7_before_loading_0x400),
    cmocka_unit_test(every_vm_exit_clears_debugctl_after_saving_it),
    cmocka_unit_test(emulated_dr7_write_with_high_bits_injects_gp_instead),
    cmocka_unit_test(without_save_debug_controls_guest_dr7_is_not_updated),
    cmocka_unit_test(load_debug_controls_loads_dr7_from_guest_dr7_on_entry),
    cmocka_unit_test(without_load_debug_controls_entry_leaves_dr7_alone),
    cmocka_unit_test(guest_dr7_round_trips_through_an_exit),
    cmocka_unit_test(eager_round_trip_saves_and_restores_six_host_debug_registers),
    cmocka_unit_test(lazy_without_host_debugging_or_guest_use_does_no_dr_work_on_cpuid),
    cmocka_unit_test(first_guest_mov_dr_exits_then_exiting_is_cleared_and_guest_drs_loaded),
    cmocka_unit_test(next_guest_mov_dr_does_not_exit),
    cmocka_unit_test(next_exit_of_any_kind_reads_guest_drs_back_and_sets_mov_dr_exiting),
    cmocka_unit_test(mov_dr_exiting_is_cleared_again_after_each_first_use),
    cmocka_unit_test(guest_sees_its_own_debug_registers_under_eager_switching),
    cmocka_unit_test(guest_sees_its_own_debug_registers_under_eager_switching_with_mov_dr_exiting),
    cmocka_unit_test(guest_sees_its_own_debug_registers_under_lazy_switching),
    cmocka_unit_test(guest_sees_its_own_debug_registers_under_lazy_switching_with_host_debugger),
    cmocka_unit_test(lazy_with_host_debugger_restores_host_dr7_after_every_exit),
    cmocka_unit_test(native_dr7_write_with_high_bits_faults_and_leaves_dr7_unchanged),
    cmocka_unit_test(lazily_reexecuted_dr7_write_with_high_bits_leaves_dr7_unchanged),
    cmocka_unit_test(native_mov_dr4_dr5_alias_dr6_dr7_when_cr4_de_is_clear),
    cmocka_unit_test(native_mov_dr4_dr5_with_cr4_de_set_is_ud_and_writes_nothing),
    cmocka_unit_test(emulated_mov_to_dr5_writes_dr7_when_cr4_de_is_clear),
    cmocka_unit_test(emulated_mov_dr5_with_cr4_de_set_injects_ud),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
