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

/* Names available in models/<dir>/ (without .json), NULL-terminated; static storage. */
const char *const *data_names(const char *dir);


#endif
