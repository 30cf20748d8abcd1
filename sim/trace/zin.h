/* Input streams that may be compressed: a file or standard input ("-"), read
** as it is or through gzip (zlib), xz (liblzma) or zstd (libzstd) decoding.
** The compression is recognised by the first bytes (magic numbers), never by
** the file name:
**   gzip  1f 8b                 (RFC 1952, section 2.3.1)
**   xz    fd 37 7a 58 5a 00     (The .xz File Format 1.1.0, section 2.1.1.1)
**   zstd  28 b5 2f fd           (RFC 8878, section 3.1.1)
** Concatenated members, streams and frames (as `cat a.gz b.gz` makes) are read
** one after the other.  Memory stays constant whatever the input's length.
**
** Errors follow docs/architecture.md, "Errors": 0 or an enum exit_code, the
** message "NAME: ..." in z->err (the stream outlives the failing call);
** corrupt or truncated compressed data names the compressed byte offset.
*/
#ifndef VMXSIM_ZIN_H
#define VMXSIM_ZIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum zin_kind { ZIN_PLAIN, ZIN_GZIP, ZIN_XZ, ZIN_ZSTD };

#define ZIN_MAGIC_MAX 6            /* bytes needed to recognise every format */

struct zin {
  int fd;
  bool own_fd;                     /* opened here (not standard input) */
  enum zin_kind kind;
  const char *name;                /* the path as given, "<stdin>" for "-" */
  unsigned char *in;               /* input read but not yet used */
  size_t in_len, in_pos;
  bool in_eof;                     /* the file or pipe has no more bytes */
  uint64_t in_used;                /* compressed bytes consumed (for messages) */
  void *dec;                       /* the decoder's state; NULL for plain input */
  bool at_end;                     /* decoder: the last member, stream or frame is complete */
  uint64_t out;                    /* bytes returned so far */
  char err[512];
};

/* The format that bytes p[0..n) start with (ZIN_PLAIN for anything else). */
enum zin_kind zin_detect(const unsigned char *p, size_t n);
/* "gzip", "xz", "zstd", or "" for plain input. */
const char *zin_kind_name(enum zin_kind k);

/* Opens path ("-": standard input) and recognises its compression.  Returns 0,
** or EXIT_BADINPUT (cannot open, a directory) with the message in z->err;
** z needs zin_close either way. */
int zin_open(struct zin *z, const char *path);
/* The same on an open descriptor (a pipe), which z then owns and closes;
** name is used in messages and must outlive z. */
int zin_open_fd(struct zin *z, int fd, const char *name);
/* Reads up to n bytes of the (decompressed) content into buf; fewer only at
** the end.  Returns the count (0 at the end), or -1 with the message in z->err
** (a read error, corrupt or truncated compressed data). */
ssize_t zin_read(struct zin *z, void *buf, size_t n);
void zin_close(struct zin *z);

#endif
