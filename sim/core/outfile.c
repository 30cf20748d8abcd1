/* Output files written atomically (see outfile.h). */
#include "outfile.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* "DIR/.NAME.vmxsim-tmp.XXXXXX" for target "DIR/NAME" (malloc'd). */
static char *tmp_template(const char *target) {
  const char *slash = strrchr(target, '/');
  const char *name = slash ? slash + 1 : target;
  int dirlen = (int)(name - target);
  size_t n = strlen(target) + sizeof "." OUTFILE_TMP_TAG "XXXXXX";
  char *t = xmalloc(n);
  snprintf(t, n, "%.*s.%.*s" OUTFILE_TMP_TAG "XXXXXX", dirlen, target, OUTFILE_TMP_NAME_MAX, name);
  return t;
}

/* The mode a new file gets from fopen(path, "w"): 0666 less the umask. */
static mode_t default_mode(void) {
  mode_t mask = umask(0);          /* the only way to read the umask */
  umask(mask);
  return 0666 & ~mask;
}

int outfile_begin(struct outfile *o, const char *path, enum outfile_target kind, char *err, size_t errlen) {
  struct stat st;
  memset(o, 0, sizeof *o);
  bool exists = stat(path, &st) == 0;
  if (kind == OUTFILE_REGULAR && (strcmp(path, "-") == 0 || (exists && !S_ISREG(st.st_mode)))) {
    snprintf(err, errlen, "%s: not a regular file (a binary trace cannot go to standard output, "
             "a device or a FIFO)", path);
    return EXIT_BADINPUT;
  }
  char *real = realpath(path, NULL);           /* follow a symlink to its file */
  o->target = real ? real : xstrdup(path);
  if (exists && !S_ISREG(st.st_mode)) return EXIT_OK;   /* OUTFILE_ANY: written in place */
  o->tmp = tmp_template(o->target);
  int fd = mkstemp(o->tmp);
  if (fd < 0) {
    snprintf(err, errlen, "%s: cannot create: %s", path, strerror(errno));
    free(o->tmp);
    free(o->target);
    memset(o, 0, sizeof *o);
    return EXIT_BADINPUT;
  }
  /* mkstemp makes 0600; a failed fchmod leaves it so, which is harmless */
  if (fchmod(fd, exists ? st.st_mode & 07777 : default_mode()) != 0) { }
  close(fd);
  return EXIT_OK;
}

const char *outfile_path(const struct outfile *o) { return o->tmp ? o->tmp : o->target; }

static void release(struct outfile *o) {
  free(o->tmp);
  free(o->target);
  o->tmp = o->target = NULL;
}

int outfile_commit(struct outfile *o, char *err, size_t errlen) {
  int rc = EXIT_OK;
  if (o->tmp && rename(o->tmp, o->target) != 0) {
    snprintf(err, errlen, "%s: cannot rename into place: %s", o->target, strerror(errno));
    remove(o->tmp);
    rc = EXIT_BADINPUT;
  }
  release(o);
  return rc;
}

void outfile_discard(struct outfile *o) {
  if (o->tmp) remove(o->tmp);
  release(o);
}

int outfile_tmpdir(const char *name, char **dir, char *err, size_t errlen) {
  const char *base = getenv("TMPDIR");
  if (!base || !*base) base = "/tmp";
  size_t n = strlen(base) + strlen(name) + sizeof "/.XXXXXX";
  *dir = xmalloc(n);
  snprintf(*dir, n, "%s/%s.XXXXXX", base, name);
  if (mkdtemp(*dir)) return EXIT_OK;
  snprintf(err, errlen, "cannot create a temporary directory (%s): %s", *dir, strerror(errno));
  free(*dir);
  *dir = NULL;
  return EXIT_INTERNAL;
}

static bool write_all(int fd, const char *text) {
  size_t n = strlen(text), off = 0;
  while (off < n) {
    ssize_t w = write(fd, text + off, n - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    off += (size_t)w;
  }
  return true;
}

int outfile_write_text(const char *path, const char *text, char *err, size_t errlen) {
  struct outfile o;
  int rc = outfile_begin(&o, path, OUTFILE_ANY, err, errlen);
  if (rc) return rc;
  int fd = open(outfile_path(&o), O_WRONLY | O_TRUNC);
  bool ok = fd >= 0 && write_all(fd, text);
  if (fd >= 0 && close(fd) != 0) ok = false;
  if (!ok) {
    snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
    outfile_discard(&o);
    return EXIT_BADINPUT;
  }
  return outfile_commit(&o, err, errlen);
}
