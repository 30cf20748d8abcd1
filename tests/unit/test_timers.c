/* The guest's timer and its spin loops, in the style of kvm-unit-tests: each
** test names its rule and the SDM section that states it (the edition of
** docs/sources.md), sets up the processor's state, and checks the exit (or
** none), its reason and its qualification.  The second half drives vCPUs
** through the engine: KVM's side (the TSC-deadline timer in a host hrtimer
** or in the VMX-preemption timer, the PLE window's growing and shrinking). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "vmx_fixture.h"
#include "mmu_vm.h"

static void expect_exit(struct exit_decision d, unsigned reason, uint64_t qual) {
  if (!d.exits) fail_msg("no exit (why %u), expected %s", d.why, exit_reason_name(reason));
  assert_string_equal(exit_reason_name(d.reason), exit_reason_name(reason));
  assert_int_equal(d.qual, qual);
}

static struct exit_decision timer_expiry(void) {
  struct trace_event e = { .type = EV_VIRQ, .aux = VIRQ_SRC_TIMER, .a = 236 };
  return vmx_decide_arrival(&S, &e);
}

static struct exit_decision spin(uint64_t count, uint64_t gap) { return decide(EV_PAUSE, 0, count, gap); }

/* ---- SDM 25.5.1 "VMX-Preemption Timer" ---- */

/* "activate VMX-preemption timer" = 1: the timer that holds the vCPU's
** deadline counts down to 0 and the VM exits with reason 52, qualification 0
** (SDM 27.2.1), whether or not "external-interrupt exiting" is set. */
static void the_preemption_timer_expires_with_a_preemption_timer_exit(void **state) {
  (void)state;
  set(VMCS_PIN_BASED_VM_EXEC_CONTROL, PIN_EXT_INTR_EXITING | PIN_PREEMPTION_TIMER);
  expect_exit(timer_expiry(), EXIT_REASON_PREEMPTION_TIMER, 0);
  assert_int_equal(timer_expiry().why, WHY_PREEMPTION_TIMER);
  set(VMCS_PIN_BASED_VM_EXEC_CONTROL, PIN_PREEMPTION_TIMER);
  expect_exit(timer_expiry(), EXIT_REASON_PREEMPTION_TIMER, 0);
}

/* SDM 25.2: without the preemption timer the deadline is a host timer, whose
** expiry is a host interrupt: reason 1 iff "external-interrupt exiting". */
static void a_host_timer_expires_with_an_external_interrupt_exit(void **state) {
  (void)state;
  set(VMCS_PIN_BASED_VM_EXEC_CONTROL, PIN_EXT_INTR_EXITING);
  expect_exit(timer_expiry(), EXIT_REASON_EXTERNAL_INTERRUPT, 0);
  set(VMCS_PIN_BASED_VM_EXEC_CONTROL, 0);
  assert_false(timer_expiry().exits);
  assert_int_equal(timer_expiry().why, WHY_CONTROL_CLEAR);
}

/* The REPL's `why` names the control and what counted down. */
static void timer_decisions_explain_themselves(void **state) {
  (void)state;
  char text[256];
  struct trace_event e = { .type = EV_VIRQ, .aux = VIRQ_SRC_TIMER, .a = 236 };
  set(VMCS_PIN_BASED_VM_EXEC_CONTROL, PIN_PREEMPTION_TIMER);
  struct exit_decision d = timer_expiry();
  assert_string_equal(vmx_explain(&d, &e, text, sizeof text),
                      "exits (PREEMPTION_TIMER): \"activate VMX-preemption timer\" is set and the timer holding "
                      "the vCPU's deadline counted down to 0");
  set(VMCS_PIN_BASED_VM_EXEC_CONTROL, PIN_EXT_INTR_EXITING);
  d = timer_expiry();
  assert_string_equal(vmx_explain(&d, &e, text, sizeof text),
                      "exits (EXTERNAL_INTERRUPT): external-interrupt exiting (pin-based) is set");
}

/* ---- SDM 25.1.3 "PAUSE" with "PAUSE-loop exiting" (at CPL 0) ---- */

static void ple(uint64_t gap, uint64_t window) {
  set(VMCS_CPU_BASED_VM_EXEC_CONTROL, CPU_ACTIVATE_SECONDARY);
  set(VMCS_SECONDARY_VM_EXEC_CONTROL, SEC_PAUSE_LOOP_EXITING);
  set(VMCS_PLE_GAP, gap);
  set(VMCS_PLE_WINDOW, window);
}

/* A loop whose PAUSEs are at most PLE_Gap apart exits at the first PAUSE more
** than PLE_Window cycles after the loop's first: PAUSE 103 (4120 cycles) of a
** spin 40 cycles apart under a 4096-cycle window; reason 40, qualification 0. */
static void a_spin_past_the_window_exits(void **state) {
  (void)state;
  ple(128, 4096);
  struct exit_decision d = spin(400, 40);
  expect_exit(d, EXIT_REASON_PAUSE_INSTRUCTION, 0);
  assert_int_equal(d.why, WHY_PLE_WINDOW);
  assert_int_equal(d.detail, 103);
}

/* "exceeds" PLE_Window: a loop of exactly the window does not exit; one
** PAUSE more does. */
static void a_spin_of_exactly_the_window_does_not_exit(void **state) {
  (void)state;
  ple(128, 4000);
  assert_false(spin(101, 40).exits);          /* PAUSE 100 is 4000 cycles after the first */
  assert_int_equal(spin(101, 40).why, WHY_PLE_WITHIN);
  assert_int_equal(spin(101, 40).detail, 4000);
  expect_exit(spin(102, 40), EXIT_REASON_PAUSE_INSTRUCTION, 0);
}

/* "exceeds" PLE_Gap: PAUSEs more than PLE_Gap apart each start a new loop,
** so no spin of them exits; PAUSEs exactly PLE_Gap apart are one loop. */
static void pauses_further_apart_than_the_gap_never_exit(void **state) {
  (void)state;
  ple(128, 4096);
  assert_false(spin(100000, 129).exits);
  assert_int_equal(spin(100000, 129).why, WHY_PLE_GAP);
  expect_exit(spin(100000, 128), EXIT_REASON_PAUSE_INSTRUCTION, 0);
  assert_int_equal(spin(100000, 128).detail, 33);     /* 33 x 128 = 4224 > 4096 */
}

/* A single PAUSE (the first after VM entry starts a loop) never exits by PLE. */
static void a_single_pause_never_exits_by_ple(void **state) {
  (void)state;
  ple(128, 0);
  assert_false(spin(1, 0).exits);
  assert_false(decide(EV_PAUSE, 0, 0, 0).exits);      /* `pause`: one PAUSE */
  expect_exit(spin(2, 1), EXIT_REASON_PAUSE_INSTRUCTION, 0);   /* window 0: the second exits */
}

/* "PAUSE exiting" = 1 exits at every PAUSE, and PLE is then ignored. */
static void pause_exiting_overrides_pause_loop_exiting(void **state) {
  (void)state;
  ple(128, 1u << 30);
  set(VMCS_CPU_BASED_VM_EXEC_CONTROL, CPU_ACTIVATE_SECONDARY | CPU_PAUSE_EXITING);
  struct exit_decision d = spin(10, 40);
  expect_exit(d, EXIT_REASON_PAUSE_INSTRUCTION, 0);
  assert_int_equal(d.why, WHY_CONTROL_SET);
}

/* Both controls clear: PAUSE runs. */
static void no_pause_exit_without_either_control(void **state) {
  (void)state;
  set(VMCS_PLE_GAP, 128);
  assert_false(spin(400, 40).exits);
  assert_int_equal(spin(400, 40).why, WHY_CONTROL_CLEAR);
}

static void ple_decisions_explain_themselves(void **state) {
  (void)state;
  char text[256];
  struct trace_event e = { .type = EV_PAUSE, .a = 400, .b = 40 };
  ple(128, 4096);
  struct exit_decision d = spin(400, 40);
  assert_string_equal(vmx_explain(&d, &e, text, sizeof text),
                      "exits (PAUSE_INSTRUCTION): PAUSE-loop exiting is set and PAUSE 103 of the spin runs more than "
                      "PLE_Window cycles after the first of its loop");
  d = spin(400, 200);
  assert_string_equal(vmx_explain(&d, &e, text, sizeof text),
                      "no exit: the spin's PAUSEs are 200 cycles apart, more than PLE_Gap, so each starts a new loop");
  d = spin(20, 40);
  assert_string_equal(vmx_explain(&d, &e, text, sizeof text),
                      "no exit: the spin's loop lasts 760 cycles, not more than PLE_Window");
  d = (struct exit_decision){ .why = WHY_VCPU_BLOCKED };
  assert_string_equal(vmx_explain(&d, &e, text, sizeof text),
                      "no exit: the vCPU is blocked in the host after an HLT exit, not in VMX non-root operation; "
                      "the interrupt wakes it");
}

/* ---- through the engine: KVM's side ---- */

/* A VM of n vCPUs on skylake-2019 (the preemption timer and PLE). */
static void vm_on_skylake(struct vm *vm, const char *const *sets, int nsets, unsigned n) {
  char err[512];
  assert_int_equal(policy_resolve(&vm->pol, "ept", (char *const *)sets, nsets, err, sizeof err), 0);
  assert_int_equal(profile_load(&vm->prof, "skylake-2019", err, sizeof err), 0);
  assert_int_equal(engine_init(&vm->e, &vm->pol, &vm->prof, n, PAGING_64, err, sizeof err), 0);
}

static const struct vmcs *vmcs0(const struct vm *vm) { return &vm->e.vcpu[0].vmx.vmcs; }

static void wrmsr_deadline(struct vm *vm, uint64_t tsc) { ev(vm, EV_WRMSR, 0, MSR_IA32_TSC_DEADLINE, tsc); }
static void expiry(struct vm *vm) { ev(vm, EV_VIRQ, VIRQ_SRC_TIMER, 236, 0); }

/* The defaults are KVM's hrtimer and no PLE: neither control is set. */
static void the_defaults_use_neither_control(void **state) {
  (void)state;
  struct vm vm;
  vm_on_skylake(&vm, NULL, 0, 1);
  assert_int_equal(vmcs_peek(vmcs0(&vm), VMCS_PIN_BASED_VM_EXEC_CONTROL) & PIN_PREEMPTION_TIMER, 0);
  assert_int_equal(vmcs_peek(vmcs0(&vm), VMCS_SECONDARY_VM_EXEC_CONTROL) & SEC_PAUSE_LOOP_EXITING, 0);
  vm_stop(&vm);
}

/* KVM intercepts IA32_TSC_DEADLINE writes; with the host hrtimer the expiry
** is an EXTERNAL_INTERRUPT exit that also prices the host's timer interrupt,
** and the timer interrupt is injected at its VM entry. */
static void hrtimer_rearm_and_expiry(void **state) {
  (void)state;
  struct vm vm;
  vm_on_skylake(&vm, NULL, 0, 1);
  wrmsr_deadline(&vm, 0x100000);
  assert_int_equal(exits(&vm, EXIT_REASON_MSR_WRITE), 1);
  assert_int_equal(vm.e.vcpu[0].tsc_deadline, 0x100000);
  uint64_t before = vm.e.st.vmm_cycles;
  expiry(&vm);
  assert_int_equal(exits(&vm, EXIT_REASON_EXTERNAL_INTERRUPT), 1);
  assert_int_equal(vm.e.vcpu[0].tsc_deadline, 0);
  assert_false(vm.e.vcpu[0].irq_pending);             /* injected at the exit's entry */
  assert_true(vm.e.st.vmm_cycles - before >= vm.prof.p[PP_HOST_TIMER_IRQ] + vm.prof.p[PP_VM_ROUNDTRIP]);
  vm_stop(&vm);
}

/* With lapic_timer=preemption: the pin control is set; KVM writes the timer
** value at each entry while a deadline is armed, and all ones once after it
** expired (a PREEMPTION_TIMER exit, no host timer interrupt priced). */
static void preemption_timer_rearm_and_expiry(void **state) {
  (void)state;
  struct vm vm;
  vm_on_skylake(&vm, (const char *const[]){ "lapic_timer=preemption" }, 1, 1);
  assert_true(vmcs_peek(vmcs0(&vm), VMCS_PIN_BASED_VM_EXEC_CONTROL) & PIN_PREEMPTION_TIMER);
  uint64_t w0 = vmcs0(&vm)->writes;
  wrmsr_deadline(&vm, 0x100000);
  assert_int_equal(vmcs_peek(vmcs0(&vm), VMCS_VMX_PREEMPTION_TIMER_VALUE), 0x100000);
  assert_int_equal(vmcs0(&vm)->writes - w0, 2);       /* GUEST_RIP, the timer value */
  expiry(&vm);
  assert_int_equal(exits(&vm, EXIT_REASON_PREEMPTION_TIMER), 1);
  assert_int_equal(exits(&vm, EXIT_REASON_EXTERNAL_INTERRUPT), 0);
  assert_int_equal(vmcs_peek(vmcs0(&vm), VMCS_VMX_PREEMPTION_TIMER_VALUE), 0xffffffffu);
  assert_false(vm.e.vcpu[0].irq_pending);
  uint64_t w1 = vmcs0(&vm)->writes;
  ev(&vm, EV_CPUID, 0, 0, 0);                         /* soft-disabled already: no timer write */
  assert_int_equal(vmcs0(&vm)->writes - w1, 1);       /* GUEST_RIP */
  vm_stop(&vm);
}

/* KVM blocks a vCPU that exits on HLT and keeps its deadline in an hrtimer
** meanwhile: the expiry wakes it without an exit of the guest, under either
** timer, and the interrupt is injected as it enters again. */
static void an_expiry_while_halted_wakes_without_an_exit(void **state) {
  (void)state;
  const char *modes[] = { "lapic_timer=hrtimer", "lapic_timer=preemption" };
  for (int i = 0; i < 2; i++) {
    struct vm vm;
    vm_on_skylake(&vm, &modes[i], 1, 1);
    wrmsr_deadline(&vm, 0x100000);
    ev(&vm, EV_HLT, 0, 0, 0);
    assert_true(vm.e.vcpu[0].blocked);
    uint64_t n = vm.e.st.total_exits;
    expiry(&vm);
    assert_int_equal(vm.e.st.total_exits, n);
    assert_false(vm.e.vcpu[0].blocked);
    assert_false(vm.e.vcpu[0].irq_pending);
    assert_int_equal(vm.e.vcpu[0].tsc_deadline, 0);
    vm_stop(&vm);
  }
}

/* With HLT exiting off the vCPU halts in VMX non-root operation, where the
** preemption timer counts on (SDM 25.5.1): its expiry is an exit. */
static void an_expiry_in_a_guest_hlt_exits(void **state) {
  (void)state;
  struct vm vm;
  vm_on_skylake(&vm, (const char *const[]){ "lapic_timer=preemption", "hlt_exiting=false" }, 2, 1);
  ev(&vm, EV_HLT, 0, 0, 0);
  assert_false(vm.e.vcpu[0].blocked);
  expiry(&vm);
  assert_int_equal(exits(&vm, EXIT_REASON_PREEMPTION_TIMER), 1);
  vm_stop(&vm);
}

/* KVM's grow_ple_window on each PLE exit (x2 by default, capped at
** ple_window_max), written to PLE_WINDOW at the next entry; the rest of
** the spin is a new loop under the new window. */
static void the_ple_window_grows_on_each_ple_exit(void **state) {
  (void)state;
  struct vm vm;
  vm_on_skylake(&vm, (const char *const[]){ "ple_gap=128", "ple_window_max=10000" }, 2, 1);
  assert_true(vmcs_peek(vmcs0(&vm), VMCS_SECONDARY_VM_EXEC_CONTROL) & SEC_PAUSE_LOOP_EXITING);
  assert_int_equal(vmcs_peek(vmcs0(&vm), VMCS_PLE_GAP), 128);
  assert_int_equal(vmcs_peek(vmcs0(&vm), VMCS_PLE_WINDOW), 4096);
  ev(&vm, EV_PAUSE, 0, 400, 40);                      /* exits at 103 (4096), then 296 left: at 205 (8192) */
  assert_int_equal(exits(&vm, EXIT_REASON_PAUSE_INSTRUCTION), 2);
  assert_int_equal(vmcs_peek(vmcs0(&vm), VMCS_PLE_WINDOW), 10000);   /* 16384 capped */
  ev(&vm, EV_PAUSE, 0, 20, 40);                       /* short: no exit */
  ev(&vm, EV_PAUSE, 0, 0, 0);                         /* one PAUSE: no exit */
  assert_int_equal(exits(&vm, EXIT_REASON_PAUSE_INSTRUCTION), 2);
  vm_stop(&vm);
}

/* The modifiers as KVM's __grow_ple_window reads them: below the base
** window a factor, at or above it an addend, 0 a reset to the base. */
static void the_grow_modifier_multiplies_adds_or_resets(void **state) {
  (void)state;
  const char *sets[][3] = { { "ple_gap=128", "ple_window=1000", "ple_window_grow=3" },
                            { "ple_gap=128", "ple_window=1000", "ple_window_grow=5000" },
                            { "ple_gap=128", "ple_window=1000", "ple_window_grow=0" } };
  const uint64_t after[] = { 3000, 6000, 1000 };
  for (int i = 0; i < 3; i++) {
    struct vm vm;
    vm_on_skylake(&vm, sets[i], 3, 1);
    ev(&vm, EV_PAUSE, 0, 27, 40);                     /* PAUSE 26 is 1040 cycles in: one exit */
    assert_int_equal(exits(&vm, EXIT_REASON_PAUSE_INSTRUCTION), 1);
    assert_int_equal(vmcs_peek(vmcs0(&vm), VMCS_PLE_WINDOW), after[i]);
    vm_stop(&vm);
  }
}

/* KVM's vmx_sched_in shrinks the window when the thread runs again after
** blocking in HLT: shrink 0 (the default) resets it to ple_window, a
** divisor below it divides. */
static void the_ple_window_shrinks_when_the_vcpu_wakes(void **state) {
  (void)state;
  const char *shrink[] = { "ple_window_shrink=0", "ple_window_shrink=4" };
  const uint64_t after[] = { 4096, 4096 };            /* 16384 / 4 = 4096, never below ple_window */
  for (int i = 0; i < 2; i++) {
    struct vm vm;
    vm_on_skylake(&vm, (const char *const[]){ "ple_gap=128", shrink[i] }, 2, 1);
    ev(&vm, EV_PAUSE, 0, 400, 40);
    assert_int_equal(vmcs_peek(vmcs0(&vm), VMCS_PLE_WINDOW), 16384);
    ev(&vm, EV_HLT, 0, 0, 0);
    expiry(&vm);
    assert_int_equal(vmcs_peek(vmcs0(&vm), VMCS_PLE_WINDOW), after[i]);
    ev(&vm, EV_PAUSE, 0, 400, 40);                    /* exits again at 103 */
    assert_int_equal(exits(&vm, EXIT_REASON_PAUSE_INSTRUCTION), 4);
    vm_stop(&vm);
  }
  struct vm vm;
  vm_on_skylake(&vm, (const char *const[]){ "ple_gap=128", "ple_window=1000", "ple_window_shrink=2" }, 3, 1);
  ev(&vm, EV_PAUSE, 0, 150, 40);                      /* 1000 -> 2000 -> 4000 */
  assert_int_equal(vmcs_peek(vmcs0(&vm), VMCS_PLE_WINDOW), 4000);
  ev(&vm, EV_HLT, 0, 0, 0);
  ev(&vm, EV_RUN, 0, 0, 0);                           /* woken by something else */
  assert_int_equal(vmcs_peek(vmcs0(&vm), VMCS_PLE_WINDOW), 2000);
  vm_stop(&vm);
}

/* SDM 26.2.1.1: the preemption timer or PLE on a CPU without it fails VM
** entry (error 7), naming the control. */
static void a_control_the_cpu_lacks_fails_vm_entry(void **state) {
  (void)state;
  const char *sets[] = { "lapic_timer=preemption", "ple_gap=128" };
  const char *names[] = { "\"activate VMX-preemption timer\"", "\"PAUSE-loop exiting\"" };
  for (int i = 0; i < 2; i++) {
    struct vm vm;
    char err[512];
    assert_int_equal(policy_resolve(&vm.pol, "shadowcache", (char *const *)&sets[i], 1, err, sizeof err), 0);
    assert_int_equal(profile_load(&vm.prof, "core2-2007", err, sizeof err), 0);
    assert_int_equal(engine_init(&vm.e, &vm.pol, &vm.prof, 1, PAGING_64, err, sizeof err), 4);
    if (!strstr(err, names[i])) fail_msg("%s does not name %s", err, names[i]);
    profile_free(&vm.prof);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup(f, reset)
    T(the_preemption_timer_expires_with_a_preemption_timer_exit),
    T(a_host_timer_expires_with_an_external_interrupt_exit),
    T(timer_decisions_explain_themselves),
    T(a_spin_past_the_window_exits),
    T(a_spin_of_exactly_the_window_does_not_exit),
    T(pauses_further_apart_than_the_gap_never_exit),
    T(a_single_pause_never_exits_by_ple),
    T(pause_exiting_overrides_pause_loop_exiting),
    T(no_pause_exit_without_either_control),
    T(ple_decisions_explain_themselves),
    T(the_defaults_use_neither_control),
    T(hrtimer_rearm_and_expiry),
    T(preemption_timer_rearm_and_expiry),
    T(an_expiry_while_halted_wakes_without_an_exit),
    T(an_expiry_in_a_guest_hlt_exits),
    T(the_ple_window_grows_on_each_ple_exit),
    T(the_grow_modifier_multiplies_adds_or_resets),
    T(the_ple_window_shrinks_when_the_vcpu_wakes),
    T(a_control_the_cpu_lacks_fails_vm_entry),
#undef T
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
