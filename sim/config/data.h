/* Finding JSON data (policy presets, CPU profiles) by name or path. */
#ifndef VMXSIM_DATA_H
#define VMXSIM_DATA_H

#include <cJSON.h>
#include <stddef.h>

/* Loads "models/<dir>/<name>.json" from the data compiled into the program, or
** a JSON file when name contains '/' or ends in ".json", into *out (the caller
** frees it with cJSON_Delete).  Returns 0, EXIT_USAGE for an unknown name (the
** message lists the valid ones) or EXIT_BADINPUT for a file that cannot be read
** or is not a JSON object (the message names the file and line). */
int data_load(const char *dir, const char *name, cJSON **out, char *err, size_t errlen);

/* A JSON document with its text and where it came from, for messages that
** name FILE:LINE. */
struct data_doc {
  cJSON *json;
  const char *text;
  char *owned;               /* text, when read from a file */
  char label[512];           /* the path, or models/<dir>/<name>.json for the built-in data */
  unsigned flags;            /* how a file was read (enum input_flags, util.h): its loader's
                                messages follow INPUT_HIDE_CONTENT too */
};
/* data_load, keeping the text: 0 or the codes of data_load.  Close with
** data_close (also after a failure). */
int data_open(const char *dir, const char *name, struct data_doc *d, char *err, size_t errlen);
/* data_open, a file read as flags (enum input_flags, util.h) say: with
** INPUT_HIDE_CONTENT a malformed file is reported by line and column alone. */
int data_open_flags(const char *dir, const char *name, unsigned flags, struct data_doc *d, char *err,
                    size_t errlen);
void data_close(struct data_doc *d);
/* The line of the value of a member, by its keys from the top (NULL-terminated,
** e.g. {"knobs", "tlb_entries", NULL}): each key is the first `"KEY":` after
** the previous one.  0 when not found. */
int data_line(const struct data_doc *d, const char *const *path);

/* Names available in models/<dir>/ (without .json), NULL-terminated; static storage. */
const char *const *data_names(const char *dir);


#endif
