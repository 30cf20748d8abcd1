/* Output files written atomically: everything goes to a temporary file beside
** the target, renamed over it at the end, so that a failure or a kill leaves
** neither a partial file nor a removed old one.
**
** The temporary file is ".NAME" OUTFILE_TMP_TAG "PID.XXXXXX" in the target's
** directory (NAME: the target's base name, cut to OUTFILE_TMP_NAME_MAX bytes;
** PID: the writing process; XXXXXX: mkstemp's six characters), e.g.
** ".lat_ctx.bin.vmxsim-tmp.4711.k3Jx9a".  Dot-files, so that listings stay
** clean; the tag, so that a leftover is recognisable as vmxsim's; the PID, so
** that it is known to be a leftover once that process is gone.
**
** Nothing stays behind: SIGINT and SIGTERM remove every temporary file and
** scratch directory of the process (interrupt_install, util.h), and one killed
** with SIGKILL leaves one that the next outfile_begin for the same target (or
** outfile_tmpdir for the same NAME) removes, as its PID is no longer alive.
**
** Its mode is the target's when the target exists, else 0666 & ~umask, as a
** plain fopen(path, "w") would give.  A symlink is followed: its target file
** is replaced, the link stays.
**
** Errors follow docs/architecture.md, "Errors": 0 or an enum exit_code, the
** message in the caller's buffer.
*/
#ifndef VMXSIM_OUTFILE_H
#define VMXSIM_OUTFILE_H

#include <stddef.h>

#define OUTFILE_TMP_TAG      ".vmxsim-tmp."
#define OUTFILE_TMP_NAME_MAX 200

/* What may stand at the output path. */
enum outfile_target {
  OUTFILE_REGULAR,   /* a regular file, new or existing; anything else (standard output
                        as "-", a device, a FIFO) is refused: a binary trace is rewound
                        to finish its header, and renaming over a device would replace it */
  OUTFILE_ANY,       /* also a device or FIFO (/dev/stdout): written in place, not atomically */
};

struct outfile {
  char *target;      /* the file to replace (symlinks resolved) */
  char *tmp;         /* the file written instead; NULL when writing in place */
};

/* Creates the temporary file (empty).  Returns 0, or EXIT_IO with
** "PATH: why" in err; o needs no cleanup after a failure. */
int outfile_begin(struct outfile *o, const char *path, enum outfile_target kind, char *err, size_t errlen);
/* The path to open and write. */
const char *outfile_path(const struct outfile *o);
/* Renames the temporary file over the target (nothing when writing in place).
** Returns 0, or EXIT_IO with the message in err after removing it. */
int outfile_commit(struct outfile *o, char *err, size_t errlen);
/* Links the temporary file to the target unless a target exists by then
** (another process made it first: that one stays, and the temporary file is
** removed).  Returns 0 either way, or EXIT_IO with the message in err. */
int outfile_commit_new(struct outfile *o, char *err, size_t errlen);
/* Removes the temporary file: the target stays as it was. */
void outfile_discard(struct outfile *o);

/* Writes text as the whole content of o's file and commits it (or discards
** it on a failure).  Returns 0 or EXIT_IO with "PATH: cannot write: why". */
int outfile_put_text(struct outfile *o, const char *text, char *err, size_t errlen);
/* Writes text as the whole content of path through a temporary file.
** Returns 0 or EXIT_IO with "PATH: cannot write: why" in err. */
int outfile_write_text(const char *path, const char *text, char *err, size_t errlen);

/* Removes the leftovers of dead processes for target path (as outfile_begin
** does), for a command that may not rewrite the target this time. */
void outfile_clean_leftovers(const char *path);

/* A new private directory for scratch files, $TMPDIR/.NAME.vmxsim-tmp.PID.XXXXXX
** (/tmp when TMPDIR is unset or empty), removed with its files by a signal
** (see above) or by outfile_tmpdir_remove.  Sets *dir (caller frees) and
** returns 0, or EXIT_INTERNAL with the message in err. */
int outfile_tmpdir(const char *name, char **dir, char *err, size_t errlen);
/* Removes the scratch directory and the files in it. */
void outfile_tmpdir_remove(const char *dir);

#endif
