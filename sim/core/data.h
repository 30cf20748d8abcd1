/* Finding JSON data (policy presets, CPU profiles) by name or path. */
#ifndef VMXSIM_DATA_H
#define VMXSIM_DATA_H

#include <cJSON.h>
#include <stddef.h>

/* Loads "models/<dir>/<name>.json" from the data compiled into the program, or
** a JSON file when name contains '/' or ends in ".json".  Returns a parsed
** object the caller frees with cJSON_Delete, or NULL with a message in err
** (file not found with the list of valid names, or JSON error with its line). */
cJSON *data_load(const char *dir, const char *name, char *err, size_t errlen);

/* Names available in models/<dir>/ (without .json), NULL-terminated; static storage. */
const char *const *data_names(const char *dir);


#endif
