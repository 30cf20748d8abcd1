/* The generators by name: what `vmxsim gen`, regression cases ("generate")
** and `vmxsim reproduce` run.  Errors as in genutil.h: nothing here prints. */
#ifndef VMXSIM_GENERATORS_H
#define VMXSIM_GENERATORS_H

#include <stddef.h>

struct generator {
  const char *name;          /* "lat_ctx", as `vmxsim gen` takes it */
  const char *summary;       /* one line for `vmxsim gen --help` */
  const char *usage;         /* `vmxsim gen NAME --help` */
  int model_version;         /* the metadata's "model_version": bumped when the output for
                                the same options changes (sweeps key their trace cache by it) */
  /* Parses the options argv[1..] and writes the trace (gen_NAME_args). */
  int (*run)(int argc, char **argv, const char *out, char *err, size_t errlen);
};

extern const struct generator generators[];
extern const size_t ngenerators;

/* The generator called name, or NULL. */
const struct generator *generator_find(const char *name);

/* Runs generator argv[0] with the options argv[1..] into out (when not NULL:
** then argv needs no -o).  Returns 0, EXIT_USAGE (unknown generator or
** option, parameter out of range) or EXIT_BADINPUT (output not written),
** with the message in err as `vmxsim gen` prints it: "gen NAME: what; see
** 'vmxsim gen NAME --help'". */
int gen_generate(int argc, char **argv, const char *out, char *err, size_t errlen);

#endif
