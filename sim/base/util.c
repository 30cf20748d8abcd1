/* Shared helpers: error messages, strict number parsing, time, interruption, files. */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

void errorf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("vmxsim: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

const char *num_shortest(char buf[NUM_TEXT_MAX], double v) {
  int prec = 1;
  for (; prec <= 17; prec++) {
    snprintf(buf, NUM_TEXT_MAX, "%.*g", prec, v);
    if (v != v || strtod(buf, NULL) == v) break;   /* NaN never compares equal */
  }
  /* %g writes 10 as "1e+01" at one digit: below 1e17, as many digits as the
  ** integer part has, so that whole numbers read as such ("10", "1200"). */
  double a = v < 0 ? -v : v;
  if (strchr(buf, 'e') && a >= 1 && a < 1e17) {
    int digits = 1;
    for (double t = a; t >= 10; t /= 10) digits++;
    snprintf(buf, NUM_TEXT_MAX, "%.*g", digits > prec ? digits : prec, v);
  }
  return buf;
}

const char *data_file(const char *name, char *buf, size_t n) {
  char exe[4096], tried[3][4096];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);   /* the real file behind ./vmxsim */
  exe[len > 0 ? len : 0] = 0;
  char *slash = strrchr(exe, '/');
  if (slash) *slash = 0;
  const char *env = getenv(DATADIR_ENV);
  bool use_env = env && *env;
  const char *fmt[3] = { "%s/%s", "%s/../share/vmxsim/%s", "%s/../scripts/%s" };
  bool ok[3];
  for (int i = 0; i < 3; i++) {
    int k = snprintf(tried[i], sizeof tried[i], fmt[i], i ? exe : use_env ? env : "", name);
    ok[i] = k > 0 && (size_t)k < sizeof tried[i] && (i ? len > 0 : use_env);   /* a cut path is no path */
  }
  for (int i = 0; i < 3; i++)
    if (ok[i] && access(tried[i], R_OK) == 0) {
      snprintf(buf, n, "%s", tried[i]);
      return buf;
    }
  if (snprintf(buf, n, "%s%s%s, %s", use_env ? tried[0] : "", use_env ? ", " : "", tried[1], tried[2]) < 0) buf[0] = 0;
  return NULL;
}

double monotonic_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static volatile sig_atomic_t interrupt_signal;     /* the caught signal, 0: none */
static volatile sig_atomic_t catch_int, catch_term;  /* raise the flag instead of ending */
static void (*volatile exit_cleanup)(void);

static void on_signal(int sig) {
  if ((sig == SIGINT && catch_int) || (sig == SIGTERM && catch_term)) {
    interrupt_signal = sig;
    return;
  }
  void (*cleanup)(void) = exit_cleanup;
  if (cleanup) cleanup();
  _exit(128 + sig);
}

void interrupt_install(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaddset(&sa.sa_mask, SIGINT);      /* one handler at a time: no cleanup interrupted by the other */
  sigaddset(&sa.sa_mask, SIGTERM);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

void interrupt_on_exit(void (*cleanup)(void)) { exit_cleanup = cleanup; }

void interrupt_catch(struct interrupt_catch *c, bool sigterm_too) {
  interrupt_install();
  interrupt_signal = 0;
  c->term = sigterm_too;
  catch_term = sigterm_too;
  catch_int = 1;
}

void interrupt_release(const struct interrupt_catch *c) {
  (void)c;
  catch_int = catch_term = 0;
  interrupt_install();
}

bool interrupt_requested(void) { return interrupt_signal != 0; }
void interrupt_clear(void) { interrupt_signal = 0; }
int interrupt_exit_status(void) { return interrupt_signal == SIGTERM ? EXIT_TERMINATED : EXIT_INTERRUPTED; }

/* "0x" or "0X" and the hex digits after it, or the decimal digits; the number
** of digits, 0 when s is no number of either form. */
static size_t u64_digits(const char *s, bool *hex) {
  *hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  const char *d = *hex ? s + 2 : s;
  size_t n = strspn(d, *hex ? "0123456789abcdefABCDEF" : "0123456789");
  return d[n] ? 0 : n;
}

/* "010" is 8 to C (strtoull with base 0, scanf's %i) and 10 to a reader: refused rather than read either way. */
static bool leading_zero(const char *s) { return s[0] == '0' && s[1] >= '0' && s[1] <= '9'; }

bool parse_u64(const char *s, uint64_t *out) {
  bool hex;
  if (!s || !u64_digits(s, &hex) || (!hex && leading_zero(s))) return false;
  errno = 0;
  unsigned long long v = strtoull(hex ? s + 2 : s, NULL, hex ? 16 : 10);   /* digits only: no sign, no blank */
  if (errno) return false;
  *out = v;
  return true;
}

const char *parse_u64_hint(const char *s) {
  bool hex;
  if (s && u64_digits(s, &hex) && !hex && leading_zero(s))
    return " (a leading 0 is ambiguous: C would read it as octal; write the number without it)";
  return "";
}

bool parse_double(const char *s, double *out) {
  if (!s || !*s) return false;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || *end || !isfinite(v)) return false;
  *out = v;
  return true;
}

/* The rest of f, which it closes, as read_file gives it. */
static char *read_stream(FILE *f, size_t *len) {
  size_t cap = 4096, n = 0;
  char *buf = xmalloc(cap);
  size_t got;
  errno = 0;
  while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
    n += got;
    if (cap - n - 1 == 0) buf = xrealloc(buf, cap *= 2);
  }
  int err = ferror(f) ? (errno ? errno : EIO) : 0;   /* EISDIR for a directory, which fopen accepts */
  fclose(f);
  if (err) { free(buf); errno = err; return NULL; }
  buf[n] = 0;
  if (len) *len = n;
  return buf;
}

char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  return f ? read_stream(f, len) : NULL;
}

char *read_fd(int fd, size_t *len) {
  FILE *f = fdopen(fd, "rb");
  if (!f) {
    int e = errno;
    close(fd);
    errno = e;
    return NULL;
  }
  return read_stream(f, len);
}

/* What a file that is not a regular one is, for messages. */
static const char *file_kind(mode_t m) {
  return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device"
       : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "something else";
}

int input_open(const char *path, unsigned flags, char *err, size_t errlen) {
  bool regular_only = flags & INPUT_REGULAR_ONLY;
  /* O_NONBLOCK: opening a FIFO that has no writer would wait for one; a
  ** regular file ignores the flag */
  int fd = open(path, O_RDONLY | O_CLOEXEC | (regular_only ? O_NONBLOCK : 0));
  struct stat st;
  if (fd < 0 || (regular_only && fstat(fd, &st) != 0)) {
    snprintf(err, errlen, "%s: %s", path, strerror(errno));
    if (fd >= 0) close(fd);
    return -1;
  }
  if (regular_only && !S_ISREG(st.st_mode)) {
    snprintf(err, errlen, "%s: is %s, not a regular file", path, file_kind(st.st_mode));
    close(fd);
    return -1;
  }
  return fd;
}

/* Room for n more bytes and the NUL: the capacity at least doubles, so appends are amortised O(1). */
static void strbuf_reserve(struct strbuf *b, size_t n) {
  if (b->len + n + 1 <= b->cap) return;
  b->cap = (b->len + n + 1) * 2;
  b->s = xrealloc(b->s, b->cap);
}

void strbuf_add(struct strbuf *b, const char *s, size_t n) {
  strbuf_reserve(b, n);
  if (n) memcpy(b->s + b->len, s, n);
  b->len += n;
  b->s[b->len] = 0;
}

void strbuf_puts(struct strbuf *b, const char *s) { strbuf_add(b, s, strlen(s)); }

void strbuf_printf(struct strbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  strbuf_reserve(b, (size_t)n);
  va_start(ap, fmt);
  vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

static bool needs_no_quotes(const char *s) {
  if (!*s) return false;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || strchr("%+,-./:@_", *s)))
      return false;
  return true;
}

static void quote(struct strbuf *b, const char *s, bool always) {
  if (!always && needs_no_quotes(s)) {
    strbuf_puts(b, s);
    return;
  }
  strbuf_puts(b, "'");
  for (;;) {
    size_t n = strcspn(s, "'\\");
    strbuf_add(b, s, n);
    s += n;
    if (!*s) break;
    strbuf_puts(b, *s == '\'' ? "'\\''" : "'\\\\'");
    s++;
  }
  strbuf_puts(b, "'");
}

void shell_quote(struct strbuf *b, const char *s) { quote(b, s, false); }
void shell_quote_always(struct strbuf *b, const char *s) { quote(b, s, true); }

const char *control_char(const char *s) {
  for (; *s; s++)
    if ((unsigned char)*s < 0x20 || *s == 0x7f) return s;
  return NULL;
}

char *user_cache_dir(const char *leaf) {
  const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  struct strbuf b = { 0 };
  if (xdg && xdg[0] == '/') strbuf_printf(&b, "%s/vmxsim/%s", xdg, leaf);
  else if (home && *home) strbuf_printf(&b, "%s/.cache/vmxsim/%s", home, leaf);
  return b.s;
}

unsigned edit_distance(const char *a, const char *b, unsigned limit) {
  enum { MAXLEN = 64 };
  size_t n = strlen(a), m = strlen(b);
  if (n > MAXLEN || m > MAXLEN) return limit + 1;
  if ((n > m ? n - m : m - n) > limit) return limit + 1;
  unsigned d[MAXLEN + 1][MAXLEN + 1];
  for (size_t i = 0; i <= n; i++) d[i][0] = (unsigned)i;
  for (size_t j = 0; j <= m; j++) d[0][j] = (unsigned)j;
  for (size_t i = 1; i <= n; i++)
    for (size_t j = 1; j <= m; j++) {
      unsigned best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
      if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
        best = d[i - 2][j - 2] + 1;
      d[i][j] = best;
    }
  return d[n][m] > limit ? limit + 1 : d[n][m];
}
