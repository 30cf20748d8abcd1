/* The simulator's version: stored with every result and printed by --version. */
#ifndef VMXSIM_VERSION_H
#define VMXSIM_VERSION_H
#define VMXSIM_VERSION "0.1.0"
#endif
