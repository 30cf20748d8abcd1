/* Interrupt and NMI windows, and the rarer instruction exits, in the style of
** kvm-unit-tests: each test names its rule and the SDM section that states it
** (the edition of docs/sources.md), sets up the processor's state, and checks
** the exit (or none), its reason and its qualification.  The second half
** drives a vCPU through the engine: the hypervisor's side (injecting a
** pending interrupt or asking for a window, as KVM's inject_pending_event and
** enable_irq_window do) and what the processor does at VM entry. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "vmx_fixture.h"
#include "mmu_vm.h"

static struct exit_decision window(void) { return vmx_decide_window(&S); }

static void expect_exit(struct exit_decision d, unsigned reason, uint64_t qual) {
  if (!d.exits) fail_msg("no exit (why %u), expected %s", d.why, exit_reason_name(reason));
  assert_string_equal(exit_reason_name(d.reason), exit_reason_name(reason));
  assert_int_equal(d.qual, qual);
}

/* ---- SDM 26.6.5 "Interrupt-Window Exiting and Virtual-Interrupt Delivery" ---- */

/* Interrupt-window exiting = 1, RFLAGS.IF = 1, no blocking by STI or MOV SS:
** the exit comes before the next instruction, reason 7, qualification 0. */
static void interrupt_window_exits_when_if_is_set_and_nothing_blocks(void **state) {
  (void)state;
  set(VMCS_CPU_BASED_VM_EXEC_CONTROL, CPU_INTR_WINDOW_EXITING);
  S.rflags_if = true;
  expect_exit(window(), EXIT_REASON_INTERRUPT_WINDOW, 0);
  assert_int_equal(window().why, WHY_WINDOW_OPEN);
}

/* The same with RFLAGS.IF = 0: no exit. */
static void interrupt_window_stays_shut_while_if_is_clear(void **state) {
  (void)state;
  set(VMCS_CPU_BASED_VM_EXEC_CONTROL, CPU_INTR_WINDOW_EXITING);
  S.rflags_if = false;
  assert_false(window().exits);
  assert_int_equal(window().why, WHY_WINDOW_BLOCKED);
}

/* Table 24-3: blocking by STI and by MOV SS each keep the window shut. */
static void blocking_by_sti_or_mov_ss_keeps_the_interrupt_window_shut(void **state) {
  (void)state;
  set(VMCS_CPU_BASED_VM_EXEC_CONTROL, CPU_INTR_WINDOW_EXITING);
  S.rflags_if = true;
  S.interruptibility = INTR_BLOCK_STI;
  assert_false(window().exits);
  S.interruptibility = INTR_BLOCK_MOVSS;
  assert_false(window().exits);
  S.interruptibility = INTR_BLOCK_NMI;          /* blocking by NMI does not block interrupts */
  expect_exit(window(), EXIT_REASON_INTERRUPT_WINDOW, 0);
}

/* With the control clear the guest enabling interrupts exits for nothing. */
static void no_window_exit_without_the_control(void **state) {
  (void)state;
  S.rflags_if = true;
  assert_false(window().exits);
  assert_int_equal(window().why, WHY_NO_WINDOW);
}

/* The REPL's `why` says which control and which state decided. */
static void window_decisions_explain_control_and_state(void **state) {
  (void)state;
  char text[256];
  struct trace_event sti = { .type = EV_STI };
  set(VMCS_CPU_BASED_VM_EXEC_CONTROL, CPU_INTR_WINDOW_EXITING);
  S.rflags_if = true;
  struct exit_decision d = window();
  assert_string_equal(vmx_explain(&d, &sti, text, sizeof text),
                      "exits (INTERRUPT_WINDOW): interrupt-window exiting is set and the guest can take an "
                      "interrupt now (RFLAGS.IF = 1, no blocking by STI or MOV SS)");
  S.rflags_if = false;
  d = window();
  assert_string_equal(vmx_explain(&d, &sti, text, sizeof text),
                      "no exit: interrupt-window exiting is set but the guest still blocks interrupts "
                      "(RFLAGS.IF = 0, or blocking by STI or MOV SS)");
}

/* ---- SDM 26.6.6 "NMI-Window Exiting" ---- */

/* NMI-window exiting = 1 with "virtual NMIs" = 1 and no blocking by NMI or
** MOV SS: exit with reason 8, qualification 0; RFLAGS.IF does not matter. */
static void nmi_window_exits_when_nmis_are_unblocked(void **state) {
  (void)state;
  set(VMCS_PIN_BASED_VM_EXEC_CONTROL, PIN_VIRTUAL_NMIS);
  set(VMCS_CPU_BASED_VM_EXEC_CONTROL, CPU_NMI_WINDOW_EXITING);
  S.rflags_if = false;
  expect_exit(window(), EXIT_REASON_NMI_WINDOW, 0);
  S.interruptibility = INTR_BLOCK_NMI;
  assert_false(window().exits);
  S.interruptibility = INTR_BLOCK_MOVSS;
  assert_false(window().exits);
}

/* Without "virtual NMIs" the control has no effect (SDM 26.2.1.1 refuses it). */
static void nmi_window_needs_virtual_nmis(void **state) {
  (void)state;
  set(VMCS_CPU_BASED_VM_EXEC_CONTROL, CPU_NMI_WINDOW_EXITING);
  assert_false(window().exits);
}

/* An NMI has priority over a maskable interrupt (SDM 6.9 of Vol. 3A): both
** windows open, the NMI window's exit is taken. */
static void nmi_window_comes_before_the_interrupt_window(void **state) {
  (void)state;
  set(VMCS_PIN_BASED_VM_EXEC_CONTROL, PIN_VIRTUAL_NMIS);
  set(VMCS_CPU_BASED_VM_EXEC_CONTROL, CPU_NMI_WINDOW_EXITING | CPU_INTR_WINDOW_EXITING);
  S.rflags_if = true;
  expect_exit(window(), EXIT_REASON_NMI_WINDOW, 0);
}

/* ---- the processor's side of STI, CLI, IRET and event delivery ---- */

static void sti_cli_and_iret_set_the_guest_interrupt_state(void **state) {
  (void)state;
  struct vmx_native r = { 0 };
  vmx_execute(&S, &(struct trace_event){ .type = EV_STI }, &r);
  assert_true(S.rflags_if);
  assert_false(S.interruptibility & INTR_BLOCK_STI);   /* the record covers the instruction in the shadow */
  vmx_execute(&S, &(struct trace_event){ .type = EV_CLI }, &r);
  assert_false(S.rflags_if);
  S.interruptibility = INTR_BLOCK_NMI;
  vmx_execute(&S, &(struct trace_event){ .type = EV_IRET, .aux = IRET_AUX_IF0 }, &r);
  assert_false(S.rflags_if);
  assert_int_equal(S.interruptibility, 0);             /* IRET ends blocking by NMI */
  vmx_execute(&S, &(struct trace_event){ .type = EV_IRET }, &r);
  assert_true(S.rflags_if);
}

/* SDM 26.5.1: an injected external interrupt is delivered through the IDT
** (an interrupt gate clears IF); an NMI also blocks NMIs; the valid bit clears. */
static void delivery_clears_if_and_an_nmi_blocks_nmis(void **state) {
  (void)state;
  S.rflags_if = true;
  set(VMCS_VM_ENTRY_INTR_INFO_FIELD, 0xec | INTR_TYPE_EXTERNAL << 8 | INTR_INFO_VALID);
  vmx_cpu_entry(&S);
  assert_false(S.rflags_if);
  assert_int_equal(S.interruptibility, 0);
  assert_int_equal(vmcs_peek(&S.vmcs, VMCS_VM_ENTRY_INTR_INFO_FIELD) & INTR_INFO_VALID, 0);
  S.interruptibility = INTR_BLOCK_MOVSS;              /* 26.6.1: a vectoring entry ends it */
  set(VMCS_VM_ENTRY_INTR_INFO_FIELD, 2 | INTR_TYPE_NMI << 8 | INTR_INFO_VALID);
  vmx_cpu_entry(&S);
  assert_int_equal(S.interruptibility, INTR_BLOCK_NMI);
  /* A hardware exception the hypervisor reflects is left to the guest's IDT as before. */
  S.rflags_if = true;
  set(VMCS_VM_ENTRY_INTR_INFO_FIELD, 13 | INTR_TYPE_HW_EXC << 8 | INTR_INFO_VALID);
  vmx_cpu_entry(&S);
  assert_true(S.rflags_if);
}

/* ---- SDM 25.1.2, 25.1.3, 25.2, 25.4.2: the rarer instruction exits ---- */

/* 25.1.3: RDTSCP exits iff "RDTSC exiting" and "enable RDTSCP" are both 1;
** without "enable RDTSCP" it is #UD, no exit. */
static void rdtscp_exits_with_rdtsc_exiting_and_enable_rdtscp(void **state) {
  (void)state;
  set(VMCS_CPU_BASED_VM_EXEC_CONTROL, CPU_RDTSC_EXITING | CPU_ACTIVATE_SECONDARY);
  assert_int_equal(decide(EV_RDTSCP, 0, 0, 0).why, WHY_UD);
  set(VMCS_SECONDARY_VM_EXEC_CONTROL, SEC_ENABLE_RDTSCP);
  expect_exit(decide(EV_RDTSCP, 0, 0, 0), EXIT_REASON_RDTSCP, 0);
  set(VMCS_CPU_BASED_VM_EXEC_CONTROL, CPU_ACTIVATE_SECONDARY);
  assert_false(decide(EV_RDTSCP, 0, 0, 0).exits);
  assert_int_equal(decide(EV_RDTSCP, 0, 0, 0).why, WHY_CONTROL_CLEAR);
}

/* 25.1.3: INVPCID exits iff "INVLPG exiting" and "enable INVPCID" are both 1. */
static void invpcid_exits_with_invlpg_exiting_and_enable_invpcid(void **state) {
  (void)state;
  set(VMCS_CPU_BASED_VM_EXEC_CONTROL, CPU_INVLPG_EXITING | CPU_ACTIVATE_SECONDARY);
  assert_int_equal(decide(EV_INVPCID, 0, 0x400000, 1).why, WHY_UD);
  set(VMCS_SECONDARY_VM_EXEC_CONTROL, SEC_ENABLE_INVPCID);
  expect_exit(decide(EV_INVPCID, 0, 0x400000, 1), EXIT_REASON_INVPCID, 0);
  set(VMCS_CPU_BASED_VM_EXEC_CONTROL, CPU_ACTIVATE_SECONDARY);   /* EPT: INVLPG exiting clear */
  assert_false(decide(EV_INVPCID, 0, 0x400000, 1).exits);
}

/* 25.1.3: MWAIT and MONITOR exit iff their primary control is 1 (bits 10, 29). */
static void mwait_and_monitor_exit_by_their_controls(void **state) {
  (void)state;
  assert_false(decide(EV_MWAIT, 0, 0, 0).exits);
  assert_false(decide(EV_MONITOR, 0, 0, 0).exits);
  set(VMCS_CPU_BASED_VM_EXEC_CONTROL, CPU_MWAIT_EXITING);
  expect_exit(decide(EV_MWAIT, 0, 0, 0), EXIT_REASON_MWAIT_INSTRUCTION, 0);
  assert_false(decide(EV_MONITOR, 0, 0, 0).exits);
  set(VMCS_CPU_BASED_VM_EXEC_CONTROL, CPU_MONITOR_EXITING);
  expect_exit(decide(EV_MONITOR, 0, 0, 0), EXIT_REASON_MONITOR_INSTRUCTION, 0);
}

/* 25.4.2: every task switch exits; table 27-2: selector in 15:0, source in 31:30. */
static void a_task_switch_always_exits_with_selector_and_source(void **state) {
  (void)state;
  expect_exit(decide(EV_TASK_SWITCH, 3, 0x28, 0), EXIT_REASON_TASK_SWITCH, 0x28 | 3ull << 30);
  expect_exit(decide(EV_TASK_SWITCH, 0, 0x50, 0), EXIT_REASON_TASK_SWITCH, 0x50);
}

/* 25.2: a triple fault always exits. */
static void a_triple_fault_always_exits(void **state) {
  (void)state;
  expect_exit(decide(EV_TRIPLE_FAULT, 0, 0, 0), EXIT_REASON_TRIPLE_FAULT, 0);
  assert_int_equal(decide(EV_TRIPLE_FAULT, 0, 0, 0).why, WHY_ALWAYS);
}

/* 25.1.2: the VMX instructions exit unconditionally, each with its own reason. */
static void vmx_instructions_of_a_nested_guest_always_exit(void **state) {
  (void)state;
  static const unsigned reasons[] = { EXIT_REASON_VMCLEAR, EXIT_REASON_VMLAUNCH, EXIT_REASON_VMPTRLD,
                                      EXIT_REASON_VMPTRST, EXIT_REASON_VMREAD, EXIT_REASON_VMRESUME,
                                      EXIT_REASON_VMWRITE, EXIT_REASON_VMOFF, EXIT_REASON_VMON,
                                      EXIT_REASON_INVEPT, EXIT_REASON_INVVPID };
  for (size_t i = 0; i < sizeof reasons / sizeof *reasons; i++)
    expect_exit(decide(EV_VMX, 0, reasons[i], 0), reasons[i], 0);
  assert_false(decide(EV_VMX, 0, EXIT_REASON_CPUID, 0).exits);   /* not a VMX instruction */
}

/* ---- through the engine: the hypervisor's side ---- */

static void interrupt(struct vm *vm, unsigned type, unsigned aux, uint64_t a) { ev(vm, type, aux, a, 0); }
static uint64_t vcpu_ctl(struct vm *vm) { return vmcs_peek(&vm->e.vcpu[0].vmx.vmcs, VMCS_CPU_BASED_VM_EXEC_CONTROL); }

/* An interrupt for an interruptible guest is injected: no window, no exit. */
static void an_interrupt_for_an_interruptible_guest_is_injected_without_exit(void **state) {
  (void)state;
  struct vm vm;
  vm_start(&vm, "ept", NULL, 0, PAGING_64);
  interrupt(&vm, EV_VIRQ, 0, 0xec);
  assert_int_equal(vm.e.st.total_exits, 0);
  assert_false(vm.e.vcpu[0].irq_pending);
  assert_false(vm.e.vcpu[0].vmx.rflags_if);          /* the guest is in its handler */
  assert_int_equal(vcpu_ctl(&vm) & CPU_INTR_WINDOW_EXITING, 0);
  vm_stop(&vm);
}

/* KVM's enable_irq_window: IF = 0 when the interrupt comes, so the hypervisor
** asks for the window; the guest's STI opens it: one INTERRUPT_WINDOW exit,
** whose handler stops asking and whose VM entry injects the interrupt. */
static void cli_virq_sti_takes_one_interrupt_window_exit(void **state) {
  (void)state;
  struct vm vm;
  vm_start(&vm, "ept", NULL, 0, PAGING_64);
  interrupt(&vm, EV_CLI, 0, 0);
  interrupt(&vm, EV_VIRQ, 0, 0xec);
  assert_int_equal(vm.e.st.total_exits, 0);
  assert_true(vm.e.vcpu[0].irq_pending);
  assert_true(vcpu_ctl(&vm) & CPU_INTR_WINDOW_EXITING);
  interrupt(&vm, EV_STI, 0, 0);
  assert_int_equal(exits(&vm, EXIT_REASON_INTERRUPT_WINDOW), 1);
  assert_int_equal(vm.e.st.total_exits, 1);
  assert_false(vm.e.vcpu[0].irq_pending);
  assert_int_equal(vcpu_ctl(&vm) & CPU_INTR_WINDOW_EXITING, 0);
  assert_false(vm.e.vcpu[0].vmx.rflags_if);          /* delivered at the entry */
  vm_stop(&vm);
}

/* KVM's enable_nmi_window: an NMI while the guest handles one waits for its
** IRET: one NMI_WINDOW exit, and the second NMI is injected at its entry. */
static void a_second_nmi_waits_for_iret_through_one_nmi_window_exit(void **state) {
  (void)state;
  struct vm vm;
  vm_start(&vm, "ept", NULL, 0, PAGING_64);
  interrupt(&vm, EV_VNMI, 0, 0);                      /* delivered: NMIs now blocked */
  assert_int_equal(vm.e.vcpu[0].vmx.interruptibility, INTR_BLOCK_NMI);
  interrupt(&vm, EV_VNMI, 0, 0);
  assert_true(vcpu_ctl(&vm) & CPU_NMI_WINDOW_EXITING);
  assert_int_equal(vm.e.st.total_exits, 0);
  interrupt(&vm, EV_IRET, 0, 0);
  assert_int_equal(exits(&vm, EXIT_REASON_NMI_WINDOW), 1);
  assert_int_equal(vm.e.st.total_exits, 1);
  assert_false(vm.e.vcpu[0].nmi_pending);
  assert_int_equal(vm.e.vcpu[0].vmx.interruptibility, INTR_BLOCK_NMI);   /* the second NMI's handler */
  vm_stop(&vm);
}

/* An exit for another reason while the guest still has IF = 0 leaves the
** interrupt pending and the window asked for; IRET or POPF setting IF opens it. */
static void an_exit_while_interrupts_are_blocked_keeps_the_interrupt_pending(void **state) {
  (void)state;
  struct vm vm;
  vm_start(&vm, "ept", NULL, 0, PAGING_64);
  interrupt(&vm, EV_CLI, 0, 0);
  interrupt(&vm, EV_VIRQ, 0, 0x30);
  interrupt(&vm, EV_IRET, 0, 0);                      /* IF = 1 again: the window opens */
  assert_int_equal(exits(&vm, EXIT_REASON_INTERRUPT_WINDOW), 1);
  interrupt(&vm, EV_CLI, 0, 0);
  interrupt(&vm, EV_VIRQ, 0, 0x31);                   /* waits: window asked for */
  ev(&vm, EV_CPUID, 0, 0, 0);                         /* an exit while IF = 0: still waits */
  assert_true(vm.e.vcpu[0].irq_pending);
  interrupt(&vm, EV_STI, STI_AUX_POPF, 0);
  assert_int_equal(exits(&vm, EXIT_REASON_INTERRUPT_WINDOW), 2);
  assert_false(vm.e.vcpu[0].irq_pending);
  vm_stop(&vm);
}

/* Under shadow paging on a CPU without EPT, RDTSCP and INVPCID are not
** enabled for the guest (the profile's capabilities), and MWAIT exits. */
static void the_policy_enables_rdtscp_and_invpcid_only_with_ept(void **state) {
  (void)state;
  struct vm vm;
  vm_start(&vm, "ept", (const char *const[]){ "rdtsc_exiting=true" }, 1, PAGING_64);
  ev(&vm, EV_RDTSCP, 0, 0, 0);
  ev(&vm, EV_MWAIT, 0, 0, 0);
  ev(&vm, EV_MONITOR, 0, 0, 0);
  assert_int_equal(exits(&vm, EXIT_REASON_RDTSCP), 1);
  assert_int_equal(exits(&vm, EXIT_REASON_MWAIT_INSTRUCTION), 1);
  assert_int_equal(exits(&vm, EXIT_REASON_MONITOR_INSTRUCTION), 1);
  vm_stop(&vm);
  vm_start(&vm, "shadowcache", NULL, 0, PAGING_64);
  ev(&vm, EV_INVPCID, 0, 0x400000, 1);
  assert_int_equal(exits(&vm, EXIT_REASON_INVPCID), 0);
  vm_stop(&vm);
}

/* ---- SDM 25.2: an interrupt arriving from outside the vCPU ---- */

static struct exit_decision arrival(unsigned source) {
  struct trace_event e = { .type = EV_VIRQ, .aux = (uint8_t)source, .a = 33 };
  return vmx_decide_arrival(&S, &e);
}

/* A device's interrupt, an IPI or a timer reaches the processor as a host
** interrupt: "external-interrupt exiting" = 1 makes it exit (reason 1,
** qualification 0); with the control clear it does not. */
static void an_arriving_interrupt_exits_iff_external_interrupt_exiting(void **state) {
  (void)state;
  set(VMCS_PIN_BASED_VM_EXEC_CONTROL, PIN_EXT_INTR_EXITING);
  expect_exit(arrival(VIRQ_SRC_DEVICE), EXIT_REASON_EXTERNAL_INTERRUPT, 0);
  expect_exit(arrival(VIRQ_SRC_IPI), EXIT_REASON_EXTERNAL_INTERRUPT, 0);
  expect_exit(arrival(VIRQ_SRC_TIMER), EXIT_REASON_EXTERNAL_INTERRUPT, 0);
  set(VMCS_PIN_BASED_VM_EXEC_CONTROL, 0);
  assert_false(arrival(VIRQ_SRC_DEVICE).exits);
  assert_int_equal(arrival(VIRQ_SRC_DEVICE).why, WHY_CONTROL_CLEAR);
}

/* An interrupt the hypervisor already holds (no source: format version 2
** traces) has no arrival of its own, whatever the controls. */
static void an_interrupt_the_host_holds_has_no_arrival_exit(void **state) {
  (void)state;
  set(VMCS_PIN_BASED_VM_EXEC_CONTROL, PIN_EXT_INTR_EXITING);
  assert_false(arrival(VIRQ_SRC_HOST).exits);
  assert_int_equal(arrival(VIRQ_SRC_HOST).why, WHY_HELD_BY_HOST);
}

/* SDM 26.2.1.1: "IPI virtualization" on a CPU without tertiary controls
** fails VM entry with error 7, naming the control. */
static void ipi_virtualization_without_tertiary_controls_fails_vm_entry(void **state) {
  (void)state;
  set(VMCS_CPU_BASED_VM_EXEC_CONTROL, CPU_ACTIVATE_TERTIARY);
  set(VMCS_TERTIARY_VM_EXEC_CONTROL, TER_IPI_VIRT);
  struct vmx_caps caps = { .pin_allowed1 = ~0u, .cpu_allowed1 = ~(uint32_t)CPU_ACTIVATE_TERTIARY, .cr3_targets = 4 };
  char msg[400];
  assert_int_equal(vmx_entry_check(&S, &caps, msg, sizeof msg), 7);
  assert_non_null(strstr(msg, "\"IPI virtualization\""));
  assert_non_null(strstr(msg, "no tertiary"));
  caps.cpu_allowed1 = ~0u;
  caps.ter_allowed1 = TER_IPI_VIRT;
  assert_int_equal(vmx_entry_check(&S, &caps, msg, sizeof msg), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup(f, reset)
    T(an_arriving_interrupt_exits_iff_external_interrupt_exiting),
    T(an_interrupt_the_host_holds_has_no_arrival_exit),
    T(ipi_virtualization_without_tertiary_controls_fails_vm_entry),
    T(interrupt_window_exits_when_if_is_set_and_nothing_blocks),
    T(interrupt_window_stays_shut_while_if_is_clear),
    T(blocking_by_sti_or_mov_ss_keeps_the_interrupt_window_shut),
    T(no_window_exit_without_the_control),
    T(window_decisions_explain_control_and_state),
    T(nmi_window_exits_when_nmis_are_unblocked),
    T(nmi_window_needs_virtual_nmis),
    T(nmi_window_comes_before_the_interrupt_window),
    T(sti_cli_and_iret_set_the_guest_interrupt_state),
    T(delivery_clears_if_and_an_nmi_blocks_nmis),
    T(rdtscp_exits_with_rdtsc_exiting_and_enable_rdtscp),
    T(invpcid_exits_with_invlpg_exiting_and_enable_invpcid),
    T(mwait_and_monitor_exit_by_their_controls),
    T(a_task_switch_always_exits_with_selector_and_source),
    T(a_triple_fault_always_exits),
    T(vmx_instructions_of_a_nested_guest_always_exit),
    T(an_interrupt_for_an_interruptible_guest_is_injected_without_exit),
    T(cli_virq_sti_takes_one_interrupt_window_exit),
    T(a_second_nmi_waits_for_iret_through_one_nmi_window_exit),
    T(an_exit_while_interrupts_are_blocked_keeps_the_interrupt_pending),
    T(the_policy_enables_rdtscp_and_invpcid_only_with_ept),
#undef T
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
