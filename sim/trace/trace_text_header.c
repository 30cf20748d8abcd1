/* The header of a text trace: the directives @paging, @vcpus, @workload and
** @meta, and the check of the @meta JSON when the header ends.  Apart from
** the line parser (trace_text_parse.c) because these fill the parser's header
** instead of emitting records, and a JSON error is reported on the @meta line
** that holds it, not on the line being parsed. */
#include "trace_text.h"
#include "trace_text_int.h"
#include "sim/base/util.h"

#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

/* ---- header directives ---- */

/* Header directives, one bit each in parser.seen (duplicates are errors). */
enum { SEEN_PAGING = 1, SEEN_WORKLOAD = 2, SEEN_VCPUS = 4 };

static int directive_once(struct trace_text_parser *p, const char *name, unsigned bit) {
  if (p->header_done) return trace_text_syntax(p, "%s: header directives must come before the first event", name);
  if (p->seen & bit) return trace_text_syntax(p, "%s given twice", name);
  p->seen |= bit;
  return 0;
}

static int parse_paging(struct trace_text_parser *p, char **tok, int ntok) {
  if (directive_once(p, "@paging", SEEN_PAGING)) return EXIT_BADINPUT;
  if (ntok != 2) return trace_text_syntax(p, "@paging: expects one of 32, pae, 64");
  int mode = paging_from_name(tok[1]);
  if (mode < 0)
    return trace_text_syntax(p, "@paging: unknown mode %s (32, pae, 64)", trace_text_word(p, tok[1], true, ""));
  p->paging = (unsigned)mode;
  return 0;
}

static int parse_vcpus(struct trace_text_parser *p, char **tok, int ntok) {
  uint64_t v;
  if (directive_once(p, "@vcpus", SEEN_VCPUS)) return EXIT_BADINPUT;
  if (ntok != 2) return trace_text_syntax(p, "@vcpus: expects one number (usage: @vcpus N)");
  if (trace_text_number_in(p, "@vcpus", "vCPU count", tok[1], 1, TRACE_VCPU_MAX, 10, &v)) return EXIT_BADINPUT;
  p->vcpus = (unsigned)v;
  return 0;
}

/* @workload NAME: the rest of the line (spaces inside are kept). */
static int parse_workload(struct trace_text_parser *p, const char *rest) {
  if (directive_once(p, "@workload", SEEN_WORKLOAD)) return EXIT_BADINPUT;
  size_t len = strlen(rest);
  if (len == 0) return trace_text_syntax(p, "@workload: missing NAME");
  if (len > TRACE_WORKLOAD_MAX)
    return trace_text_syntax(p, "@workload: name of %zu bytes exceeds the %d-byte limit", len, TRACE_WORKLOAD_MAX);
  for (size_t i = 0; i < len; i++)
    if ((unsigned char)rest[i] < 0x20 || rest[i] == 0x7f)
      return trace_text_syntax(p, "@workload: control character in the name");
  memcpy(p->workload, rest, len + 1);
  return 0;
}

/* @meta TEXT: the rest of the line verbatim (no comments: JSON strings may
** hold '#'); several @meta lines join with newlines so that multi-line JSON
** survives dump and asm byte for byte. */
int trace_text_parse_meta(struct trace_text_parser *p, const char *rest, size_t len) {
  if (p->header_done) return trace_text_syntax(p, "@meta: header directives must come before the first event");
  size_t need = p->metadata_len + (p->meta_count ? 1 : 0) + len;
  if (need > TRACE_METADATA_MAX)
    return trace_text_syntax(p, "@meta: metadata exceeds the %u-byte limit", TRACE_METADATA_MAX);
  if (need + 1 > p->metadata_cap) {
    p->metadata_cap = need + 1 > 2 * p->metadata_cap ? need + 1 : 2 * p->metadata_cap;
    p->metadata = realloc(p->metadata, p->metadata_cap);
  }
  if (p->meta_count == p->meta_cap) {
    p->meta_cap = p->meta_cap ? 2 * p->meta_cap : 8;
    p->meta_line = realloc(p->meta_line, p->meta_cap * sizeof *p->meta_line);
    p->meta_off = realloc(p->meta_off, p->meta_cap * sizeof *p->meta_off);
  }
  if (!p->metadata || !p->meta_line || !p->meta_off) return trace_text_syntax(p, "@meta: out of memory");
  if (p->meta_count) p->metadata[p->metadata_len++] = '\n';
  p->meta_line[p->meta_count] = p->line;
  p->meta_off[p->meta_count++] = p->metadata_len;
  memcpy(p->metadata + p->metadata_len, rest, len);
  p->metadata_len += len;
  p->metadata[p->metadata_len] = 0;
  return 0;
}

/* Reports a JSON error at byte pos of the metadata on the @meta line holding
** it: the column, and the text there unless it is not to be shown. */
static int meta_error(struct trace_text_parser *p, size_t pos, const char *what) {
  size_t i = p->meta_count - 1;
  while (i > 0 && p->meta_off[i] > pos) i--;
  p->err_line = p->meta_line[i];
  if (p->hide_content) return trace_text_syntax(p, "@meta: %s at column %zu", what, pos - p->meta_off[i] + 7);
  const char *at = p->metadata + pos;
  int n = (int)strcspn(at, "\n");
  if (n > 24) n = 24;
  return trace_text_syntax(p, "@meta: %s at column %zu: '%.*s'%s", what, pos - p->meta_off[i] + 7, n, at,
                           *at == '#' ? " (@meta lines take no comments)" : "");
}

int trace_text_header_end(struct trace_text_parser *p) {
  p->header_done = true;
  if (!p->metadata) return 0;
  const char *end = NULL;
  cJSON *j = cJSON_ParseWithOpts(p->metadata, &end, 1);
  if (!j) {
    size_t pos = end ? (size_t)(end - p->metadata) : 0;
    if (pos >= p->metadata_len) {
      p->err_line = p->meta_line[p->meta_count - 1];
      return trace_text_syntax(p, "@meta: invalid JSON: the text ends before the value is complete");
    }
    return meta_error(p, pos, "invalid JSON");
  }
  bool object = cJSON_IsObject(j);
  cJSON_Delete(j);
  if (!object) {
    p->err_line = p->meta_line[0];
    return trace_text_syntax(p, "@meta: metadata must be a JSON object {...}");
  }
  return 0;
}

int trace_text_parse_directive(struct trace_text_parser *p, char **tok, int ntok, const char *rest,
                               trace_text_emit_fn emit, void *ctx) {
  if (strcmp(tok[0], "@init") == 0) return trace_text_parse_init(p, tok, ntok, emit, ctx);
  if (strcmp(tok[0], "@paging") == 0) return parse_paging(p, tok, ntok);
  if (strcmp(tok[0], "@vcpus") == 0) return parse_vcpus(p, tok, ntok);
  if (strcmp(tok[0], "@workload") == 0) return parse_workload(p, rest);
  return trace_text_syntax(p, "unknown directive %s (@paging, @workload, @vcpus, @meta, @init)",
                           trace_text_word(p, tok[0], true, ""));
}
