/* Remembered first conversions of recordings (stream_memo.h). */
#include "stream_memo.h"
#include "sim/trace/hash.h"
#include "sim/base/outfile.h"
#include "sim/base/util.h"
#include "sim/base/version.h"
#include "sim/sweep/sweep.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* An entry: magic, identity and prefix lengths, the records' count and hash,
** the kept copy's size and hash, the identity, the prefix, then the XXH64 of
** everything before it. */
#define HEAD_BYTES 48
#define SUM_BYTES  8

static void put64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static uint64_t get64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

unsigned char *stream_memo_build(const char *identity, const struct import_stream_known *k, size_t prefix_size,
                                 size_t *n) {
  size_t idn = strlen(identity);
  *n = HEAD_BYTES + idn + prefix_size + SUM_BYTES;
  unsigned char *b = xmalloc(*n);
  memcpy(b, STREAM_MEMO_MAGIC, 8);
  put64(b + 8, (uint64_t)idn | (uint64_t)prefix_size << 32);
  put64(b + 16, k->records);
  put64(b + 24, k->records_hash);
  put64(b + 32, k->kept_bytes);
  put64(b + 40, k->kept_hash);
  memcpy(b + HEAD_BYTES, identity, idn);
  memcpy(b + HEAD_BYTES + idn, k->prefix, prefix_size);
  put64(b + *n - SUM_BYTES, xxh64(b, *n - SUM_BYTES));
  return b;
}

bool stream_memo_parse(const unsigned char *buf, size_t n, const char *identity, size_t prefix_size,
                       struct import_stream_known *known) {
  size_t idn = strlen(identity);
  if (n != HEAD_BYTES + idn + prefix_size + SUM_BYTES || memcmp(buf, STREAM_MEMO_MAGIC, 8)) return false;
  uint64_t lens = get64(buf + 8);
  if ((lens & 0xffffffffu) != idn || lens >> 32 != prefix_size) return false;
  if (memcmp(buf + HEAD_BYTES, identity, idn) || get64(buf + n - SUM_BYTES) != xxh64(buf, n - SUM_BYTES))
    return false;
  *known = (struct import_stream_known){ .prefix = buf + HEAD_BYTES + idn, .records = get64(buf + 16),
                                         .records_hash = get64(buf + 24), .kept_bytes = get64(buf + 32),
                                         .kept_hash = get64(buf + 40) };
  return true;
}

/* $XDG_CACHE_HOME/vmxsim/recordings (or ~/.cache/...): the traces' cache's
** sibling; NULL without a cache directory (nothing is remembered: a replay
** never writes into the current directory for it). */
static char *memo_dir(void) { return user_cache_dir("recordings"); }

/* The build, the format, the input as named (the metadata holds it), the
** file and the job's options, one per line. */
static char *identity_of(const struct import_job *job, const struct file_seen *f) {
  struct stat exe;
  if (stat("/proc/self/exe", &exe) != 0) return NULL;
  const struct import_opts *o = &job->opt;
  struct strbuf b = { 0 };
  strbuf_printf(&b, "vmxsim %s, executable of %lld bytes modified at %lld.%09ld\n", VMXSIM_VERSION,
                (long long)exe.st_size, (long long)exe.st_mtim.tv_sec, exe.st_mtim.tv_nsec);
  strbuf_printf(&b, "format %s\ninput %s\nrecording %s\nfile %lld %lld %lld %lld %lld\n", job->format->name,
                job->input, f->path, (long long)f->dev, (long long)f->ino, (long long)f->size, (long long)f->mtime_ns,
                (long long)f->ctime_ns);
  strbuf_printf(&b, "workload %s%s\ncommand %s\ncpu_ghz %a paging %u skip_bad %d\n", job->workload ? "=" : "-",
                job->workload ? job->workload : "", job->command ? job->command : "", o->cpu_ghz, o->paging,
                (int)o->skip_bad);
  strbuf_printf(&b, "domain %d %u required %d\n", (int)o->one_domain, (unsigned)o->domain, (int)o->domain_required);
  if (b.len > STREAM_MEMO_ID_MAX) { free(b.s); return NULL; }
  return b.s;
}

static void read_entry(struct stream_memo *m) {
  struct stat st;
  size_t want = HEAD_BYTES + strlen(m->identity) + import_stream_prefix_size() + SUM_BYTES;
  if (stat(m->path, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != want) return;
  size_t n;
  unsigned char *buf = (unsigned char *)read_file(m->path, &n);
  if (!buf) return;
  struct import_stream_known k;
  if (stream_memo_parse(buf, n, m->identity, import_stream_prefix_size(), &k)) {
    m->prefix = xmalloc(import_stream_prefix_size());
    memcpy(m->prefix, k.prefix, import_stream_prefix_size());
    m->known = k;
    m->known.prefix = m->prefix;
    m->found = true;
  }
  free(buf);
}

void stream_memo_look_up(struct stream_memo *m, const struct import_job *job) {
  memset(m, 0, sizeof *m);
  m->copy_fd = -1;
  const char *off = getenv(STREAM_MEMO_OFF_ENV);
  if ((off && *off && strcmp(off, "0")) || !strcmp(job->input, "-")) return;
  if (!file_seen_take(job->input, &m->seen) || !(m->identity = identity_of(job, &m->seen))) return;
  char *dir = memo_dir();
  if (!dir) return;
  size_t n = strlen(dir) + 32;
  m->path = xmalloc(n);
  unsigned long long key = (unsigned long long)xxh64(m->identity, strlen(m->identity));
  snprintf(m->path, n, "%s/%016llx.head", dir, key);
  m->kept_path = xmalloc(n);
  snprintf(m->kept_path, n, "%s/%016llx" STREAM_MEMO_KEPT_SUFFIX, dir, key);
  free(dir);
  read_entry(m);
  struct stat st;
  /* a bound of 0 keeps no copies, and reads none kept before */
  m->kept_found = m->found && m->known.kept_bytes && stream_memo_budget() && stat(m->kept_path, &st) == 0 &&
                  S_ISREG(st.st_mode) && (uint64_t)st.st_size == m->known.kept_bytes;
  if (m->kept_found) (void)utimensat(AT_FDCWD, m->kept_path, NULL, 0);   /* used now: the last to be dropped */
}

/* The directory of m's entry and kept copy, as looked up (malloc'd). */
static char *entry_dir(const struct stream_memo *m) {
  char *dir = xstrdup(m->path);
  *strrchr(dir, '/') = '\0';
  return dir;
}

/* The entry's bytes for k, written atomically; false when not written. */
static bool write_entry(const struct stream_memo *m, const struct import_stream_known *k) {
  char err[1024], *dir = entry_dir(m);
  int rc = sweep_make_dirs(dir, err, sizeof err);
  free(dir);
  struct outfile o;
  if (rc || outfile_begin(&o, m->path, OUTFILE_REGULAR, err, sizeof err)) return false;
  size_t n;
  unsigned char *b = stream_memo_build(m->identity, k, import_stream_prefix_size(), &n);
  FILE *f = fopen(outfile_path(&o), "wb");
  bool ok = f && fwrite(b, 1, n, f) == n;
  if (f && fclose(f) != 0) ok = false;
  free(b);
  if (ok) return outfile_commit(&o, err, sizeof err) == EXIT_OK;
  outfile_discard(&o);
  return false;
}

/* The recording looks as it did when looked up. */
static bool recording_unchanged(const struct stream_memo *m) {
  struct file_seen after;
  bool same = file_seen_take(m->seen.path, &after) && file_seen_same(&m->seen, &after);
  file_seen_free(&after);
  return same;
}

void stream_memo_keep(struct stream_memo *m, const struct import_stream *s) {
  if (!m->path || m->found || !file_seen_settled(&m->seen) || !recording_unchanged(m)) return;
  struct import_stream_known k;
  import_stream_head(s, &k);
  (void)write_entry(m, &k);                   /* not kept: the next replay converts twice */
}

/* ---- kept copies of the conversion ---- */

uint64_t stream_memo_budget(void) {
  const char *v = getenv(STREAM_MEMO_BUDGET_ENV);
  char *end;
  errno = 0;
  unsigned long long mb = v && *v ? strtoull(v, &end, 10) : STREAM_MEMO_BUDGET_MB;
  if (v && *v && (errno || *end || mb > (1ull << 40))) mb = STREAM_MEMO_BUDGET_MB;   /* nonsense: the default */
  return (uint64_t)mb << 20;
}

int stream_memo_copy_begin(struct stream_memo *m) {
  if (!m->path || m->kept_found || m->copy_fd >= 0 || !stream_memo_budget() || !file_seen_settled(&m->seen)) return -1;
  /* a conversion is about 1.5 times its recording (36 bytes an event): copy
  ** only with room for it several times over, so that a cache never fills a disk */
  char err[1024], *dir = entry_dir(m);
  struct statvfs fs;
  bool room = sweep_make_dirs(dir, err, sizeof err) == EXIT_OK && statvfs(dir, &fs) == 0 &&
              (uint64_t)fs.f_bavail * fs.f_frsize / 4 > (uint64_t)m->seen.size * 2;
  free(dir);
  if (!room || outfile_begin(&m->copy, m->kept_path, OUTFILE_REGULAR, err, sizeof err)) return -1;
  m->copy_fd = open(outfile_path(&m->copy), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (m->copy_fd < 0) outfile_discard(&m->copy);
  return m->copy_fd;
}

/* Oldest first, the kept copies in dir other than keep are removed until
** those left and need fit the budget: false when they cannot. */
static bool make_room(const char *dir, const char *keep, uint64_t need) {
  uint64_t budget = stream_memo_budget(), total = 0;
  if (need > budget) return false;
  struct kept { char *path; uint64_t bytes; int64_t mtime_ns; } *k = NULL;
  size_t n = 0, cap = 0, sl = strlen(STREAM_MEMO_KEPT_SUFFIX);
  DIR *d = opendir(dir);
  if (!d) return false;
  for (struct dirent *e; (e = readdir(d));) {
    size_t len = strlen(e->d_name);
    if (e->d_name[0] == '.' || len <= sl || strcmp(e->d_name + len - sl, STREAM_MEMO_KEPT_SUFFIX)) continue;
    struct strbuf p = { 0 };
    strbuf_printf(&p, "%s/%s", dir, e->d_name);
    struct stat st;
    if (!strcmp(p.s, keep) || lstat(p.s, &st) != 0 || !S_ISREG(st.st_mode)) { free(p.s); continue; }
    if (n == cap) k = xrealloc(k, (cap = cap ? 2 * cap : 16) * sizeof *k);
    k[n++] = (struct kept){ p.s, (uint64_t)st.st_size, (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec };
    total += (uint64_t)st.st_size;
  }
  closedir(d);
  while (total + need > budget && n) {
    size_t old = 0;
    for (size_t i = 1; i < n; i++) if (k[i].mtime_ns < k[old].mtime_ns) old = i;
    (void)unlink(k[old].path);                 /* its entry finds no copy then, and converts */
    total -= k[old].bytes;
    free(k[old].path);
    k[old] = k[--n];
  }
  for (size_t i = 0; i < n; i++) free(k[i].path);
  free(k);
  return total + need <= budget;
}

void stream_memo_copy_end(struct stream_memo *m, const struct import_stream *s, int stream_rc) {
  if (m->copy_fd < 0) return;
  struct import_stream_known k;
  import_stream_head(s, &k);
  bool whole = !stream_rc && import_stream_copied(s, &k.kept_bytes, &k.kept_hash);
  bool ok = close(m->copy_fd) == 0 && whole && recording_unchanged(m);
  m->copy_fd = -1;
  char err[1024], *dir = entry_dir(m);
  ok = ok && make_room(dir, m->kept_path, k.kept_bytes);
  free(dir);
  if (!ok) {
    outfile_discard(&m->copy);
    return;
  }
  /* the copy first, then the entry that names it: a crash between the two
  ** leaves a copy no entry names, which the next copy's make_room may drop */
  if (outfile_commit(&m->copy, err, sizeof err) != EXIT_OK || !write_entry(m, &k)) (void)unlink(m->kept_path);
}

void stream_memo_forget(struct stream_memo *m) {
  if (m->path && m->found) unlink(m->path);
  if (m->kept_path && m->kept_found) unlink(m->kept_path);
}

void stream_memo_free(struct stream_memo *m) {
  free(m->path);
  free(m->identity);
  free(m->prefix);
  free(m->kept_path);
  if (m->copy_fd >= 0) {
    close(m->copy_fd);
    outfile_discard(&m->copy);
  }
  file_seen_free(&m->seen);
  memset(m, 0, sizeof *m);
  m->copy_fd = -1;
}
