/* The simulator's version: stored with every result and printed by --version.
** It is part of a run's identity (store_run_key), so a sweep or merge never takes a
** run of an older model for one of this model: raise it whenever a change moves a
** simulated number (regress --update changed a case), not only at releases. */
#ifndef VMXSIM_VERSION_H
#define VMXSIM_VERSION_H
#define VMXSIM_VERSION "0.2.2"
#endif
