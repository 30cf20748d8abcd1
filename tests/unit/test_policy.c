/* Policies (presets, '+' composition, --set overrides, errors), the VMCS they
** program (EPT vs shadow paging, forced CR4 bits), and CPU profiles
** (every shipped profile loads; malformed ones name the file and key). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "models/vmx/controls.h"
#include "models/vmx/exit.h"
#include "models/hv/vcpu.h"
#include "models/mmu/mmu.h"
#include "sim/config/policy.h"
#include "sim/config/profile.h"
#include "sim/base/util.h"

static struct policy P;
static struct vcpu V;
static char err[2048];

static void assert_contains(const char *haystack, const char *needle) {
  if (!strstr(haystack, needle)) fail_msg("expected \"%s\" in: \"%s\"", needle, haystack);
}

static void resolve(const char *spec) {
  err[0] = 0;
  if (policy_resolve(&P, spec, NULL, 0, err, sizeof err)) fail_msg("policy %s: %s", spec, err);
}

/* policy_resolve is expected to fail; returns the message. */
static const char *resolve_error(const char *spec, const char *set1) {
  char *sets[1] = { (char *)set1 };
  err[0] = 0;
  if (policy_resolve(&P, spec, sets, set1 ? 1 : 0, err, sizeof err) == 0)
    fail_msg("policy %s %s resolved, expected an error", spec, set1 ? set1 : "");
  if (!err[0]) fail_msg("policy %s %s: empty error message", spec, set1 ? set1 : "");
  return err;
}

/* ------------------------------------------------------------------------ */
/* Presets                                                                   */

static void every_preset_resolves_on_its_own(void **state) {
  (void)state;
  int n = 0;
  for (const char *const *name = policy_preset_names(); *name; name++, n++) resolve(*name);
  assert_in_range(n, 7, 64);   /* the seven documented presets, plus any added later */
}

static void nocache_preset_is_2007_kvm_shadow_paging_without_cache(void **state) {
  (void)state;
  resolve("nocache");
  assert_int_equal(P.paging, PAGING_SHADOW);
  assert_false(P.shadow_cache);
  assert_int_equal(P.shadow_pages_max, 256);
  assert_int_equal(P.cr3_target_count, 0);
  assert_int_equal(P.cr0_mask, 0xffffffffffffffffull);
  assert_int_equal(P.cr4_mask, 0xffffffffffffffffull);
  assert_true(P.mov_dr_exiting);
  assert_int_equal(P.dr_switch, DR_EAGER);
  assert_false(P.cr3_cache);
  assert_string_equal(P.name, "nocache");
}

static void shadowcache_preset_keeps_a_256_page_fifo_pool_with_refill_5_25(void **state) {
  (void)state;
  resolve("shadowcache");
  assert_int_equal(P.paging, PAGING_SHADOW);
  assert_true(P.shadow_cache);
  assert_int_equal(P.shadow_pages_max, 256);
  assert_int_equal(P.shadow_eviction, EVICT_FIFO);
  assert_true(P.shadow_refill);
  assert_int_equal(P.refill_low, 5);
  assert_int_equal(P.refill_high, 25);
  assert_int_equal(P.dr_switch, DR_EAGER);   /* from its base, nocache */
  assert_int_equal(P.cr3_target_count, 0);
}

static void cr3cache_preset_uses_four_cr3_target_values(void **state) {
  (void)state;
  resolve("cr3cache");
  assert_true(P.cr3_cache);
  assert_int_equal(P.cr3_target_count, 4);
  assert_true(P.shadow_cache);               /* base shadowcache */
  assert_int_equal(P.paging, PAGING_SHADOW);
}

static void prevroots_preset_keeps_three_previous_roots(void **state) {
  (void)state;
  resolve("prevroots");
  assert_int_equal(P.prev_roots, 3);
  assert_true(P.shadow_cache);
  assert_int_equal(P.cr3_target_count, 0);
}

static void ept_preset_enables_ept_and_vpid_and_lets_the_guest_own_cr0_ts_and_wp(void **state) {
  (void)state;
  resolve("ept");
  assert_int_equal(P.paging, PAGING_EPT);
  assert_true(P.vpid);
  assert_int_equal(P.cr0_mask, 0xfffffffffffefff7ull);
  assert_int_equal(~P.cr0_mask, CR0_TS | CR0_WP);
}

static void cr4mask_preset_gives_the_guest_kvm_5x_cr4_bits(void **state) {
  (void)state;
  resolve("cr4mask");
  assert_int_equal(P.cr4_mask, 0xfffffffffffef871ull);
  /* PVI, TSD, DE, PGE, PCE, OSFXSR, OSXMMEXCPT, FSGSBASE */
  assert_int_equal(~P.cr4_mask, (1ull << 1) | CR4_TSD | CR4_DE | CR4_PGE | CR4_PCE | (1ull << 9) |
                                (1ull << 10) | (1ull << 16));
}

static void lazydr_preset_switches_debug_registers_lazily(void **state) {
  (void)state;
  resolve("lazydr");
  assert_int_equal(P.dr_switch, DR_LAZY);
  assert_true(P.mov_dr_exiting);
}

static void knob_defaults_apply_before_any_preset(void **state) {
  (void)state;
  resolve("lazydr");   /* sets only dr_switch and mov_dr_exiting */
  assert_int_equal(P.paging, PAGING_SHADOW);
  assert_true(P.shadow_cache);
  assert_true(P.hlt_exiting);
  assert_false(P.rdtsc_exiting);
  assert_true(P.msr_bitmaps);
  assert_false(P.io_bitmaps);
  assert_int_equal(P.flood_threshold, 3);
}

/* ------------------------------------------------------------------------ */
/* Composition and overrides                                                 */

static void plus_composes_presets_with_later_ones_overriding(void **state) {
  (void)state;
  resolve("shadowcache+lazydr");
  assert_true(P.shadow_cache);
  assert_int_equal(P.dr_switch, DR_LAZY);
  assert_string_equal(P.name, "shadowcache+lazydr");
  /* the other order: shadowcache's base (nocache) sets eager again */
  resolve("lazydr+shadowcache");
  assert_int_equal(P.dr_switch, DR_EAGER);
}

static void plus_composes_three_presets(void **state) {
  (void)state;
  resolve("ept+cr4mask+lazydr");
  assert_int_equal(P.paging, PAGING_EPT);
  assert_int_equal(P.cr4_mask, 0xfffffffffffef871ull);
  assert_int_equal(P.cr0_mask, 0xfffffffffffefff7ull);
  assert_int_equal(P.dr_switch, DR_LAZY);
}

static void set_overrides_apply_after_every_preset(void **state) {
  (void)state;
  char *sets[] = { "dr_switch=eager", "cr3_target_count=2", "cr4_guest_host_mask=0x20", "rdtsc_exiting=on" };
  assert_int_equal(policy_resolve(&P, "cr3cache+lazydr", sets, 4, err, sizeof err), 0);
  assert_int_equal(P.dr_switch, DR_EAGER);
  assert_int_equal(P.cr3_target_count, 2);
  assert_int_equal(P.cr4_mask, 0x20);
  assert_true(P.rdtsc_exiting);
  assert_true(P.cr3_cache);
  /* the name lists the overrides in the knob table's order, each value spelled one way */
  assert_string_equal(P.name, "cr3cache+lazydr,cr3_target_count=2,cr4_guest_host_mask=0x20,dr_switch=eager,"
                              "rdtsc_exiting=true");
}

static void later_set_overrides_an_earlier_one(void **state) {
  (void)state;
  char *sets[] = { "prev_roots=1", "prev_roots=2" };
  assert_int_equal(policy_resolve(&P, "nocache", sets, 2, err, sizeof err), 0);
  assert_int_equal(P.prev_roots, 2);
  assert_string_equal(P.name, "nocache,prev_roots=2");   /* as if given once: one run, one name */
}

/* The name a run is stored under for spec with sets (a run's identity,
** docs/schema.md); the policy must resolve to it too. */
static const char *name_of(const char *spec, char **sets, int nsets) {
  static char name[sizeof P.name];
  err[0] = 0;
  if (policy_name(spec, sets, nsets, name, sizeof name, err, sizeof err)) fail_msg("policy_name %s: %s", spec, err);
  if (policy_resolve(&P, spec, sets, nsets, err, sizeof err)) fail_msg("policy %s: %s", spec, err);
  printf("%s -> %s\n", nsets ? sets[0] : spec, name);
  assert_string_equal(P.name, name);
  return name;
}

/* The name held the --set texts as typed, so one configuration spelled two
** ways was two runs to a sweep and to compare. */
static void each_spelling_of_a_value_gives_one_name(void **state) {
  (void)state;
  static const char *const same[][4] = {
    { "cr4_guest_host_mask=0xf0", "cr4_guest_host_mask=0x00F0", "cr4_guest_host_mask=0XF0", "cr4_guest_host_mask=240" },
    { "vpid=true", "vpid=on", "vpid=yes", "vpid=1" },
    { "vpid=false", "vpid=off", "vpid=no", "vpid=0" },
  };
  static const char *const want[] = { "ept,cr4_guest_host_mask=0xf0", "ept,vpid=true", "ept,vpid=false" };
  for (size_t i = 0; i < sizeof same / sizeof *same; i++)
    for (size_t k = 0; k < 4; k++) {
      char *sets[] = { (char *)same[i][k] };
      assert_string_equal(name_of("ept", sets, 1), want[i]);
    }
}

static void order_and_repeats_of_the_overrides_give_one_name(void **state) {
  (void)state;
  char *a[] = { "vpid=on", "prev_roots=2" }, *b[] = { "prev_roots=1", "vpid=1", "prev_roots=2" };
  char first[sizeof P.name];
  snprintf(first, sizeof first, "%s", name_of("ept", a, 2));
  assert_string_equal(first, "ept,prev_roots=2,vpid=true");
  assert_string_equal(name_of("ept", b, 3), first);
}

/* policy_name reads no preset: a spec that is no preset still has a name. */
static void policy_name_needs_no_preset_but_checks_the_overrides(void **state) {
  (void)state;
  char name[sizeof P.name], *sets[] = { "tlb_entries=16" }, *bad[] = { "tlb_entries=0x10" };
  assert_int_equal(policy_name("no/such/file.json", sets, 1, name, sizeof name, err, sizeof err), 0);
  assert_string_equal(name, "no/such/file.json,tlb_entries=16");
  assert_int_equal(policy_name("ept", bad, 1, name, sizeof name, err, sizeof err), EXIT_USAGE);
  assert_contains(err, "tlb_entries");
}

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */

static void unknown_preset_error_lists_the_valid_presets(void **state) {
  (void)state;
  const char *e = resolve_error("sideways", NULL);
  assert_contains(e, "sideways");
  for (const char *const *n = policy_preset_names(); *n; n++) assert_contains(e, *n);
}

static void unknown_preset_in_a_composition_is_reported(void **state) {
  (void)state;
  const char *e = resolve_error("shadowcache+bogus", NULL);
  assert_contains(e, "bogus");
  assert_contains(e, "lazydr");
}

static void unknown_knob_error_lists_the_valid_knobs(void **state) {
  (void)state;
  const char *e = resolve_error("nocache", "shadow_cach=true");
  assert_contains(e, "shadow_cach");
  static const char *const knobs[] = { "paging", "shadow_cache", "cr3_target_count", "cr4_guest_host_mask",
                                       "mov_dr_exiting", "dr_switch", "host_debugged", "tpr_shadow" };
  for (size_t i = 0; i < sizeof knobs / sizeof knobs[0]; i++) assert_contains(e, knobs[i]);
}

static void bool_knob_rejects_maybe(void **state) {
  (void)state;
  const char *e = resolve_error("nocache", "hlt_exiting=maybe");
  assert_contains(e, "hlt_exiting");
  assert_contains(e, "maybe");
  assert_contains(e, "true or false");
}

static void enum_knob_rejects_sideways_and_lists_the_choices(void **state) {
  (void)state;
  const char *e = resolve_error("nocache", "paging=sideways");
  assert_contains(e, "paging");
  assert_contains(e, "sideways");
  assert_contains(e, "shadow");
  assert_contains(e, "ept");
  e = resolve_error("nocache", "dr_switch=sideways");
  assert_contains(e, "eager");
  assert_contains(e, "lazy");
}

static void unsigned_knob_rejects_minus_one(void **state) {
  (void)state;
  const char *e = resolve_error("nocache", "cr3_target_count=-1");
  assert_contains(e, "cr3_target_count");
  assert_contains(e, "-1");
  assert_contains(e, "is not a whole number in 0..511");
}

static void unsigned_knob_rejects_junk_and_overflow(void **state) {
  (void)state;
  assert_contains(resolve_error("nocache", "refill_low=5x"), "refill_low");
  assert_contains(resolve_error("nocache", "refill_low=4294967296"), "refill_low");
  assert_contains(resolve_error("nocache", "refill_low="), "refill_low");
  assert_contains(resolve_error("nocache", "cr0_guest_host_mask=0xfffffffffffffffff"), "cr0_guest_host_mask");
}

/* strtoull with base 0 read shadow_pages_max=010 as 8 and =0x10 as 16. */
static void count_knobs_take_decimal_only(void **state) {
  (void)state;
  const char *e = resolve_error("nocache", "shadow_pages_max=010");
  assert_contains(e, "knob shadow_pages_max: '010' is not a whole number in 0..1048576");
  assert_contains(e, "C would read it as octal");
  e = resolve_error("nocache", "shadow_pages_max=0x10");
  assert_contains(e, "knob shadow_pages_max: '0x10' is not a decimal whole number in 0..1048576");
  assert_contains(e, "only the mask knobs take 0x hex");
  e = resolve_error("nocache", "tlb_entries=0x10");
  assert_contains(e, "knob tlb_entries: '0x10' is not a decimal whole number in 4..16384");
  e = resolve_error("nocache", "tlb_entries=junk");
  assert_contains(e, "knob tlb_entries: 'junk' is not a whole number in 4..16384");   /* once "in in" */
  e = resolve_error("nocache", "prev_roots=03");
  assert_contains(e, "'03'");
  assert_contains(e, "octal");
  char *sets[] = { "shadow_pages_max=16" };
  assert_int_equal(policy_resolve(&P, "nocache", sets, 1, err, sizeof err), 0);
  assert_int_equal(P.shadow_pages_max, 16);
}

static void mask_knobs_take_decimal_or_hex_but_no_leading_zero(void **state) {
  (void)state;
  const char *e = resolve_error("nocache", "cr0_guest_host_mask=010");
  assert_contains(e, "knob cr0_guest_host_mask: '010' is not a 64-bit mask: decimal, or 0x hex");
  assert_contains(e, "C would read it as octal");
  char *sets[] = { "cr0_guest_host_mask=16", "cr4_guest_host_mask=0x10" };
  assert_int_equal(policy_resolve(&P, "nocache", sets, 2, err, sizeof err), 0);
  assert_int_equal(P.cr0_mask, 16);
  assert_int_equal(P.cr4_mask, 16);
}

static void set_without_equals_sign_is_an_error(void **state) {
  (void)state;
  assert_contains(resolve_error("nocache", "paging"), "KEY=VALUE");
  assert_contains(resolve_error("nocache", "=ept"), "KEY=VALUE");
}

/* A policy file whose "base" cannot be found says which file named it (a fuzz
** input: the message named only the missing base). */
static void missing_base_names_the_file_that_asked_for_it(void **state) {
  (void)state;
  char path[] = "/tmp/vmxsim-test-policy-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  static const char text[] = "{\n  \"base\": \"no/such/preset.json\",\n  \"knobs\": {}\n}\n";
  assert_int_equal(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
  close(fd);
  err[0] = 0;
  int rc = policy_resolve(&P, path, NULL, 0, err, sizeof err);
  unlink(path);
  printf("exit code %d (expected %d), message: %s\n", rc, EXIT_BADINPUT, err);
  assert_int_equal(rc, EXIT_BADINPUT);
  assert_true(strncmp(err, path, strlen(path)) == 0);
  assert_contains(err, ":2: \"base\": ");
  assert_contains(err, "no/such/preset.json");
}

static void empty_policy_name_is_an_error(void **state) {
  (void)state;
  assert_int_not_equal(policy_resolve(&P, "", NULL, 0, err, sizeof err), 0);
  assert_contains(err, "empty");
}

/* ------------------------------------------------------------------------ */
/* The VMCS a policy programs                                                */

static uint64_t setup_vcpu(const char *spec) {
  resolve(spec);
  return vcpu_setup(&V, 0, &P);
}

static void ept_preset_turns_off_cr3_and_invlpg_exiting_and_enables_ept(void **state) {
  (void)state;
  setup_vcpu("ept");
  const struct vmcs *c = &V.vmx.vmcs;
  assert_false(cpu_ctl(c, CPU_CR3_LOAD_EXITING));
  assert_false(cpu_ctl(c, CPU_CR3_STORE_EXITING));
  assert_false(cpu_ctl(c, CPU_INVLPG_EXITING));
  assert_true(cpu_ctl(c, CPU_ACTIVATE_SECONDARY));
  assert_true(ept_enabled(c));
  assert_true(vpid_enabled(c));
  assert_int_equal(vmcs_peek(c, VMCS_EXCEPTION_BITMAP) & (1u << 14), 0);   /* #PF not intercepted */
  assert_int_equal(vmcs_peek(c, VMCS_VIRTUAL_PROCESSOR_ID), 1);
}

/* The ept preset is the KVM of today (Linux 5.x-6.x vmx.c), not a 2008 one:
** debug registers switched lazily (since 2009), TPR shadow and FlexPriority,
** unconditional I/O exiting with MSR bitmaps, and the CR4 bits KVM lets the
** guest own (the cr4mask modifier's). */
static void ept_preset_is_the_vmcs_of_a_modern_kvm(void **state) {
  (void)state;
  resolve("cr4mask");
  uint64_t kvm_cr4_mask = P.cr4_mask;
  resolve("ept");
  assert_int_equal(P.dr_switch, DR_LAZY);
  assert_true(P.mov_dr_exiting);
  assert_int_equal(P.cr4_mask, kvm_cr4_mask);
  setup_vcpu("ept");
  const struct vmcs *c = &V.vmx.vmcs;
  assert_true(cpu_ctl(c, CPU_TPR_SHADOW));
  assert_false(cpu_ctl(c, CPU_CR8_LOAD_EXITING));
  assert_false(cpu_ctl(c, CPU_CR8_STORE_EXITING));
  assert_true(sec_ctl(c, SEC_APIC_ACCESS));
  assert_true(cpu_ctl(c, CPU_UNCOND_IO_EXITING));
  assert_false(cpu_ctl(c, CPU_USE_IO_BITMAPS));
  assert_true(cpu_ctl(c, CPU_USE_MSR_BITMAPS));
  assert_true(cpu_ctl(c, CPU_MOV_DR_EXITING));
}

static void shadow_paging_turns_on_cr3_and_invlpg_exiting_and_intercepts_page_faults(void **state) {
  (void)state;
  setup_vcpu("nocache");
  const struct vmcs *c = &V.vmx.vmcs;
  assert_true(cpu_ctl(c, CPU_CR3_LOAD_EXITING));
  assert_true(cpu_ctl(c, CPU_CR3_STORE_EXITING));
  assert_true(cpu_ctl(c, CPU_INVLPG_EXITING));
  assert_false(ept_enabled(c));
  assert_int_equal(vmcs_peek(c, VMCS_EXCEPTION_BITMAP) & (1u << 14), 1u << 14);
  assert_int_equal(vmcs_peek(c, VMCS_CR3_TARGET_COUNT), 0);
}

/* The paging mode decides what the real CR0/CR4 keep set and what GUEST_CR3
** holds: shadow paging keeps paging and CR4.PAE on whatever the guest writes,
** and loads its roots into GUEST_CR3 later; under EPT the registers are the
** guest's (CR4.VMXE aside) and GUEST_CR3 is the guest's CR3 from the start. */
static void paging_mode_decides_the_real_control_registers_and_guest_cr3(void **state) {
  (void)state;
  static const struct { const char *policy; uint64_t cr0, cr4, cr3; } want[] = {
    { "shadowcache", CR0_PG | CR0_WP | CR0_PE | (1ull << 5), CR4_PAE | (1ull << 13), 0 },
    { "ept",         0,                                      1ull << 13,             0x5000 },
  };
  for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
    setup_vcpu(want[i].policy);
    vcpu_set_cr(&V, 0, CR0_MP, false);          /* a guest with paging and protection off */
    vcpu_set_cr(&V, 4, 0, false);
    vcpu_init_reg(&V, 3, 0x5000);
    printf("%s: GUEST_CR0 0x%llx, GUEST_CR4 0x%llx, GUEST_CR3 0x%llx\n", want[i].policy,
           (unsigned long long)vmcs_peek(&V.vmx.vmcs, VMCS_GUEST_CR0),
           (unsigned long long)vmcs_peek(&V.vmx.vmcs, VMCS_GUEST_CR4),
           (unsigned long long)vmcs_peek(&V.vmx.vmcs, VMCS_GUEST_CR3));
    assert_int_equal(vmcs_peek(&V.vmx.vmcs, VMCS_GUEST_CR0), CR0_MP | want[i].cr0);
    assert_int_equal(vmcs_peek(&V.vmx.vmcs, VMCS_CR0_READ_SHADOW), CR0_MP);
    assert_int_equal(vmcs_peek(&V.vmx.vmcs, VMCS_GUEST_CR4), want[i].cr4);
    assert_int_equal(vmcs_peek(&V.vmx.vmcs, VMCS_GUEST_CR3), want[i].cr3);
    assert_int_equal(V.guest_cr3, 0x5000);
  }
}

/* The paging knob's values are the paging modes' names, in the order of enum mmu_paging. */
static void paging_knob_values_are_the_modes_names(void **state) {
  (void)state;
  const char *const *names = mmu_paging_names();
  assert_string_equal(names[PAGING_SHADOW], "shadow");
  assert_string_equal(names[PAGING_EPT], "ept");
  assert_null(names[PAGING_EPT + 1]);
  char *sets[] = { "paging=ept" };
  assert_int_equal(policy_resolve(&P, "shadowcache", sets, 1, err, sizeof err), 0);
  assert_int_equal(P.paging, PAGING_EPT);
  sets[0] = "paging=npt";
  assert_int_not_equal(policy_resolve(&P, "shadowcache", sets, 1, err, sizeof err), 0);
  printf("message: %s\n", err);
  assert_contains(err, "shadow");
  assert_contains(err, "ept");
}

static void cr3cache_programs_cr3_target_count_4(void **state) {
  (void)state;
  setup_vcpu("cr3cache");
  assert_int_equal(vmcs_peek(&V.vmx.vmcs, VMCS_CR3_TARGET_COUNT), 4);
}

static void policy_masks_reach_the_vmcs(void **state) {
  (void)state;
  setup_vcpu("ept+cr4mask");
  assert_int_equal(vmcs_peek(&V.vmx.vmcs, VMCS_CR0_GUEST_HOST_MASK), 0xfffffffffffefff7ull);
  assert_int_equal(vmcs_peek(&V.vmx.vmcs, VMCS_CR4_GUEST_HOST_MASK), 0xfffffffffffef871ull);
}

static void shadow_paging_forces_cr4_pge_host_owned_even_with_cr4mask(void **state) {
  (void)state;
  uint64_t forced = setup_vcpu("nocache+cr4mask");
  assert_int_equal(forced, 1);
  assert_int_equal(V.cr4_forced, CR4_PGE);
  uint64_t mask = vmcs_peek(&V.vmx.vmcs, VMCS_CR4_GUEST_HOST_MASK);
  assert_int_equal(mask & CR4_PGE, CR4_PGE);
  assert_int_equal(mask, 0xfffffffffffef871ull | CR4_PGE);
  /* so a guest toggling PGE exits */
  uint64_t shadow = vmcs_peek(&V.vmx.vmcs, VMCS_CR4_READ_SHADOW);
  struct trace_event ev = { .type = EV_CR_WRITE, .aux = 4, .a = shadow ^ CR4_PGE, .b = 6 };
  assert_true(vmx_decide(&V.vmx, &ev).exits);
  forced = setup_vcpu("shadowcache+cr4mask");
  assert_int_equal(forced, 1);
}

static void shadow_paging_forces_nothing_when_the_mask_already_owns_the_bits(void **state) {
  (void)state;
  assert_int_equal(setup_vcpu("nocache"), 0);
  assert_int_equal(V.cr4_forced, 0);
}

static void shadow_paging_counts_every_forced_cr4_bit(void **state) {
  (void)state;
  char *sets[] = { "cr4_guest_host_mask=0" };
  assert_int_equal(policy_resolve(&P, "nocache", sets, 1, err, sizeof err), 0);
  assert_int_equal(vcpu_setup(&V, 0, &P), 5);   /* PGE, PCIDE, PAE, PSE, SMEP */
  assert_int_equal(vmcs_peek(&V.vmx.vmcs, VMCS_CR4_GUEST_HOST_MASK),
                   CR4_PGE | CR4_PCIDE | CR4_PAE | CR4_PSE | CR4_SMEP);
}

static void ept_with_cr4mask_leaves_pge_guest_owned(void **state) {
  (void)state;
  assert_int_equal(setup_vcpu("ept+cr4mask"), 0);
  assert_int_equal(vmcs_peek(&V.vmx.vmcs, VMCS_CR4_GUEST_HOST_MASK) & CR4_PGE, 0);
  uint64_t shadow = vmcs_peek(&V.vmx.vmcs, VMCS_CR4_READ_SHADOW);
  struct trace_event ev = { .type = EV_CR_WRITE, .aux = 4, .a = shadow ^ CR4_PGE, .b = 6 };
  assert_false(vmx_decide(&V.vmx, &ev).exits);
}

/* ------------------------------------------------------------------------ */
/* CPU profiles                                                              */

static void every_shipped_profile_loads(void **state) {
  (void)state;
  static struct profile pr;
  int n = 0;
  for (const char *const *name = profile_names(); *name; name++, n++) {
    err[0] = 0;
    if (profile_load(&pr, *name, err, sizeof err)) fail_msg("profile %s: %s", *name, err);
    assert_string_equal(pr.name, *name);
    assert_true(pr.clock_ghz > 0);
    assert_int_equal(pr.p[PP_CR3_TARGETS], 4);
    assert_true(pr.p[PP_VM_ROUNDTRIP] > 0);
    profile_free(&pr);
  }
  assert_in_range(n, 5, 64);
}

static void unknown_profile_error_lists_the_valid_profiles(void **state) {
  (void)state;
  static struct profile pr;
  assert_int_not_equal(profile_load(&pr, "pentium-1993", err, sizeof err), 0);
  assert_contains(err, "pentium-1993");
  for (const char *const *n = profile_names(); *n; n++) assert_contains(err, *n);
}

static const char *const param_names[] = {
#define X(e, n, d) n,
  PROFILE_PARAMS(X)
#undef X
};
#define NPARAMS (sizeof param_names / sizeof param_names[0])   /* the JSON parameters */

/* Writes a profile with every parameter to dir/file; `skip` is left out,
** `bad` gets the entry text `bad_entry` instead of a valid one. */
static void write_profile(const char *path, const char *skip, const char *bad, const char *bad_entry) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fprintf(f, "{\n  \"name\": \"test\",\n  \"params\": {\n");
  const char *sep = "";
  for (unsigned i = 0; i < NPARAMS; i++) {
    if (skip && strcmp(param_names[i], skip) == 0) continue;
    fprintf(f, "%s    \"%s\": ", sep, param_names[i]);
    if (bad && strcmp(param_names[i], bad) == 0) fprintf(f, "%s", bad_entry);
    else if (i == PP_CLOCK_GHZ) fprintf(f, "{ \"value\": 2.5, \"kind\": \"estimated\", \"source\": \"test\" }");
    else if (i == PP_CR3_TARGETS) fprintf(f, "{ \"value\": 4, \"kind\": \"measured\", \"source\": \"test\" }");
    else if (i >= PP_CAP_SECONDARY && i <= PP_CAP_IPI_VIRT)
      fprintf(f, "{ \"value\": 1, \"kind\": \"measured\", \"source\": \"test\" }");
    else fprintf(f, "{ \"value\": %u, \"kind\": \"estimated\", \"source\": \"test\" }", 100 + i);
    sep = ",\n";
  }
  fprintf(f, "\n  }\n}\n");
  fclose(f);
}

static char tmpdir[64];

static int make_tmpdir(void **state) {
  (void)state;
  snprintf(tmpdir, sizeof tmpdir, "/tmp/vmxsim-test-policy-XXXXXX");
  return mkdtemp(tmpdir) ? 0 : -1;
}

static int remove_tmpdir(void **state) {
  (void)state;
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  return system(cmd) == 0 ? 0 : -1;
}

/* Loads a malformed profile and returns the error message. */
static const char *load_bad(const char *file, const char *skip, const char *bad, const char *bad_entry) {
  static char path[256];
  static struct profile pr;
  snprintf(path, sizeof path, "%s/%s", tmpdir, file);
  write_profile(path, skip, bad, bad_entry);
  err[0] = 0;
  if (profile_load(&pr, path, err, sizeof err) == 0) {
    profile_free(&pr);
    fail_msg("%s loaded, expected an error", path);
  }
  assert_contains(err, path);
  return err;
}

static void a_generated_complete_profile_loads(void **state) {
  (void)state;
  static struct profile pr;
  char path[256];
  snprintf(path, sizeof path, "%s/good.json", tmpdir);
  write_profile(path, NULL, NULL, NULL);
  if (profile_load(&pr, path, err, sizeof err)) fail_msg("%s", err);
  assert_int_equal(pr.p[PP_VMREAD], 100 + PP_VMREAD);
  profile_free(&pr);
}

static void profile_entry_without_source_names_the_file_and_key(void **state) {
  (void)state;
  const char *e = load_bad("nosource.json", NULL, "vmread", "{ \"value\": 50, \"kind\": \"estimated\" }");
  assert_contains(e, "params.vmread");
  assert_contains(e, "source");
}

static void profile_entry_with_bad_kind_names_the_file_and_key(void **state) {
  (void)state;
  const char *e = load_bad("badkind.json", NULL, "dr_write", "{ \"value\": 29, \"kind\": \"guessed\", \"source\": \"x\" }");
  assert_contains(e, "params.dr_write");
  assert_contains(e, "kind");
}

static void profile_with_non_integer_cycles_names_the_file_and_key(void **state) {
  (void)state;
  const char *e = load_bad("fraction.json", NULL, "vm_roundtrip",
                           "{ \"value\": 1862.5, \"kind\": \"derived\", \"source\": \"x\" }");
  assert_contains(e, "params.vm_roundtrip");
  assert_contains(e, "1862.5");
}

static void profile_with_a_string_value_names_the_file_and_key(void **state) {
  (void)state;
  const char *e = load_bad("string.json", NULL, "shadow_zap",
                           "{ \"value\": \"1500\", \"kind\": \"estimated\", \"source\": \"x\" }");
  assert_contains(e, "params.shadow_zap");
}

static void profile_missing_a_parameter_names_the_file_and_key(void **state) {
  (void)state;
  const char *e = load_bad("missing.json", "tlb_miss_2d", NULL, NULL);
  assert_contains(e, "tlb_miss_2d");
  assert_contains(e, "missing");
  e = load_bad("missing2.json", "cr3_targets_supported", NULL, NULL);
  assert_contains(e, "cr3_targets_supported");
}

static void profile_with_unknown_handler_reason_names_the_file_and_key(void **state) {
  (void)state;
  static struct profile pr;
  char path[256];
  snprintf(path, sizeof path, "%s/handler.json", tmpdir);
  write_profile(path, NULL, "handler.default",
                "{ \"value\": 300, \"kind\": \"estimated\", \"source\": \"x\" },\n"
                "    \"handler.CR_ACESS\": { \"value\": 1, \"kind\": \"estimated\", \"source\": \"x\" }");
  assert_int_not_equal(profile_load(&pr, path, err, sizeof err), 0);
  assert_contains(err, path);
  assert_contains(err, "handler.CR_ACESS");
}

static void malformed_profile_json_names_the_file_and_line(void **state) {
  (void)state;
  static struct profile pr;
  char path[256];
  snprintf(path, sizeof path, "%s/broken.json", tmpdir);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fprintf(f, "{\n  \"params\": {\n    \"vmread\": { \"value\": 50,, }\n  }\n}\n");
  fclose(f);
  assert_int_not_equal(profile_load(&pr, path, err, sizeof err), 0);
  assert_contains(err, path);
  assert_contains(err, ":3:");
}

/* ------------------------------------------------------------------------ */
/* Files named by another file (a regression case): read, never quoted       */

/* Writes text to dir/file and returns the path (static storage). */
static const char *write_file(const char *file, const char *text) {
  static char path[256];
  snprintf(path, sizeof path, "%s/%s", tmpdir, file);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  return path;
}

/* What loading path says, quoting and not quoting it: the same refusal, both
** naming the file and the line, only the first showing the word "zq9k"
** (which each file holds where it is wrong). */
static void check_hidden(const char *path, bool profile, const char *hidden_says) {
  char shown[2048] = "", hidden[2048] = "";
  struct profile pr;
  int rc = profile ? profile_load_flags(&pr, path, 0, shown, sizeof shown)
                   : policy_resolve_flags(&P, path, NULL, 0, 0, shown, sizeof shown);
  int rc_hidden = profile ? profile_load_flags(&pr, path, INPUT_HIDE_CONTENT, hidden, sizeof hidden)
                          : policy_resolve_flags(&P, path, NULL, 0, INPUT_HIDE_CONTENT, hidden, sizeof hidden);
  printf("%s\n  shown:  %s\n  hidden: %s\n", path, shown, hidden);
  assert_true(rc == EXIT_BADINPUT || rc == EXIT_USAGE);   /* usage: a "base" that names no preset */
  assert_int_equal(rc_hidden, rc);
  assert_contains(shown, "zq9k");
  assert_true(strncmp(hidden, path, strlen(path)) == 0);
  assert_contains(hidden, hidden_says);
  if (strstr(hidden, "zq9k")) fail_msg("the hidden message shows the file's text: %s", hidden);
}

static void a_hidden_policy_file_is_named_by_line_and_never_quoted(void **state) {
  (void)state;
  check_hidden(write_file("knob.json", "{\"knobs\": {\"zq9k\": 1}}"), false, ":1: unknown knob; valid knobs: paging,");
  check_hidden(write_file("novalue.json", "{\"knobs\": {\"zq9k\": [1]}}"), false, ":1: unknown knob; valid");
  check_hidden(write_file("choice.json", "{\"knobs\": {\n\"paging\": \"zq9k\"}}"), false,
               ":2: knob paging: the value is not one of: shadow, ept");
  check_hidden(write_file("range.json", "{\"knobs\": {\"tlb_entries\": \"zq9k\"}}"), false,
               ":1: knob tlb_entries: the value is not a whole number in 4..16384");
  check_hidden(write_file("bool.json", "{\"knobs\": {\"vpid\": \"zq9k\"}}"), false,
               ":1: knob vpid: the value is not true or false");
  check_hidden(write_file("syntax.json", "{\"knobs\":\n {\"vpid\": zq9k}}"), false,
               ":2:11: malformed JSON (expected a JSON object; its text is not shown)");
  /* a text that ends too early: where it ends */
  char msg[512];
  const char *open = write_file("open.json", "{\"knobs\": \n");
  assert_int_equal(policy_resolve_flags(&P, open, NULL, 0, INPUT_HIDE_CONTENT, msg, sizeof msg), EXIT_BADINPUT);
  assert_contains(msg, "open.json:1:10: malformed JSON: the text ends before the value is complete");
  /* a base's name is text of the file, and what its loading said would show it */
  check_hidden(write_file("base-name.json", "{\"base\": \"zq9k\", \"knobs\": {}}"), false,
               ":1: \"base\": not the name of a preset; valid: ");
  write_file("zq9k.json", "{\"knobs\": {\"vpid\": 7}}");
  char base[512];
  snprintf(base, sizeof base, "{\"base\": \"%s/zq9k.json\", \"knobs\": {}}", tmpdir);
  check_hidden(write_file("base-file.json", base), false, ":1: \"base\": the file it names cannot be used as a policy");
}

static void a_hidden_profile_is_named_by_line_and_never_quoted(void **state) {
  (void)state;
  char path[256];
  snprintf(path, sizeof path, "%s/param.json", tmpdir);
  write_profile(path, NULL, "vmread", "{ \"value\": 50, \"kind\": \"estimated\", \"source\": \"x\" },\n"
                "    \"zq9k\": { \"value\": 1 }");
  check_hidden(path, true, ": a key of params: unknown parameter; valid: clock_ghz,");
  snprintf(path, sizeof path, "%s/handler.json", tmpdir);
  write_profile(path, NULL, "vmread", "{ \"value\": 50, \"kind\": \"estimated\", \"source\": \"x\" },\n"
                "    \"handler.zq9k\": { \"value\": 1, \"kind\": \"estimated\", \"source\": \"x\" }");
  check_hidden(path, true, ": a key of params: unknown exit reason or breakdown row");
  /* a number is text too: "zq9k" cannot be one, so the value is one no other message holds */
  snprintf(path, sizeof path, "%s/fraction.json", tmpdir);
  write_profile(path, NULL, "vm_roundtrip", "{ \"value\": 1862.5, \"kind\": \"derived\", \"source\": \"zq9k\" }");
  char hidden[2048] = "";
  struct profile pr;
  assert_int_equal(profile_load_flags(&pr, path, INPUT_HIDE_CONTENT, hidden, sizeof hidden), EXIT_BADINPUT);
  assert_contains(hidden, "params.vm_roundtrip: the value is not a whole number in 0..4294967295");
  if (strstr(hidden, "1862")) fail_msg("the hidden message shows the value: %s", hidden);
}

/* A FIFO named as a file to read only when regular is refused at once (it
** would wait for a writer); a path the user gives may be one. */
static void a_fifo_is_refused_when_only_regular_files_are_read(void **state) {
  (void)state;
  char path[256];
  snprintf(path, sizeof path, "%s/policy.fifo.json", tmpdir);
  assert_int_equal(mkfifo(path, 0600), 0);
  err[0] = 0;
  assert_int_equal(policy_resolve_flags(&P, path, NULL, 0, INPUT_REGULAR_ONLY, err, sizeof err), EXIT_BADINPUT);
  assert_contains(err, "policy.fifo.json: is a FIFO, not a regular file");
  struct profile pr;
  assert_int_equal(profile_load_flags(&pr, "/dev/null", INPUT_REGULAR_ONLY, err, sizeof err), EXIT_BADINPUT);
  assert_string_equal(err, "/dev/null: is a character device, not a regular file");
  unlink(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(every_preset_resolves_on_its_own),
    cmocka_unit_test(nocache_preset_is_2007_kvm_shadow_paging_without_cache),
    cmocka_unit_test(shadowcache_preset_keeps_a_256_page_fifo_pool_with_refill_5_25),
    cmocka_unit_test(cr3cache_preset_uses_four_cr3_target_values),
    cmocka_unit_test(prevroots_preset_keeps_three_previous_roots),
    cmocka_unit_test(ept_preset_enables_ept_and_vpid_and_lets_the_guest_own_cr0_ts_and_wp),
    cmocka_unit_test(cr4mask_preset_gives_the_guest_kvm_5x_cr4_bits),
    cmocka_unit_test(lazydr_preset_switches_debug_registers_lazily),
    cmocka_unit_test(knob_defaults_apply_before_any_preset),
    cmocka_unit_test(plus_composes_presets_with_later_ones_overriding),
    cmocka_unit_test(plus_composes_three_presets),
    cmocka_unit_test(set_overrides_apply_after_every_preset),
    cmocka_unit_test(later_set_overrides_an_earlier_one),
    cmocka_unit_test(each_spelling_of_a_value_gives_one_name),
    cmocka_unit_test(order_and_repeats_of_the_overrides_give_one_name),
    cmocka_unit_test(policy_name_needs_no_preset_but_checks_the_overrides),
    cmocka_unit_test(unknown_preset_error_lists_the_valid_presets),
    cmocka_unit_test(unknown_preset_in_a_composition_is_reported),
    cmocka_unit_test(unknown_knob_error_lists_the_valid_knobs),
    cmocka_unit_test(bool_knob_rejects_maybe),
    cmocka_unit_test(enum_knob_rejects_sideways_and_lists_the_choices),
    cmocka_unit_test(unsigned_knob_rejects_minus_one),
    cmocka_unit_test(unsigned_knob_rejects_junk_and_overflow),
    cmocka_unit_test(count_knobs_take_decimal_only),
    cmocka_unit_test(mask_knobs_take_decimal_or_hex_but_no_leading_zero),
    cmocka_unit_test(set_without_equals_sign_is_an_error),
    cmocka_unit_test(empty_policy_name_is_an_error),
    cmocka_unit_test(missing_base_names_the_file_that_asked_for_it),
    cmocka_unit_test(ept_preset_turns_off_cr3_and_invlpg_exiting_and_enables_ept),
    cmocka_unit_test(ept_preset_is_the_vmcs_of_a_modern_kvm),
    cmocka_unit_test(shadow_paging_turns_on_cr3_and_invlpg_exiting_and_intercepts_page_faults),
    cmocka_unit_test(paging_mode_decides_the_real_control_registers_and_guest_cr3),
    cmocka_unit_test(paging_knob_values_are_the_modes_names),
    cmocka_unit_test(cr3cache_programs_cr3_target_count_4),
    cmocka_unit_test(policy_masks_reach_the_vmcs),
    cmocka_unit_test(shadow_paging_forces_cr4_pge_host_owned_even_with_cr4mask),
    cmocka_unit_test(shadow_paging_forces_nothing_when_the_mask_already_owns_the_bits),
    cmocka_unit_test(shadow_paging_counts_every_forced_cr4_bit),
    cmocka_unit_test(ept_with_cr4mask_leaves_pge_guest_owned),
    cmocka_unit_test(every_shipped_profile_loads),
    cmocka_unit_test(unknown_profile_error_lists_the_valid_profiles),
    cmocka_unit_test(a_generated_complete_profile_loads),
    cmocka_unit_test(profile_entry_without_source_names_the_file_and_key),
    cmocka_unit_test(profile_entry_with_bad_kind_names_the_file_and_key),
    cmocka_unit_test(profile_with_non_integer_cycles_names_the_file_and_key),
    cmocka_unit_test(profile_with_a_string_value_names_the_file_and_key),
    cmocka_unit_test(profile_missing_a_parameter_names_the_file_and_key),
    cmocka_unit_test(profile_with_unknown_handler_reason_names_the_file_and_key),
    cmocka_unit_test(malformed_profile_json_names_the_file_and_line),
    cmocka_unit_test(a_hidden_policy_file_is_named_by_line_and_never_quoted),
    cmocka_unit_test(a_hidden_profile_is_named_by_line_and_never_quoted),
    cmocka_unit_test(a_fifo_is_refused_when_only_regular_files_are_read),
  };
  /* the group set-up makes the temporary directory the profile-file tests write to */
  return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
