/* An interrupt-driven guest: timer ticks, IPIs between vCPUs, device
** interrupts with their EOIs, and idle vCPUs halted until one wakes them. */
#ifndef VMXSIM_GEN_INTERRUPTS_H
#define VMXSIM_GEN_INTERRUPTS_H

#include <stddef.h>
#include <stdint.h>
#include "genutil.h"

#define INTERRUPTS_MODEL_VERSION 1

/* Linux's vectors (arch/x86/include/asm/irq_vectors.h). */
#define IRQ_VECTOR_TIMER      0xec   /* LOCAL_TIMER_VECTOR */
#define IRQ_VECTOR_RESCHED    0xfd   /* RESCHEDULE_VECTOR */
#define IRQ_VECTOR_CALLFUNC   0xfb   /* CALL_FUNCTION_SINGLE_VECTOR */
/* The x2APIC MSRs (SDM Vol. 3A 11.12.1.2) and IA32_TSC_DEADLINE (11.5.4.1). */
#define MSR_X2APIC_EOI        0x80bu
#define MSR_X2APIC_ICR        0x830u
#define MSR_TSC_DEADLINE      0x6e0u

enum irq_timer_mode { IRQ_TIMER_DEADLINE, IRQ_TIMER_PERIODIC };
enum irq_idle_mode { IRQ_IDLE_AUTO = -1, IRQ_IDLE_NOHZ, IRQ_IDLE_TICK };
enum irq_apic_mode { IRQ_APIC_X2APIC, IRQ_APIC_XAPIC };

struct interrupts_opts {
  uint64_t vcpus;          /* --vcpus V */
  uint64_t busy;           /* --busy B: vCPUs 0..B-1 run tasks all the time; the rest idle */
  uint64_t duration_ms;    /* --duration MS: guest time the trace covers */
  uint64_t hz;             /* --hz: the scheduler tick (CONFIG_HZ) */
  int timer;               /* --timer deadline|periodic (enum irq_timer_mode) */
  int idle;                /* --idle nohz|tick (enum irq_idle_mode; AUTO: nohz with deadline) */
  int apic;                /* --apic x2apic|xapic (enum irq_apic_mode) */
  double timers;           /* --timers R: other timer expiries per vCPU per second (NAN: default) */
  double resched;          /* --resched R: reschedule IPIs received per vCPU per second */
  double callfunc;         /* --callfunc R: call-function IPIs received per vCPU per second */
  double device;           /* --device R: device interrupts per second, all vCPUs together */
  uint64_t device_vector;  /* --device-vector V */
  uint64_t wake_us;        /* --wake-work US: what a woken idle vCPU runs before it idles again */
  uint64_t seed;           /* --seed S: placement of the interrupts, senders, targets */
  unsigned paging;         /* --paging 32|pae|64 */
  double cpu_ghz;          /* --cpu-ghz: converts time to cycles (and the TSC deadlines) */
};

void interrupts_defaults(struct interrupts_opts *o);
int gen_interrupts(const struct interrupts_opts *o, const char *path, char *err, size_t errlen);
/* `vmxsim gen interrupts` with the options argv[1..] (usage: interrupts_usage). */
int gen_interrupts_args(int argc, char **argv, const char *out, char *err, size_t errlen);
extern const char interrupts_usage[];

#endif
