/* The lists that must agree with each other: every event type of
** models/event.h has a canonical text form that assembles back to the same
** record, a row in each table of traces/FORMAT.md, and (for instructions the
** processor decides) an explanation that names the control it depends on.
** Adding an event type or an exit rule without the rest fails here. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/alloc.h"
#include "models/vmx/controls.h"
#include "models/vmx/exit.h"
#include "models/vmx/exit_reason.h"
#include "sim/trace/trace_text.h"
#include "sim/base/util.h"

static const char *const enum_names[EV_COUNT] = {
#define X(e, m, d) "EV_" #e,
  EVENT_TYPES(X)
#undef X
};

/* One valid record of each type, operands inside the documented ranges. */
static struct trace_event sample(unsigned type) {
  struct trace_event ev = { .type = (uint8_t)type };
  switch (type) {
  case EV_RUN: ev.cycles = 2400; break;
  case EV_INIT: case EV_CR_WRITE: ev.aux = 3; ev.a = 0x1000; break;
  case EV_CR_READ: ev.aux = 3; break;
  case EV_LMSW: ev.a = 1; break;
  case EV_DR_WRITE: ev.aux = 7; ev.a = 0x401; break;
  case EV_DR_READ: ev.aux = 6; break;
  case EV_CPUID: ev.a = 1; break;
  case EV_RDMSR: ev.a = 0x10; break;
  case EV_WRMSR: ev.a = 0x6e0; ev.b = 0x1234; break;
  case EV_INVLPG: ev.a = 0x7f0000001000ull; break;
  case EV_IO: ev.aux = IO_AUX_OUT | 1u << 1; ev.a = 0x3f8; break;
  case EV_TOUCH: ev.aux = TOUCH_AUX_WRITE; ev.a = 0x400000; ev.b = 4; break;
  case EV_PTWRITE: ev.aux = 1; ev.a = 0x400000; break;
  case EV_SYSCALL: ev.a = 1; break;
  case EV_MARK: memcpy(&ev.a, "switch", 6); break;
  case EV_RDPMC: ev.a = 0x40000001; break;
  case EV_INTR: ev.a = 236; break;
  case EV_EXC: ev.a = 14; ev.b = 6; break;
  case EV_XSETBV: ev.b = 7; break;
  case EV_APIC: ev.aux = APIC_AUX_WRITE; ev.a = APIC_ICR; ev.b = 0x01000000000000fdull; break;
  case EV_STI: ev.aux = STI_AUX_POPF; break;
  case EV_IRET: ev.aux = IRET_AUX_IF0; break;
  case EV_VIRQ: ev.a = 236; break;
  case EV_INVPCID: ev.a = 0x400000; ev.b = 1; break;
  case EV_TASK_SWITCH: ev.aux = 3; ev.a = 0x28; break;
  case EV_VMX: ev.a = EXIT_REASON_VMREAD; break;
  default: break;                    /* no operands (clts, hlt, sysret, pause...) */
  }
  return ev;
}

struct one { struct trace_event ev; int n; };
static int keep(void *ctx, const struct trace_event *ev) {
  struct one *o = ctx;
  o->ev = *ev;
  o->n++;
  return 0;
}

static void every_event_type_has_a_text_form_that_assembles_back(void **state) {
  (void)state;
  for (unsigned t = 0; t < EV_COUNT; t++) {
    struct trace_event ev = sample(t);
    assert_null(event_invalid(&ev));
    char line[160];
    trace_text_format(&ev, line, sizeof line);
    if (!strncmp(line, "raw ", 4)) fail_msg("%s: no canonical text form (dumps as '%s')", enum_names[t], line);
    struct trace_text_parser p;
    struct one got = { .n = 0 };
    trace_text_parser_init(&p);
    int rc = trace_text_parse_line(&p, line, keep, &got);
    if (rc != 0) fail_msg("%s: '%s' does not assemble: %s", enum_names[t], line, p.err);
    trace_text_parser_free(&p);
    if (got.n != 1 || memcmp(&got.ev, &ev, sizeof ev) != 0)
      fail_msg("%s: '%s' assembles to %d record(s) of type %u, expected 1 of type %u", enum_names[t], line,
               got.n, got.ev.type, t);
  }
}

/* The lines of FORMAT.md's table rows. */
static char *format_md(void) {
  size_t len;
  char *text = read_file("traces/FORMAT.md", &len);
  if (!text) fail_msg("traces/FORMAT.md: cannot read it (run the tests from the repository root)");
  return text;
}

static void format_md_lists_every_event_type_with_its_number(void **state) {
  (void)state;
  char *md = format_md();
  for (unsigned t = 0; t < EV_COUNT; t++) {
    char row[64];
    snprintf(row, sizeof row, "\n| %-2u | %-11s |", t, enum_names[t]);
    if (!strstr(md, row)) fail_msg("traces/FORMAT.md: no event-type row '%s'", row + 1);
  }
  free(md);
}

/* Does a row of the text-syntax table (a line starting "| `") show the
** mnemonic, as "`MNEMONIC " or "`MNEMONIC`"? */
static bool syntax_row_has(const char *md, const char *mnemonic) {
  for (const char *line = md; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
    if (strncmp(line, "| `", 3) != 0) continue;
    const char *end = strchr(line, '\n');
    size_t n = end ? (size_t)(end - line) : strlen(line), m = strlen(mnemonic);
    for (const char *s = line; s + m + 1 < line + n; s++)
      if (s[0] == '`' && !strncmp(s + 1, mnemonic, m) && (s[m + 1] == ' ' || s[m + 1] == '`')) return true;
  }
  return false;
}

static void format_md_gives_the_text_syntax_of_every_event_type(void **state) {
  (void)state;
  char *md = format_md();
  for (unsigned t = 0; t < EV_COUNT; t++) {
    struct trace_event ev = sample(t);
    char line[160];
    trace_text_format(&ev, line, sizeof line);
    line[strcspn(line, " ")] = 0;          /* the mnemonic, e.g. "cr3w" or "@init" */
    if (!syntax_row_has(md, line))
      fail_msg("traces/FORMAT.md: no row of the text-syntax table shows `%s` (%s)", line, enum_names[t]);
  }
  free(md);
}

/* Every decision that depends on a control names it (explain.c takes the names
** from the lists in controls.h): each instruction is decided with all
** controls clear, then all set. */
static void explanations_name_every_control_a_decision_depends_on(void **state) {
  (void)state;
  static struct vmx_cpu s;
  for (int set = 0; set < 2; set++) {
    memset(&s, 0, sizeof s);
    uint64_t all = set ? ~0ull : 0;
    vmcs_poke(&s.vmcs, VMCS_PIN_BASED_VM_EXEC_CONTROL, all);
    vmcs_poke(&s.vmcs, VMCS_CPU_BASED_VM_EXEC_CONTROL, all & ~(uint64_t)CPU_USE_MSR_BITMAPS);
    vmcs_poke(&s.vmcs, VMCS_SECONDARY_VM_EXEC_CONTROL, all);
    for (unsigned t = 0; t < EV_COUNT; t++) {
      struct trace_event ev = sample(t);
      if (t == EV_EXC) ev.a = 2;       /* an NMI: decided by "NMI exiting" */
      struct exit_decision d = vmx_decide(&s, &ev);
      char text[256];
      vmx_explain(&d, &ev, text, sizeof text);
      if ((d.why == WHY_CONTROL_SET || d.why == WHY_CONTROL_CLEAR) && strstr(text, "the control"))
        fail_msg("%s with controls %s: the explanation names no control: %s", enum_names[t],
                 set ? "set" : "clear", text);
      if (d.exits && !exit_reason_name(d.reason))
        fail_msg("%s: exit reason %u has no name", enum_names[t], d.reason);
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(every_event_type_has_a_text_form_that_assembles_back),
    cmocka_unit_test(format_md_lists_every_event_type_with_its_number),
    cmocka_unit_test(format_md_gives_the_text_syntax_of_every_event_type),
    cmocka_unit_test(explanations_name_every_control_a_decision_depends_on),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
