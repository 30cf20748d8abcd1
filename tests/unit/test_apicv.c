/* APIC virtualization in the style of kvm-unit-tests (x86/apic.c, x86/vmx_tests.c):
** each test names its rule and the SDM section that states it (the edition of
** docs/sources.md, chapter 29 "APIC Virtualization and Virtual Interrupts"),
** sets up the processor's state, and checks the exit (or none), its reason
** and its qualification.  The second half drives vCPUs through the engine
** under the apicv and ipiv presets: the hypervisor's side as KVM does it. */
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

static void expect_stay(struct exit_decision d, unsigned why) {
  if (d.exits) fail_msg("exits with %s, expected none", exit_reason_name(d.reason));
  assert_int_equal(d.why, why);
}

static struct exit_decision apic_read(unsigned off) { return decide(EV_APIC, 0, off, 0); }
static struct exit_decision apic_write(unsigned off, uint64_t v) { return decide(EV_APIC, APIC_AUX_WRITE, off, v); }

/* The VMCS of an xAPIC guest: TPR shadow, virtualize APIC accesses, and the
** secondary controls given. */
static void xapic(uint32_t secondary) {
  set(VMCS_CPU_BASED_VM_EXEC_CONTROL, CPU_TPR_SHADOW | CPU_ACTIVATE_SECONDARY);
  set(VMCS_SECONDARY_VM_EXEC_CONTROL, SEC_APIC_ACCESS | secondary);
}

/* ICR values: shorthand self (bits 19:18 = 01), fixed, edge. */
#define ICR_SELF(vec)   (0x40000ull | (vec))
#define ICR_TO(dest, vec) ((uint64_t)(dest) << 56 | (vec))

/* ---- SDM 29.4.2, 29.4.3.1: which accesses to the APIC-access page are virtualized ---- */

/* Without APIC-register virtualization and virtual-interrupt delivery only
** the TPR (080H) is virtualized; anything else is an APIC-access exit,
** qualification offset | access type << 12 (table 27-6). */
static void only_the_tpr_is_virtualized_without_register_virtualization(void **state) {
  (void)state;
  xapic(0);
  expect_stay(apic_read(APIC_TPR), WHY_APIC_VIRTUALIZED);
  expect_stay(apic_write(APIC_TPR, 0), WHY_TPR_VIRTUALIZED);
  expect_exit(apic_read(APIC_ICR), EXIT_REASON_APIC_ACCESS, 0x300);
  expect_exit(apic_write(APIC_EOI, 0), EXIT_REASON_APIC_ACCESS, 0x10b0);
  set(VMCS_CPU_BASED_VM_EXEC_CONTROL, CPU_ACTIVATE_SECONDARY);   /* no TPR shadow: nothing is */
  expect_exit(apic_read(APIC_TPR), EXIT_REASON_APIC_ACCESS, 0x080);
}

/* With virtual-interrupt delivery alone, EOI (0B0H) and ICR low (300H) join the TPR. */
static void virtual_interrupt_delivery_alone_virtualizes_tpr_eoi_and_icr(void **state) {
  (void)state;
  xapic(SEC_VIRTUAL_INTR_DELIVERY);
  expect_stay(apic_read(APIC_ICR), WHY_APIC_VIRTUALIZED);
  expect_stay(apic_write(APIC_EOI, 0), WHY_EOI_VIRTUALIZED);
  expect_exit(apic_write(APIC_TMICT, 1000), EXIT_REASON_APIC_ACCESS, 0x1380);
  expect_exit(apic_read(0x020), EXIT_REASON_APIC_ACCESS, 0x020);
}

/* With APIC-register virtualization: reads of the listed registers are
** virtualized, the current count (390H) is not; APIC ID and version are
** read only, so a write of them exits. */
static void register_virtualization_reads_listed_registers_only(void **state) {
  (void)state;
  xapic(SEC_APIC_REGISTER_VIRT);
  static const unsigned reads[] = { 0x020, 0x030, 0x080, 0x0b0, 0x0f0, 0x100, 0x170, 0x200, 0x280, 0x300, 0x310,
                                    0x320, 0x380, 0x3e0 };
  for (size_t i = 0; i < sizeof reads / sizeof *reads; i++) expect_stay(apic_read(reads[i]), WHY_APIC_VIRTUALIZED);
  expect_exit(apic_read(0x390), EXIT_REASON_APIC_ACCESS, 0x390);
  expect_exit(apic_write(0x020, 0), EXIT_REASON_APIC_ACCESS, 0x1020);
  expect_exit(apic_write(0x100, 0), EXIT_REASON_APIC_ACCESS, 0x1100);   /* ISR: read only */
}

/* ---- SDM 29.4.3.2, 29.4.3.3: APIC-write emulation and APIC-write exits ---- */

/* A virtualized write that APIC-write emulation does not complete traps
** after it: APIC_WRITE (56), qualification the page offset. */
static void a_virtualized_write_of_another_register_traps_as_apic_write(void **state) {
  (void)state;
  xapic(SEC_APIC_REGISTER_VIRT);
  expect_exit(apic_write(APIC_TMICT, 1000), EXIT_REASON_APIC_WRITE, 0x380);
  expect_exit(apic_write(0x0f0, 0x1ff), EXIT_REASON_APIC_WRITE, 0x0f0);
  expect_exit(apic_write(APIC_EOI, 0), EXIT_REASON_APIC_WRITE, 0x0b0);   /* EOI without VID */
  expect_exit(apic_write(APIC_ICR, ICR_TO(1, 0xfd)), EXIT_REASON_APIC_WRITE, 0x300);
}

/* SDM 29.4.3.2: a virtualized write of the ICR's high half (310H) completes
** without an exit: the processor clears bytes 2:0 of VICR_HI and does
** nothing else.  It is virtualized only with APIC-register virtualization
** (29.4.3.1); with virtual-interrupt delivery alone it is an APIC-access
** exit, qualification 310H | write access (1 << 12). */
static void a_write_of_the_icr_high_half_is_virtualized_without_exit(void **state) {
  (void)state;
  xapic(SEC_APIC_REGISTER_VIRT);
  expect_stay(apic_write(APIC_ICR_HIGH, 1u << 24), WHY_APIC_VIRTUALIZED);
  xapic(SEC_APIC_REGISTER_VIRT | SEC_VIRTUAL_INTR_DELIVERY);
  expect_stay(apic_write(APIC_ICR_HIGH, 1u << 24), WHY_APIC_VIRTUALIZED);
  xapic(SEC_VIRTUAL_INTR_DELIVERY);
  expect_exit(apic_write(APIC_ICR_HIGH, 1u << 24), EXIT_REASON_APIC_ACCESS, 0x1310);
}

/* Self-IPI virtualization (29.1.5): with VID, an ICR write with shorthand
** self, fixed, edge and a vector >= 16 completes without an exit; level
** trigger, another mode or a vector below 16 traps as APIC_WRITE. */
static void a_self_ipi_is_virtualized_with_virtual_interrupt_delivery(void **state) {
  (void)state;
  xapic(SEC_APIC_REGISTER_VIRT | SEC_VIRTUAL_INTR_DELIVERY);
  struct exit_decision d = apic_write(APIC_ICR, ICR_SELF(0x30));
  expect_stay(d, WHY_SELF_IPI_VIRTUALIZED);
  assert_int_equal(d.detail, 0x30);
  expect_exit(apic_write(APIC_ICR, ICR_SELF(0x30) | ICR_LEVEL), EXIT_REASON_APIC_WRITE, 0x300);
  expect_exit(apic_write(APIC_ICR, ICR_SELF(0x0f)), EXIT_REASON_APIC_WRITE, 0x300);
  expect_exit(apic_write(APIC_ICR, ICR_SELF(0x30) | 4u << 8), EXIT_REASON_APIC_WRITE, 0x300);   /* NMI */
}

/* IPI virtualization: a fixed, edge, physical IPI without shorthand is sent
** without an exit (detail: the destination); logical destination mode traps. */
static void ipi_virtualization_sends_a_fixed_physical_ipi_without_exit(void **state) {
  (void)state;
  xapic(SEC_APIC_REGISTER_VIRT | SEC_VIRTUAL_INTR_DELIVERY);
  set(VMCS_CPU_BASED_VM_EXEC_CONTROL, CPU_TPR_SHADOW | CPU_ACTIVATE_SECONDARY | CPU_ACTIVATE_TERTIARY);
  set(VMCS_TERTIARY_VM_EXEC_CONTROL, TER_IPI_VIRT);
  struct exit_decision d = apic_write(APIC_ICR, ICR_TO(3, 0xfd));
  expect_stay(d, WHY_IPI_VIRTUALIZED);
  assert_int_equal(d.detail, 3);
  expect_exit(apic_write(APIC_ICR, ICR_TO(3, 0xfd) | ICR_DEST_LOGICAL), EXIT_REASON_APIC_WRITE, 0x300);
  expect_exit(apic_write(APIC_ICR, 0xc0000ull | 0xfd), EXIT_REASON_APIC_WRITE, 0x300);   /* all but self */
}

/* ---- SDM 29.1.4: EOI virtualization and EOI-induced exits ---- */

/* The EOI's vector is SVI; its EOI-exit-bitmap bit set: EOI_INDUCED (45),
** qualification the vector; clear: no exit. */
static void an_eoi_exits_iff_the_vectors_eoi_exit_bitmap_bit_is_set(void **state) {
  (void)state;
  xapic(SEC_APIC_REGISTER_VIRT | SEC_VIRTUAL_INTR_DELIVERY);
  set(VMCS_GUEST_INTR_STATUS, 0x71u << 8);                   /* SVI = 0x71 */
  expect_stay(apic_write(APIC_EOI, 0), WHY_EOI_VIRTUALIZED);
  set(VMCS_EOI_EXIT_BITMAP1, 1ull << (0x71 - 64));
  expect_exit(apic_write(APIC_EOI, 0), EXIT_REASON_EOI_INDUCED, 0x71);
  set(VMCS_GUEST_INTR_STATUS, 0x72u << 8);                   /* another vector in service */
  expect_stay(apic_write(APIC_EOI, 0), WHY_EOI_VIRTUALIZED);
}

/* The processor's part: the vector leaves VISR and SVI takes the next one. */
static void eoi_virtualization_clears_the_vector_from_visr(void **state) {
  (void)state;
  S.visr[0] = 1ull << 0x30;
  S.visr[1] = 1ull << (0x71 - 64);
  set(VMCS_GUEST_INTR_STATUS, 0x71u << 8);
  assert_int_equal(vmx_cpu_eoi_virtual(&S), 0x71);
  assert_int_equal(vapic_svi(&S), 0x30);
  assert_int_equal(S.visr[1], 0);
}

/* ---- SDM 29.1.2, 29.3: TPR virtualization ---- */

/* Without VID a TPR write below TPR_THRESHOLD[3:0] traps as TPR_BELOW_THRESHOLD
** (43), qualification 0; with VID it never does (PPR virtualization instead). */
static void a_tpr_below_threshold_traps_only_without_virtual_interrupt_delivery(void **state) {
  (void)state;
  xapic(0);
  set(VMCS_TPR_THRESHOLD, 5);
  expect_exit(apic_write(APIC_TPR, 0x30), EXIT_REASON_TPR_BELOW_THRESHOLD, 0);
  expect_stay(apic_write(APIC_TPR, 0x50), WHY_TPR_VIRTUALIZED);
  expect_exit(decide(EV_CR_WRITE, 8, 3, GPR_RAX), EXIT_REASON_TPR_BELOW_THRESHOLD, 0);
  xapic(SEC_VIRTUAL_INTR_DELIVERY);
  expect_stay(apic_write(APIC_TPR, 0x30), WHY_TPR_VIRTUALIZED);
  assert_false(decide(EV_CR_WRITE, 8, 3, GPR_RAX).exits);
}

/* ---- SDM 29.5: virtualize x2APIC mode ---- */

static void x2apic(uint32_t secondary) {
  set(VMCS_CPU_BASED_VM_EXEC_CONTROL, CPU_TPR_SHADOW | CPU_ACTIVATE_SECONDARY | CPU_USE_MSR_BITMAPS);
  set(VMCS_SECONDARY_VM_EXEC_CONTROL, SEC_VIRT_X2APIC | secondary);
  memset(S.msr_bitmap, 0, sizeof S.msr_bitmap);             /* nothing intercepted */
}

static void intercept_write(uint32_t msr) { S.msr_bitmap[2048 + msr / 8] |= (uint8_t)(1u << (msr % 8)); }

/* RDMSR of 800H-8FFH reads the virtual-APIC page with APIC-register
** virtualization; WRMSR 808H is TPR virtualization, 80BH EOI virtualization
** (EOI_INDUCED by the bitmap), 83FH self-IPI virtualization. */
static void x2apic_msrs_are_virtualized_as_the_controls_say(void **state) {
  (void)state;
  x2apic(SEC_APIC_REGISTER_VIRT | SEC_VIRTUAL_INTR_DELIVERY);
  expect_stay(decide(EV_RDMSR, 0, X2APIC_ICR, 0), WHY_X2APIC_VIRTUALIZED);
  expect_stay(decide(EV_WRMSR, 0, X2APIC_TPR, 0x20), WHY_TPR_VIRTUALIZED);
  expect_stay(decide(EV_WRMSR, 0, X2APIC_SELF_IPI, 0x31), WHY_SELF_IPI_VIRTUALIZED);
  set(VMCS_GUEST_INTR_STATUS, 0x41u << 8);
  set(VMCS_EOI_EXIT_BITMAP1, 1ull << 1);
  expect_exit(decide(EV_WRMSR, 0, X2APIC_EOI, 0), EXIT_REASON_EOI_INDUCED, 0x41);
  intercept_write(X2APIC_EOI);                               /* the MSR bitmap comes first */
  expect_exit(decide(EV_WRMSR, 0, X2APIC_EOI, 0), EXIT_REASON_MSR_WRITE, 0);
}

/* The x2APIC ICR (830H) under IPI virtualization: a fixed physical IPI is
** sent (destination in bits 63:32); another kind traps as APIC_WRITE with
** offset 300H. */
static void the_x2apic_icr_is_sent_by_ipi_virtualization(void **state) {
  (void)state;
  x2apic(SEC_APIC_REGISTER_VIRT | SEC_VIRTUAL_INTR_DELIVERY);
  set(VMCS_CPU_BASED_VM_EXEC_CONTROL, CPU_TPR_SHADOW | CPU_ACTIVATE_SECONDARY | CPU_USE_MSR_BITMAPS | CPU_ACTIVATE_TERTIARY);
  set(VMCS_TERTIARY_VM_EXEC_CONTROL, TER_IPI_VIRT);
  struct exit_decision d = decide(EV_WRMSR, 0, X2APIC_ICR, 5ull << 32 | 0xfb);
  expect_stay(d, WHY_IPI_VIRTUALIZED);
  assert_int_equal(d.detail, 5);
  expect_exit(decide(EV_WRMSR, 0, X2APIC_ICR, 5ull << 32 | 0x4fb), EXIT_REASON_APIC_WRITE, 0x300);   /* NMI */
}

/* ---- SDM 29.6: posted-interrupt processing ---- */

static struct exit_decision arrival(unsigned source) {
  struct trace_event e = { .type = EV_VIRQ, .aux = (uint8_t)source, .a = 0x40 };
  return vmx_decide_arrival(&S, &e);
}

/* With "process posted interrupts" a device's interrupt or an IPI arrives
** without an exit; without it, EXTERNAL_INTERRUPT (1) as before. */
static void posted_interrupts_arrive_without_an_exit(void **state) {
  (void)state;
  set(VMCS_PIN_BASED_VM_EXEC_CONTROL, PIN_EXT_INTR_EXITING);
  expect_exit(arrival(VIRQ_SRC_DEVICE), EXIT_REASON_EXTERNAL_INTERRUPT, 0);
  set(VMCS_PIN_BASED_VM_EXEC_CONTROL, PIN_EXT_INTR_EXITING | PIN_POSTED_INTR);
  expect_stay(arrival(VIRQ_SRC_DEVICE), WHY_POSTED);
  expect_stay(arrival(VIRQ_SRC_IPI), WHY_POSTED);
  assert_int_equal(arrival(VIRQ_SRC_IPI).detail, 0x40);
}

/* ---- SDM 29.2.1, 29.2.2: evaluation and delivery of pending virtual interrupts ---- */

/* Recognized when RVI[7:4] > VPPR[7:4]; delivered when RFLAGS.IF = 1, no
** blocking by STI or MOV SS and interrupt-window exiting clear. */
static void a_virtual_interrupt_is_delivered_when_the_guest_can_take_it(void **state) {
  (void)state;
  xapic(SEC_VIRTUAL_INTR_DELIVERY);
  S.rflags_if = true;
  vmx_cpu_request_virtual(&S, 0x31);
  assert_int_equal(vapic_rvi(&S), 0x31);
  assert_true(vmx_virtual_intr_deliverable(&S));
  S.cr8 = 3;                                                 /* VTPR 0x30: class 3 not above it */
  assert_false(vmx_virtual_intr_deliverable(&S));
  S.cr8 = 0;
  S.interruptibility = INTR_BLOCK_STI;
  assert_false(vmx_virtual_intr_deliverable(&S));
  S.interruptibility = 0;
  set(VMCS_CPU_BASED_VM_EXEC_CONTROL, CPU_TPR_SHADOW | CPU_ACTIVATE_SECONDARY | CPU_INTR_WINDOW_EXITING);
  assert_false(vmx_virtual_intr_deliverable(&S));
  xapic(SEC_VIRTUAL_INTR_DELIVERY);
  S.rflags_if = false;
  assert_false(vmx_virtual_intr_deliverable(&S));
  S.rflags_if = true;
  vmx_cpu_request_virtual(&S, 0x20);
  vmx_cpu_deliver_virtual(&S);
  assert_int_equal(vapic_svi(&S), 0x31);                      /* the highest first */
  assert_int_equal(vapic_rvi(&S), 0x20);
  assert_int_equal(S.visr[0], 1ull << 0x31);
  assert_false(S.rflags_if);
  S.rflags_if = true;                                         /* in service 0x31: 0x20 waits (VPPR 0x30) */
  assert_false(vmx_virtual_intr_deliverable(&S));
}

/* ---- SDM 26.2.1.1: the VM-entry checks of these controls ---- */

static void entry_fails(const char *needle) {
  struct vmx_caps caps = { .pin_allowed1 = ~0u, .cpu_allowed1 = ~0u, .sec_allowed1 = ~0u, .cr3_targets = 4 };
  char msg[400];
  assert_int_equal(vmx_entry_check(&S, &caps, msg, sizeof msg), 7);
  if (!strstr(msg, needle)) fail_msg("\"%s\" not in: %s", needle, msg);
}

static void vm_entry_checks_the_apic_virtualization_controls(void **state) {
  (void)state;
  set(VMCS_PIN_BASED_VM_EXEC_CONTROL, PIN_EXT_INTR_EXITING);
  set(VMCS_CPU_BASED_VM_EXEC_CONTROL, CPU_ACTIVATE_SECONDARY);
  set(VMCS_SECONDARY_VM_EXEC_CONTROL, SEC_VIRTUAL_INTR_DELIVERY);
  entry_fails("\"virtual-interrupt delivery\" VM-execution control is set but \"use TPR shadow\" is clear");
  set(VMCS_CPU_BASED_VM_EXEC_CONTROL, CPU_ACTIVATE_SECONDARY | CPU_TPR_SHADOW);
  set(VMCS_SECONDARY_VM_EXEC_CONTROL, SEC_VIRT_X2APIC | SEC_APIC_ACCESS);
  entry_fails("\"virtualize x2APIC mode\" VM-execution control is set but so is \"virtualize APIC accesses\"");
  set(VMCS_SECONDARY_VM_EXEC_CONTROL, SEC_APIC_ACCESS);
  set(VMCS_PIN_BASED_VM_EXEC_CONTROL, PIN_EXT_INTR_EXITING | PIN_POSTED_INTR);
  entry_fails("\"process posted interrupts\" VM-execution control is set but \"virtual-interrupt delivery\" is clear");
  set(VMCS_SECONDARY_VM_EXEC_CONTROL, SEC_APIC_ACCESS | SEC_VIRTUAL_INTR_DELIVERY);
  entry_fails("\"acknowledge interrupt on exit\"");
  set(VMCS_VM_EXIT_CONTROLS, EXIT_ACK_INTR_ON_EXIT);
  struct vmx_caps caps = { .pin_allowed1 = ~0u, .cpu_allowed1 = ~0u, .sec_allowed1 = ~0u, .cr3_targets = 4 };
  char msg[400];
  assert_int_equal(vmx_entry_check(&S, &caps, msg, sizeof msg), 0);
}

/* ---- through the engine: KVM's side under the apicv and ipiv presets ---- */

/* A VM of two vCPUs on skylake-2019 (ipi: with IPI virtualization, which no
** built-in profile has). */
static void vm2(struct vm *vm, const char *policy, bool ipi) {
  char err[512];
  assert_int_equal(policy_resolve(&vm->pol, policy, NULL, 0, err, sizeof err), 0);
  assert_int_equal(profile_load(&vm->prof, "skylake-2019", err, sizeof err), 0);
  if (ipi) vm->prof.p[PP_CAP_IPI_VIRT] = 1;
  int rc = engine_init(&vm->e, &vm->pol, &vm->prof, 2, PAGING_64, err, sizeof err);
  if (rc) fail_msg("%s", err);
}

static void on(struct vm *vm, unsigned vcpu, unsigned type, unsigned aux, uint64_t a, uint64_t b) {
  struct trace_event e = { .type = (uint8_t)type, .aux = (uint8_t)aux, .vcpu = (uint16_t)vcpu, .a = a, .b = b };
  engine_step(&vm->e, &e);
}

/* KVM with APICv requests no interrupt window: the pending interrupt goes
** to VIRR/RVI and the guest's STI takes it, no exit; under ept the same
** events cost one INTERRUPT_WINDOW exit. */
static void apicv_needs_no_interrupt_window(void **state) {
  (void)state;
  const char *policies[] = { "ept", "apicv" };
  for (int i = 0; i < 2; i++) {
    struct vm vm;
    vm2(&vm, policies[i], false);
    on(&vm, 0, EV_CLI, 0, 0, 0);
    on(&vm, 0, EV_VIRQ, VIRQ_SRC_HOST, 0x30, 0);
    on(&vm, 0, EV_STI, STI_AUX_POPF, 0, 0);
    assert_int_equal(exits(&vm, EXIT_REASON_INTERRUPT_WINDOW), i == 0 ? 1 : 0);
    assert_false(vm.e.vcpu[0].vmx.rflags_if);                 /* taken either way */
    if (i == 1) assert_int_equal(vapic_svi(&vm.e.vcpu[0].vmx), 0x30);
    vm_stop(&vm);
  }
}

/* A device's interrupt for a running vCPU: EXTERNAL_INTERRUPT under ept, none
** under apicv (posted); a level-triggered one's EOI exits as EOI_INDUCED with
** its vector, an edge-triggered one's does not. */
static void apicv_posts_device_interrupts_and_exits_for_level_eois(void **state) {
  (void)state;
  struct vm vm;
  vm2(&vm, "ept", false);
  on(&vm, 0, EV_VIRQ, VIRQ_SRC_DEVICE, 0x41, 0);
  assert_int_equal(exits(&vm, EXIT_REASON_EXTERNAL_INTERRUPT), 1);
  vm_stop(&vm);
  vm2(&vm, "apicv", false);
  on(&vm, 0, EV_VIRQ, VIRQ_SRC_DEVICE, 0x41, VIRQ_DEVICE_LEVEL);
  assert_int_equal(vm.e.st.total_exits, 0);
  assert_int_equal(vapic_svi(&vm.e.vcpu[0].vmx), 0x41);
  on(&vm, 0, EV_IRET, 0, 0, 0);
  on(&vm, 0, EV_APIC, APIC_AUX_WRITE, APIC_EOI, 0);
  assert_int_equal(exits(&vm, EXIT_REASON_EOI_INDUCED), 1);
  assert_int_equal(vmcs_peek(&vm.e.vcpu[0].vmx.vmcs, VMCS_EXIT_QUALIFICATION), 0x41);
  assert_int_equal(vapic_svi(&vm.e.vcpu[0].vmx), 0);           /* the vector left VISR */
  on(&vm, 0, EV_VIRQ, VIRQ_SRC_DEVICE, 0x42, 0);
  on(&vm, 0, EV_IRET, 0, 0, 0);
  on(&vm, 0, EV_APIC, APIC_AUX_WRITE, APIC_EOI, 0);
  assert_int_equal(vm.e.st.total_exits, 1);
  vm_stop(&vm);
}

/* An x2APIC guest under apicv: EOI and TPR writes pass the MSR bitmap and are
** virtualized; the ICR is intercepted (MSR_WRITE) until IPI virtualization,
** under which it is sent without an exit and wakes a halted destination. */
static void x2apic_guest_under_apicv_and_ipiv(void **state) {
  (void)state;
  struct vm vm;
  vm2(&vm, "apicv", false);
  on(&vm, 0, EV_WRMSR, 0, X2APIC_EOI, 0);
  on(&vm, 0, EV_WRMSR, 0, X2APIC_TPR, 0x10);
  on(&vm, 0, EV_RDMSR, 0, 0x802, 0);                             /* APIC ID */
  assert_int_equal(vm.e.st.total_exits, 0);
  on(&vm, 0, EV_RDMSR, 0, 0x839, 0);                             /* current count: KVM computes it */
  assert_int_equal(exits(&vm, EXIT_REASON_MSR_READ), 1);
  on(&vm, 1, EV_HLT, 0, 0, 0);
  on(&vm, 0, EV_WRMSR, 0, X2APIC_ICR, 1ull << 32 | 0xfd);
  assert_int_equal(exits(&vm, EXIT_REASON_MSR_WRITE), 1);
  assert_false(vm.e.vcpu[1].halted);                             /* KVM's APIC sent the IPI */
  vm_stop(&vm);
  vm2(&vm, "ipiv", true);
  on(&vm, 1, EV_HLT, 0, 0, 0);
  assert_true(vm.e.vcpu[1].halted);
  on(&vm, 0, EV_WRMSR, 0, X2APIC_ICR, 1ull << 32 | 0xfd);
  assert_int_equal(vm.e.st.total_exits, 1);                      /* the HLT's */
  assert_false(vm.e.vcpu[1].halted);
  vm_stop(&vm);
}

static void run(struct vm *vm, unsigned vcpu, uint32_t cycles) {
  struct trace_event e = { .type = EV_RUN, .vcpu = (uint16_t)vcpu, .cycles = cycles };
  engine_step(&vm->e, &e);
}

/* kvm-unit-tests' on_cpu: vCPU 0 sends an IPI and spins until vCPU 1's
** handler has stored the flag.  The spin ends ipi_latency after the IPI left,
** plus the target's posted-interrupt processing (apicv: it arrives without an
** exit), its handler's 200 cycles, the 2 lines it takes from vCPU 0 and the
** one that brings the flag back; the spin is vCPU 0's guest time.  Under ept
** the IPI arrives by an EXTERNAL_INTERRUPT exit on vCPU 1, whose cost is on
** vCPU 1's clock instead of the posted-interrupt processing.  A wait with no
** IPI taken (or on itself) waits for nothing. */
static void a_wait_ends_when_the_handlers_store_is_seen(void **state) {
  (void)state;
  const char *policies[] = { "apicv", "ept" };
  for (int i = 0; i < 2; i++) {
    struct vm vm;
    vm2(&vm, policies[i], false);
    const uint64_t *p = vm.prof.p, *clock = vm.e.vcpu_cycles;
    on(&vm, 0, EV_WAIT, 0, 1, 2);
    on(&vm, 0, EV_WAIT, 0, 0, 2);
    assert_int_equal(clock[0], 0);
    on(&vm, 0, EV_WRMSR, 0, X2APIC_ICR, 1ull << 32 | 0x20);
    uint64_t sent = clock[0], guest = vm.e.st.guest_cycles;
    assert_true(sent > 0);                                       /* the MSR_WRITE exit */
    on(&vm, 1, EV_VIRQ, VIRQ_SRC_IPI, 0x20, 0);
    uint64_t arrival = clock[1];                                 /* 0, or the EXTERNAL_INTERRUPT exit */
    assert_int_equal(vm.e.st.total_exits, i == 0 ? 1 : 2);
    run(&vm, 1, 200);
    on(&vm, 0, EV_WAIT, 0, 1, 2);
    uint64_t stored = sent + p[PP_IPI_LATENCY] + (i == 0 ? p[PP_POSTED_INTR_DELIVERY] : 0) + arrival + 200 +
                      2 * p[PP_CACHELINE_TRANSFER];
    assert_int_equal(clock[0], stored + p[PP_CACHELINE_TRANSFER]);
    assert_int_equal(clock[1], stored);
    assert_int_equal(vm.e.st.guest_cycles - guest, 200 + clock[0] - sent);
    vm_stop(&vm);
  }
}

/* ipiv on skylake-2019, which has no tertiary controls: VM entry fails,
** naming the control. */
static void ipiv_fails_vm_entry_on_a_cpu_without_it(void **state) {
  (void)state;
  struct vm vm;
  char err[512];
  assert_int_equal(policy_resolve(&vm.pol, "ipiv", NULL, 0, err, sizeof err), 0);
  assert_int_equal(profile_load(&vm.prof, "skylake-2019", err, sizeof err), 0);
  assert_int_equal(engine_init(&vm.e, &vm.pol, &vm.prof, 1, PAGING_64, err, sizeof err), EXIT_VMENTRY);
  assert_non_null(strstr(err, "\"IPI virtualization\""));
  profile_free(&vm.prof);
}

int main(void) {
  const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup(f, reset)
    T(only_the_tpr_is_virtualized_without_register_virtualization),
    T(virtual_interrupt_delivery_alone_virtualizes_tpr_eoi_and_icr),
    T(register_virtualization_reads_listed_registers_only),
    T(a_virtualized_write_of_another_register_traps_as_apic_write),
    T(a_write_of_the_icr_high_half_is_virtualized_without_exit),
    T(a_self_ipi_is_virtualized_with_virtual_interrupt_delivery),
    T(ipi_virtualization_sends_a_fixed_physical_ipi_without_exit),
    T(an_eoi_exits_iff_the_vectors_eoi_exit_bitmap_bit_is_set),
    T(eoi_virtualization_clears_the_vector_from_visr),
    T(a_tpr_below_threshold_traps_only_without_virtual_interrupt_delivery),
    T(x2apic_msrs_are_virtualized_as_the_controls_say),
    T(the_x2apic_icr_is_sent_by_ipi_virtualization),
    T(posted_interrupts_arrive_without_an_exit),
    T(a_virtual_interrupt_is_delivered_when_the_guest_can_take_it),
    T(vm_entry_checks_the_apic_virtualization_controls),
    T(apicv_needs_no_interrupt_window),
    T(apicv_posts_device_interrupts_and_exits_for_level_eois),
    T(x2apic_guest_under_apicv_and_ipiv),
    T(ipiv_fails_vm_entry_on_a_cpu_without_it),
    T(a_wait_ends_when_the_handlers_store_is_seen),
#undef T
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
