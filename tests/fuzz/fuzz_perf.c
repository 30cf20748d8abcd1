/* libFuzzer harness: the perf script text importer (sim/import/import_perf.c); the checks are in fuzz_import.h. */
#define IMPORTER import_perf_script
#define IMPORT_FORMAT "perf-script"
#include "fuzz_import.h"
