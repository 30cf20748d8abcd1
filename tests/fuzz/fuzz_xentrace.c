/* libFuzzer harness: the xentrace binary importer (sim/import/import_xen.c); the checks are in fuzz_import.h. */
#define IMPORTER import_xentrace
#define IMPORT_FORMAT "xentrace"
#include "fuzz_import.h"
