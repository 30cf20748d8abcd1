/* libFuzzer harness: the perf script text importer (sim/import/import_perf.c); the checks are in fuzz_import.h. */
#define IMPORTER import_perf_script
#define IMPORT_FORMAT "perf-script"
#define IMPORT_PV64
#include "fuzz_import.h"
