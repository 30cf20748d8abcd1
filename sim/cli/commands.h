/* Subcommands of the vmxsim program whose front ends live in sim/cli.  Each
** takes the arguments after its own name (argv[0] is the subcommand name) and
** returns an enum exit_code.  The commands of the higher subsystems are
** declared by their own headers: cmd_regress (sim/regress/regress.h),
** cmd_repl (sim/repl/repl.h), cmd_reproduce (sim/reproduce/reproduce.h). */
#ifndef VMXSIM_COMMANDS_H
#define VMXSIM_COMMANDS_H

int cmd_run(int argc, char **argv);        /* sim/cli/cmd_run.c: replay a trace under a policy */
int cmd_trace(int argc, char **argv);      /* sim/cli/cmd_trace.c: trace asm | dump | info */
int cmd_policies(int argc, char **argv);   /* sim/cli/cmd_list.c: list policy presets and knobs */
int cmd_cpus(int argc, char **argv);       /* sim/cli/cmd_list.c: list CPU profiles */
int cmd_gen(int argc, char **argv);        /* sim/cli/cmd_gen.c: trace generators */
int cmd_runs(int argc, char **argv);       /* sim/cli/cmd_runs.c: list stored runs */
int cmd_report(int argc, char **argv);     /* sim/cli/cmd_report.c: print a stored run's report */
int cmd_compare(int argc, char **argv);    /* sim/cli/cmd_compare.c: compare stored runs */
int cmd_import(int argc, char **argv);     /* sim/cli/cmd_import.c: import perf/KVM/Xen recordings */
int cmd_summary(int argc, char **argv);    /* sim/cli/cmd_summary.c: a recording's measured exits */
int cmd_calibrate(int argc, char **argv);  /* sim/cli/cmd_calibrate.c: a profile fitted to a recording */
int cmd_sweep(int argc, char **argv);      /* sim/cli/cmd_sweep.c: run a sweep plan, here or on Slurm */
int cmd_merge(int argc, char **argv);      /* sim/cli/cmd_sweep.c: merge results databases */
int cmd_migrate(int argc, char **argv);    /* sim/cli/cmd_migrate.c: upgrade a database's schema */

#endif
