/* `vmxsim regress`: replay regression cases and compare their results with
** the expectations they record (the case file: regress_case.h). */
#ifndef VMXSIM_REGRESS_H
#define VMXSIM_REGRESS_H

/* The command: argv[0] is "regress"; returns an enum exit_code. */
int cmd_regress(int argc, char **argv);

#endif
