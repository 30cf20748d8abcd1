/* Output files written atomically (see outfile.h). */
#include "outfile.h"
#include "util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ---- names ---- */

/* "DIR/.NAME.vmxsim-tmp." for target "DIR/NAME" (malloc'd): what every
** temporary file of that target starts with, whatever its PID. */
static char *tmp_prefix(const char *target) {
  const char *slash = strrchr(target, '/');
  const char *name = slash ? slash + 1 : target;
  int dirlen = (int)(name - target);
  size_t n = strlen(target) + sizeof "." OUTFILE_TMP_TAG;
  char *t = xmalloc(n);
  snprintf(t, n, "%.*s.%.*s" OUTFILE_TMP_TAG, dirlen, target, OUTFILE_TMP_NAME_MAX, name);
  return t;
}

/* "DIR/.NAME.vmxsim-tmp.PID.XXXXXX" for target "DIR/NAME" (malloc'd). */
static char *tmp_template(const char *target) {
  char *prefix = tmp_prefix(target);
  size_t n = strlen(prefix) + 32;
  char *t = xmalloc(n);
  snprintf(t, n, "%s%ld.XXXXXX", prefix, (long)getpid());
  free(prefix);
  return t;
}

/* ---- what a signal removes ----
** The handler (util.c) cannot take locks or allocate: the paths live in fixed
** slots, filled before `used` is set and left alone until it is cleared. */

#define LIVE_MAX 64
static struct live {
  volatile sig_atomic_t used, is_dir;
  char path[PATH_MAX];
} live[LIVE_MAX];
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;

/* The files in dir (not its subdirectories), with no call a signal handler
** may not make: open, getdents64, unlinkat. */
static void remove_dir_files(const char *dir) {
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  char buf[4096];
  for (int pass = 0; pass < 64; pass++) {   /* removing while reading may skip names: read again */
    bool removed = false;
    long n;
    lseek(fd, 0, SEEK_SET);
    while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0)
      for (long off = 0; off < n; ) {
        const char *name = buf + off + 19;   /* struct linux_dirent64: ino 8, off 8, reclen 2, type 1 */
        unsigned short reclen;
        memcpy(&reclen, buf + off + 16, sizeof reclen);
        off += reclen;
        if (strcmp(name, ".") && strcmp(name, "..") && unlinkat(fd, name, 0) == 0) removed = true;
      }
    if (!removed) break;
  }
  close(fd);
}

static void remove_tree(const char *path, bool is_dir) {
  if (!is_dir) {
    unlink(path);
    return;
  }
  remove_dir_files(path);
  rmdir(path);
}

/* The handler's cleanup: async-signal-safe. */
static void remove_live(void) {
  for (int i = 0; i < LIVE_MAX; i++)
    if (live[i].used) remove_tree(live[i].path, live[i].is_dir);
}

static void live_add(const char *path, bool is_dir) {
  if (strlen(path) >= PATH_MAX) return;
  pthread_mutex_lock(&live_lock);
  for (int i = 0; i < LIVE_MAX; i++)
    if (!live[i].used) {
      memcpy(live[i].path, path, strlen(path) + 1);
      live[i].is_dir = is_dir;
      __atomic_thread_fence(__ATOMIC_SEQ_CST);   /* the path is complete before the slot counts */
      live[i].used = 1;
      break;
    }
  pthread_mutex_unlock(&live_lock);
  interrupt_on_exit(remove_live);
}

static void live_drop(const char *path) {
  pthread_mutex_lock(&live_lock);
  for (int i = 0; i < LIVE_MAX; i++)
    if (live[i].used && !strcmp(live[i].path, path)) {
      live[i].used = 0;
      break;
    }
  pthread_mutex_unlock(&live_lock);
}

/* Signals wait while a temporary file is created and registered, so that none
** is created unregistered. */
static void block_signals(sigset_t *old) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, old);
}

static void restore_signals(const sigset_t *old) { pthread_sigmask(SIG_SETMASK, old, NULL); }

/* ---- leftovers of killed processes ---- */

/* Whether entry is PREFIX "PID.XXXXXX" (prefix: tmp_prefix's base name) of a
** process that no longer exists. */
static bool dead_leftover(const char *entry, const char *prefix) {
  size_t n = strlen(prefix);
  if (strncmp(entry, prefix, n) || !isdigit((unsigned char)entry[n])) return false;
  char *end;
  errno = 0;
  long pid = strtol(entry + n, &end, 10);
  if (errno || pid <= 0 || pid > INT_MAX || *end != '.' || strlen(end + 1) != 6) return false;
  if ((pid_t)pid == getpid()) return false;
  return kill((pid_t)pid, 0) != 0 && errno == ESRCH;   /* EPERM: alive, another user's */
}

static char *join(const char *dir, const char *name) {
  size_t n = strlen(dir) + strlen(name) + 2;
  char *p = xmalloc(n);
  snprintf(p, n, "%s/%s", dir, name);
  return p;
}

/* Removes the leftovers of dead processes for target (symlinks resolved). */
static void clean_target(const char *target) {
  char *prefix = tmp_prefix(target);          /* "DIR/.NAME.vmxsim-tmp." or ".NAME.vmxsim-tmp." */
  char *slash = strrchr(prefix, '/');
  const char *dir = !slash ? "." : slash == prefix ? "/" : prefix;
  const char *base = slash ? slash + 1 : prefix;
  if (slash) *slash = 0;
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d)))
    if (dead_leftover(e->d_name, base)) {
      char *path = join(dir, e->d_name);
      struct stat st;
      if (lstat(path, &st) == 0) remove_tree(path, S_ISDIR(st.st_mode));
      free(path);
    }
  if (d) closedir(d);
  free(prefix);
}

void outfile_clean_leftovers(const char *path) {
  char *real = realpath(path, NULL);
  clean_target(real ? real : path);
  free(real);
}

/* ---- output files ---- */

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
    return EXIT_USAGE;
  }
  char *real = realpath(path, NULL);           /* follow a symlink to its file */
  o->target = real ? real : xstrdup(path);
  if (exists && !S_ISREG(st.st_mode)) return EXIT_OK;   /* OUTFILE_ANY: written in place */
  clean_target(o->target);
  o->tmp = tmp_template(o->target);
  sigset_t old;
  block_signals(&old);
  int fd = mkstemp(o->tmp);
  if (fd >= 0) live_add(o->tmp, false);
  restore_signals(&old);
  if (fd < 0) {
    snprintf(err, errlen, "%s: cannot create: %s", path, strerror(errno));
    free(o->tmp);
    free(o->target);
    memset(o, 0, sizeof *o);
    return EXIT_IO;
  }
  /* mkstemp makes 0600; a failed fchmod leaves it so, which is harmless */
  if (fchmod(fd, exists ? st.st_mode & 07777 : default_mode()) != 0) { }
  close(fd);
  return EXIT_OK;
}

const char *outfile_path(const struct outfile *o) { return o->tmp ? o->tmp : o->target; }

static void release(struct outfile *o) {
  if (o->tmp) live_drop(o->tmp);
  free(o->tmp);
  free(o->target);
  o->tmp = o->target = NULL;
}

int outfile_commit(struct outfile *o, char *err, size_t errlen) {
  int rc = EXIT_OK;
  if (o->tmp && rename(o->tmp, o->target) != 0) {
    snprintf(err, errlen, "%s: cannot rename into place: %s", o->target, strerror(errno));
    remove(o->tmp);
    rc = EXIT_IO;
  }
  release(o);
  return rc;
}

int outfile_commit_new(struct outfile *o, char *err, size_t errlen) {
  if (!o->tmp) {
    release(o);
    return EXIT_OK;
  }
  if (link(o->tmp, o->target) == 0 || errno == EEXIST) {
    outfile_discard(o);   /* the target holds the file now, or another process's */
    return EXIT_OK;
  }
  /* A file system without hard links: renamed when still missing (a narrow race, there only). */
  struct stat st;
  if (errno != ENOSPC && errno != EIO && errno != EROFS && errno != EDQUOT && stat(o->target, &st) != 0)
    return outfile_commit(o, err, errlen);
  snprintf(err, errlen, "%s: cannot link into place: %s", o->target, strerror(errno));
  outfile_discard(o);
  return EXIT_IO;
}

void outfile_discard(struct outfile *o) {
  if (o->tmp) remove(o->tmp);
  release(o);
}

int outfile_tmpdir(const char *name, char **dir, char *err, size_t errlen) {
  const char *base = getenv("TMPDIR");
  if (!base || !*base) base = "/tmp";
  char *target = join(base, name);
  clean_target(target);
  *dir = tmp_template(target);
  free(target);
  sigset_t old;
  block_signals(&old);
  bool made = mkdtemp(*dir) != NULL;
  if (made) live_add(*dir, true);
  restore_signals(&old);
  if (made) return EXIT_OK;
  snprintf(err, errlen, "cannot create a temporary directory (%s): %s", *dir, strerror(errno));
  free(*dir);
  *dir = NULL;
  return EXIT_INTERNAL;
}

void outfile_tmpdir_remove(const char *dir) {
  remove_tree(dir, true);
  live_drop(dir);
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

int outfile_put_text(struct outfile *o, const char *text, char *err, size_t errlen) {
  int fd = open(outfile_path(o), O_WRONLY | O_TRUNC);
  bool ok = fd >= 0 && write_all(fd, text);
  if (fd >= 0 && close(fd) != 0) ok = false;
  if (!ok) {
    snprintf(err, errlen, "%s: cannot write: %s", o->target, strerror(errno));
    outfile_discard(o);
    return EXIT_IO;
  }
  return outfile_commit(o, err, errlen);
}

int outfile_write_text(const char *path, const char *text, char *err, size_t errlen) {
  struct outfile o;
  int rc = outfile_begin(&o, path, OUTFILE_ANY, err, errlen);
  return rc ? rc : outfile_put_text(&o, text, err, errlen);
}
