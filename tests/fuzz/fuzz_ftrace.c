/* libFuzzer harness: the KVM ftrace text importer (sim/import/import_ftrace.c); the checks are in fuzz_import.h. */
#define IMPORTER import_kvm_ftrace
#define IMPORT_FORMAT "kvm-ftrace"
#include "fuzz_import.h"
