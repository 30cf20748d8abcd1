/* Subcommands of the vmxsim program.  Each takes the arguments after its own
** name (argv[0] is the subcommand name) and returns an enum exit_code. */
#ifndef VMXSIM_COMMANDS_H
#define VMXSIM_COMMANDS_H

int cmd_run(int argc, char **argv);        /* sim/cmd_run.c: replay a trace under a policy */
int cmd_trace(int argc, char **argv);      /* sim/cmd_trace.c: trace asm | dump | info */
int cmd_policies(int argc, char **argv);   /* sim/cmd_list.c: list policy presets and knobs */
int cmd_cpus(int argc, char **argv);       /* sim/cmd_list.c: list CPU profiles */
int cmd_gen(int argc, char **argv);        /* workloads/gen.c: trace generators */

#endif
