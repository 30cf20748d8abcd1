/* `vmxsim cpus --controls`: which of the VMX controls a hypervisor of the 2020s
** uses each CPU profile has, decided from the profile's capabilities exactly as
** VM entry decides it (profile_vmx_caps, vmx_entry_check). */
#include "profile.h"
#include "models/vmx/controls.h"
#include "sim/base/format.h"
#include "sim/base/texttable.h"
#include "sim/base/util.h"

#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

struct listed_control {
  const char *key;           /* CSV column and JSON key: the profile's vmx.* name without "vmx." */
  const char *head;          /* the table's column */
  enum control_field field;
  uint32_t bit;
};

/* In the order a reader meets them: paging, then the APIC and interrupt
** controls, then timers and spinning. */
static const struct listed_control listed[] = {
  { "tpr_shadow", "TPR", CTL_CPU, CPU_TPR_SHADOW },
  { "ept", "EPT", CTL_SEC, SEC_ENABLE_EPT },
  { "vpid", "VPID", CTL_SEC, SEC_ENABLE_VPID },
  { "unrestricted_guest", "UG", CTL_SEC, SEC_UNRESTRICTED_GUEST },
  { "virtualize_apic_accesses", "APIC-acc", CTL_SEC, SEC_APIC_ACCESS },
  { "apic_register_virtualization", "APIC-reg", CTL_SEC, SEC_APIC_REGISTER_VIRT },
  { "virtual_interrupt_delivery", "VID", CTL_SEC, SEC_VIRTUAL_INTR_DELIVERY },
  { "posted_interrupts", "PI", CTL_PIN, PIN_POSTED_INTR },
  { "virtualize_x2apic_mode", "x2APIC", CTL_SEC, SEC_VIRT_X2APIC },
  { "preemption_timer", "timer", CTL_PIN, PIN_PREEMPTION_TIMER },
  { "pause_loop_exiting", "PLE", CTL_SEC, SEC_PAUSE_LOOP_EXITING },
  { "ipi_virtualization", "IPIv", CTL_TER, TER_IPI_VIRT },
};
#define NLISTED (sizeof listed / sizeof listed[0])

struct controls_row {
  char name[64];
  bool has[NLISTED];
};

/* Whether VM entry takes the control: its allowed-1 bit and, for a secondary
** or tertiary control, the primary control that activates its field. */
static bool allows(const struct vmx_caps *c, const struct listed_control *l) {
  switch (l->field) {
  case CTL_PIN: return c->pin_allowed1 & l->bit;
  case CTL_CPU: return c->cpu_allowed1 & l->bit;
  case CTL_SEC: return (c->cpu_allowed1 & CPU_ACTIVATE_SECONDARY) && (c->sec_allowed1 & l->bit);
  case CTL_TER: return (c->cpu_allowed1 & CPU_ACTIVATE_TERTIARY) && (c->ter_allowed1 & l->bit);
  }
  return false;
}

/* Loads every profile first, so that a bad one prints nothing. */
static int load_rows(const char *const *names, struct controls_row *rows, char *err, size_t errlen) {
  for (unsigned i = 0; names[i]; i++) {
    struct profile p;
    int rc = profile_load(&p, names[i], err, errlen);
    if (rc == EXIT_OK) {
      struct vmx_caps caps = profile_vmx_caps(&p);
      snprintf(rows[i].name, sizeof rows[i].name, "%s", p.name);
      for (unsigned k = 0; k < NLISTED; k++) rows[i].has[k] = allows(&caps, &listed[k]);
    }
    profile_free(&p);
    if (rc != EXIT_OK) return rc;
  }
  return EXIT_OK;
}

static void print_table(FILE *f, const struct controls_row *rows, unsigned n) {
  struct texttable t;
  char align[NLISTED + 3] = "ll";
  tt_init(&t, NLISTED + 2);
  tt_cell(&t, "%s", ""), tt_cell(&t, "name");
  for (unsigned k = 0; k < NLISTED; k++) tt_cell(&t, "%s", listed[k].head), strcat(align, "l");
  for (unsigned i = 0; i < n; i++) {
    tt_cell(&t, "%s", ""), tt_cell(&t, "%s", rows[i].name);
    for (unsigned k = 0; k < NLISTED; k++) tt_cell(&t, "%s", rows[i].has[k] ? "yes" : "-");
  }
  fprintf(f, "VMX controls of each CPU profile (yes: the CPU has it; '-': VM entry with it set fails,\n"
             "VM-instruction error 7):\n");
  tt_print(f, &t, align, 2);
  fprintf(f, "\n");
  for (unsigned k = 0; k < NLISTED; k++)
    fprintf(f, "  %-9s %s\n", listed[k].head, control_name(listed[k].field, listed[k].bit));
  tt_free(&t);
}

static void print_csv(FILE *f, const struct controls_row *rows, unsigned n) {
  fprintf(f, "name");
  for (unsigned k = 0; k < NLISTED; k++) fprintf(f, ",%s", listed[k].key);
  fputc('\n', f);
  for (unsigned i = 0; i < n; i++) {
    csv_field(f, rows[i].name);
    for (unsigned k = 0; k < NLISTED; k++) fprintf(f, ",%d", rows[i].has[k]);
    fputc('\n', f);
  }
}

static void print_json(FILE *f, const struct controls_row *rows, unsigned n) {
  cJSON *arr = cJSON_CreateArray();
  for (unsigned i = 0; i < n; i++) {
    cJSON *o = cJSON_CreateObject(), *c = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", rows[i].name);
    for (unsigned k = 0; k < NLISTED; k++) cJSON_AddBoolToObject(c, listed[k].key, rows[i].has[k]);
    cJSON_AddItemToObject(o, "controls", c);
    cJSON_AddItemToArray(arr, o);
  }
  char *text = cJSON_Print(arr);
  fprintf(f, "%s\n", text);
  free(text);
  cJSON_Delete(arr);
}

int profile_list_controls(FILE *f, enum report_format fmt, const char *const *names, char *err, size_t errlen) {
  if (!names || !names[0]) names = profile_names();
  unsigned n = 0;
  while (names[n]) n++;
  struct controls_row *rows = xcalloc(n, sizeof *rows);
  int rc = load_rows(names, rows, err, errlen);
  if (rc == EXIT_OK) {
    if (fmt == FORMAT_CSV) print_csv(f, rows, n);
    else if (fmt == FORMAT_JSON) print_json(f, rows, n);
    else print_table(f, rows, n);
  }
  free(rows);
  return rc;
}
