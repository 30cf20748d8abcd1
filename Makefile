# vmxsim build.  `make` builds ./vmxsim; `make help` lists every target and option.
#
# The project's flags live in VMX_* variables; the user's CPPFLAGS, CFLAGS, LDFLAGS and
# LDLIBS come after them, so `make CFLAGS=-O0` changes the optimisation and keeps the include
# paths, the C standard, the warnings and the library flags. Building checks for the
# libraries the program links and never installs anything: only `make deps` and `make demo`
# do (scripts/setup.sh). `make help` is generated from the "## target:" and "#:" comments.
#
#: CC=clang              compiler (default cc); another one builds into build-NAME/
#: OPT=-O0               optimisation flags (default -O2)
#: SANITIZER=address     address, undefined, or both comma-separated: builds into build-SANITIZER/
#: WERROR=1              treat warnings as errors (CI does)
#: LTO=0                 no link-time optimisation (default: on where the compiler's LTO works)
#: V=1                   show full compiler command lines
#: PREFIX=/usr/local     install prefix; DESTDIR=dir stages the install
#: BUILD=dir             build directory (default build/, see CC and SANITIZER)
#: CPPFLAGS= CFLAGS= LDFLAGS= LDLIBS=   added after the project's own flags
#: AR=ar                 archiver (default: the one that indexes the compiler's LTO objects)
#: PKG_CONFIG=pkg-config finds the libraries' flags; without it, standard paths are used
#: DB=vmxsim.db TRACE=name PARAM=procs   what `make plots` draws
#: FUZZ_SECONDS=10 FUZZ_JOBS=1 FUZZ=name   `make fuzz`: seconds per harness, harnesses at once, which ones

PREFIX     ?= /usr/local
OPT        ?= -O2
LTO        ?= auto
PKG_CONFIG ?= pkg-config

empty :=
space := $(empty) $(empty)
comma := ,
shq = '$(subst ','\'',$1)'

# ---- SANITIZER: validated, then part of the build directory's name
SANITIZERS := address undefined
ifneq ($(SANITIZER),)
SAN_LIST := $(strip $(subst $(comma),$(space),$(SANITIZER)))
SAN_BAD  := $(filter-out $(SANITIZERS),$(SAN_LIST))
ifneq ($(SAN_BAD)$(filter-out $(subst $(space),$(comma),$(SAN_LIST)),$(SANITIZER)),)
$(error SANITIZER=$(SANITIZER): $(if $(SAN_BAD),unknown sanitizer '$(firstword $(SAN_BAD))',not a comma-separated list); valid: $(subst $(space),$(comma)$(space),$(SANITIZERS)), or several comma-separated (SANITIZER=address$(comma)undefined))
endif
endif

# A compiler other than the default gets its own build directory, so that `make CC=clang`
# and `make` each stay incremental.
CC_TAG := $(if $(filter default,$(origin CC)),,-$(subst $(space),-,$(notdir $(CC))))
BUILD  ?= build$(CC_TAG)$(if $(SANITIZER),-$(SANITIZER))
PROG   := $(BUILD)/vmxsim
Q      := $(if $(filter 1,$(V)),,@)

# Goals that build nothing skip the compiler and library probes.
NOBUILD_GOALS := help clean deps uninstall layers plots demo fuzz fuzz-long
BUILDING := $(if $(MAKECMDGOALS),$(filter-out $(NOBUILD_GOALS),$(MAKECMDGOALS)),all)

# ---- libraries: pkg-config's flags, or standard paths where it has none
pkg = $(shell $(PKG_CONFIG) $2 $1 2>/dev/null || echo '$3')
ifneq ($(BUILDING),)
# (readline.pc's feature macros, -D_XOPEN_SOURCE=600, would apply to every file: only its -I)
PKG_CFLAGS := $(call pkg,sqlite3,--cflags,) $(call pkg,libcjson,--cflags,-I/usr/include/cjson) \
              $(filter -I%,$(call pkg,readline,--cflags,)) \
              $(call pkg,zlib,--cflags,) $(call pkg,liblzma,--cflags,) $(call pkg,libzstd,--cflags,)
# The libraries Debian also ships as archives (in the same -dev packages) are linked from
# them: each shared library costs a process about 0.3 ms of mapping, relocation and page
# faults before main, and a summary or replay of a recording is a short process
# (docs/performance.md, "start-up").  STATIC_LIBS=0 links them all shared; a library whose
# archive is missing is linked shared either way.
STATIC_LIBS ?= 1
archive = $(if $(filter 1,$(STATIC_LIBS)),$(if $(filter /%,$(shell $(CC) -print-file-name=lib$1.a)),$(shell $(CC) -print-file-name=lib$1.a),$2),$2)
READLINE_LIBS := $(call pkg,readline,--libs,-lreadline)
PKG_LIBS   := $(call archive,sqlite3,$(call pkg,sqlite3,--libs,-lsqlite3)) $(call pkg,libcjson,--libs,-lcjson) \
              $(if $(filter /%,$(call archive,readline,)),$(call archive,readline,) $(call archive,tinfo,-ltinfo),$(READLINE_LIBS)) \
              $(call archive,z,$(call pkg,zlib,--libs,-lz)) $(call archive,lzma,$(call pkg,liblzma,--libs,-llzma)) \
              $(call archive,zstd,$(call pkg,libzstd,--libs,-lzstd))
TEST_LIBS  := $(call pkg,cmocka,--libs,-lcmocka)
# trace.dat input (vmxsim import trace-cmd) is optional: without libtracecmd and libtraceevent
# the build works and that format says how to convert through `trace-cmd report` instead
TRACECMD_LIBS := $(shell $(PKG_CONFIG) --libs libtracecmd libtraceevent 2>/dev/null)
ifneq ($(TRACECMD_LIBS),)
TRACECMD_CFLAGS := $(shell $(PKG_CONFIG) --cflags libtracecmd libtraceevent) -DVMXSIM_TRACECMD=1
PKG_LIBS   += $(TRACECMD_LIBS)
else
$(info vmxsim: libtracecmd/libtraceevent not found (Debian: libtracecmd-dev libtraceevent-dev libtracefs-dev): building without trace.dat input)
endif
endif

# ---- the compiler: family, LTO flags and archiver, probed once per build directory
USER_AR := $(if $(filter default,$(origin AR)),,$(AR))
TC_KEY  := $(CC)|$(USER_AR)|$(LTO)|$(SANITIZER)|$(CFLAGS)|$(LDFLAGS)
TC_AR    = $(or $(USER_AR),ar)
TC_LTO   =
ifneq ($(BUILDING),)
-include $(BUILD)/toolchain.mk
endif

# VMXSIM_SANITIZER: what runs slower in a sanitizer build allows for it (the trace.dat reader's CPU bound)
VMX_CPPFLAGS = -I. -D_DEFAULT_SOURCE -D_FILE_OFFSET_BITS=64 $(PKG_CFLAGS) $(if $(SANITIZER),-DVMXSIM_SANITIZER=1)
VMX_CFLAGS   = -std=c11 $(OPT) -g -pthread -Wall -Wextra -Wshadow -Wstrict-prototypes \
               -Wmissing-prototypes $(TC_LTO) $(if $(filter 1,$(WERROR)),-Werror) \
               $(if $(SANITIZER),-fsanitize=$(SANITIZER) -fno-omit-frame-pointer -fno-sanitize-recover=all)
VMX_LDFLAGS  = $(TC_LTO) $(if $(SANITIZER),-fsanitize=$(SANITIZER))
VMX_LDLIBS   = $(PKG_LIBS) -pthread -lm
ALL_CPPFLAGS = $(VMX_CPPFLAGS) $(CPPFLAGS)
ALL_CFLAGS   = $(VMX_CFLAGS) $(CFLAGS)
ALL_LDFLAGS  = $(VMX_LDFLAGS) $(LDFLAGS)
ALL_LDLIBS   = $(VMX_LDLIBS) $(LDLIBS)

# scripts/setup.sh sees the same compiler and flags as the build
SETUP = CC=$(call shq,$(CC)) CPPFLAGS=$(call shq,$(CPPFLAGS)) CFLAGS=$(call shq,$(CFLAGS)) \
        LDFLAGS=$(call shq,$(LDFLAGS)) PKG_CONFIG=$(call shq,$(PKG_CONFIG)) scripts/setup.sh

LIB_SRCS  := $(sort $(wildcard sim/*/*.c models/*.c models/*/*.c workloads/*.c))
LIB_SRCS  := $(filter-out sim/cli/main.c,$(LIB_SRCS))
LIB_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/%.o) $(BUILD)/embedded.o
DATA      := $(sort $(wildcard models/cpus/*.json models/policies/*.json models/calibration/*.json))
TEST_SRCS := $(sort $(wildcard tests/unit/test_*.c))
TEST_BINS := $(TEST_SRCS:tests/unit/%.c=$(BUILD)/tests/%)

.PHONY: all deps check unit cli layers slurm fuzz fuzz-long fuzz-bins demo reproduce bench xenalyze plots install uninstall clean help
.PHONY: FORCE

## all: build ./vmxsim, a link to build/vmxsim (the default target)
all: $(PROG) $(if $(SANITIZER),,vmxsim)

vmxsim: $(PROG) FORCE
	$(Q)[ "$$(readlink vmxsim 2>/dev/null)" = "$(PROG)" ] || ln -sfn $(PROG) vmxsim

## deps: install the Debian packages for building, testing, plotting and bench (as root)
deps:
	$(Q)$(SETUP)

# ---- stamps: rewritten only when their text changes, so that a changed compiler or flag
# rebuilds what it affects and nothing else
write-if-changed = @mkdir -p $(dir $1); t=$(call shq,$2); \
	[ "$$(cat $1 2>/dev/null)" = "$$t" ] || printf '%s\n' "$$t" > $1

$(BUILD)/.toolchain-key: FORCE
	$(call write-if-changed,$@,$(TC_KEY))

$(BUILD)/toolchain.mk: $(BUILD)/.toolchain-key scripts/toolchain.sh
	$(Q)CC=$(call shq,$(CC)) CFLAGS=$(call shq,$(CFLAGS)) LDFLAGS=$(call shq,$(LDFLAGS)) \
	  LTO=$(call shq,$(LTO)) SANITIZER=$(call shq,$(SANITIZER)) USER_AR=$(call shq,$(USER_AR)) \
	  scripts/toolchain.sh > $@.tmp && mv $@.tmp $@ || rm -f $@.tmp

$(BUILD)/.flags: FORCE
	$(call write-if-changed,$@,$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) | $(ALL_LDFLAGS) | $(ALL_LDLIBS) $(TEST_LIBS) | $(TC_AR))

# the libraries the program links; the unit tests' cmocka; everything `make check` uses
$(BUILD)/.build-ok $(BUILD)/.unit-ok: $(BUILD)/.%-ok: $(BUILD)/.flags scripts/setup.sh
	$(Q)$(SETUP) --check $*
	@touch $@
# `make check` installs what the tests use (as root; as another user it prints the apt-get line)
$(BUILD)/.test-ok: $(BUILD)/.flags scripts/setup.sh
	$(Q)$(SETUP) test
	@touch $@

# ---- the program
$(BUILD)/%.o: %.c $(BUILD)/.flags | $(BUILD)/.build-ok
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

# only the trace.dat importer sees libtracecmd's include paths
$(BUILD)/sim/import/import_tracecmd.o: ALL_CPPFLAGS += $(TRACECMD_CFLAGS)

$(BUILD)/embedded.c: $(DATA) scripts/embed.sh
	@mkdir -p $(dir $@)
	$(Q)scripts/embed.sh $(DATA) > $@

$(BUILD)/embedded.o: $(BUILD)/embedded.c $(BUILD)/.flags | $(BUILD)/.build-ok
	$(Q)$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/libvmxsim.a: $(LIB_OBJS)
	$(Q)rm -f $@ && $(TC_AR) rcs $@ $^

$(PROG): $(BUILD)/sim/cli/main.o $(BUILD)/libvmxsim.a
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $^ $(ALL_LDLIBS)

# `make check` checks for all it uses before building the tests; `make unit` only for cmocka
TEST_GATE := $(BUILD)/.$(if $(filter check,$(MAKECMDGOALS)),test,unit)-ok
$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libvmxsim.a $(BUILD)/.flags | $(TEST_GATE)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  TEST-CC $<")
	$(Q)$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(BUILD)/libvmxsim.a \
	  $(ALL_LDLIBS) $(TEST_LIBS)

# synthetic xentrace files (scripts/gen-xentrace.c) for the tests and the bench
GEN_XENTRACE := $(BUILD)/gen-xentrace
$(GEN_XENTRACE): scripts/gen-xentrace.c $(BUILD)/.flags
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $<

# the bench's timer (scripts/walltime.c): a command's own wall time, CPU time and peak memory
WALLTIME := $(BUILD)/walltime
$(WALLTIME): scripts/walltime.c $(BUILD)/.flags
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $<

# ---- tests
RUN_CLI = VMXSIM=$(abspath $(PROG)) GEN_XENTRACE=$(abspath $(GEN_XENTRACE)) VMXSIM_SANITIZER=$(SANITIZER) \
          LSAN_OPTIONS=suppressions=$(abspath tests/lsan-suppressions.txt) tests/cli/run.sh

## check: all the test suites (harness, unit, cli, regress, layers), each even if one before failed
check: all $(TEST_BINS) $(GEN_XENTRACE)
	$(Q)rc=0; \
	VMXSIM_MAKE_VARS=$(call shq,$(MAKEOVERRIDES)) tests/harness/run.sh || rc=1; \
	tests/run-unit.sh $(TEST_BINS) || rc=1; \
	$(RUN_CLI) || rc=1; \
	$(PROG) regress -q tests/regress || rc=1; \
	tests/layers/check.sh || rc=1; \
	exit $$rc

## unit: the unit tests (cmocka) only
unit: $(TEST_BINS)
	$(Q)tests/run-unit.sh $(TEST_BINS)

## cli: the command-line tests (tests/cli/t_*.sh) only
cli: all $(GEN_XENTRACE)
	$(Q)$(RUN_CLI)

## layers: check that no file includes a header of a higher layer (tests/layers/layers.txt)
layers:
	$(Q)tests/layers/check.sh

## slurm: a sweep on a private one-node Slurm cluster (as root: installs slurm and munge; else skipped)
slurm: all
	$(Q)tests/slurm/run.sh $(PROG)

# ---- fuzzing (tests/fuzz/, docs/testing.md): libFuzzer harnesses, one per parser, built by
# clang with AddressSanitizer and UndefinedBehaviorSanitizer into build-fuzz/
FUZZ_SRCS  := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_SRCS  := $(if $(TRACECMD_LIBS),$(FUZZ_SRCS),$(filter-out tests/fuzz/fuzz_tracecmd%.c,$(FUZZ_SRCS)))
FUZZ_BINS  := $(FUZZ_SRCS:tests/fuzz/%.c=$(BUILD)/fuzz/%)
FUZZ_MAKE   = $(MAKE) --no-print-directory CC=clang SANITIZER=address,undefined BUILD=build-fuzz LTO=0 OPT=-O1 \
              CFLAGS=$(call shq,$(CFLAGS) -fsanitize=fuzzer-no-link) fuzz-bins

## fuzz: build the libFuzzer harnesses (clang, ASan+UBSan) and run each for FUZZ_SECONDS (default 10); fails on any finding
## fuzz-long: a longer campaign: every harness for FUZZ_SECONDS (default 3600), FUZZ_JOBS (default 2) at once
fuzz fuzz-long:
	$(Q)$(SETUP) --check fuzz
	$(Q)$(FUZZ_MAKE)
	$(Q)FUZZ_SECONDS=$(or $(FUZZ_SECONDS),$(if $(filter fuzz-long,$@),3600,10)) \
	  FUZZ_JOBS=$(or $(FUZZ_JOBS),$(if $(filter fuzz-long,$@),2,1)) scripts/fuzz.sh build-fuzz $(FUZZ)

## fuzz-bins: only build the harnesses (into BUILD/fuzz/; `make fuzz` builds them into build-fuzz/ with the flags they need)
fuzz-bins: $(FUZZ_BINS)

$(BUILD)/fuzz/%: tests/fuzz/%.c $(wildcard tests/fuzz/*.h) \
                 $(BUILD)/libvmxsim.a $(BUILD)/.flags
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZ-CC $<")
	$(Q)$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) $(ALL_LDFLAGS) -fsanitize=fuzzer -o $@ $< $(BUILD)/libvmxsim.a \
	  $(ALL_LDLIBS)

# ---- running it
## demo: install missing packages for building (as root), build, replay a small lat_ctx trace under several policies
demo:
	$(Q)$(SETUP) build
	$(Q)$(MAKE) --no-print-directory all
	$(Q)scripts/demo.sh $(PROG)

## reproduce: the classic exit-cost experiments, tables on stdout, charts (PNG, SVG, PDF) in plots/ (needs gnuplot)
reproduce: all
	$(Q)$(SETUP) --check plot
	$(Q)$(PROG) reproduce --plots plots

## xenalyze: build/xenalyze, Xen's trace analyser, from Debian's xen source package (the bench times it)
xenalyze:
	$(Q)scripts/get-xenalyze.sh $(BUILD)/xenalyze

## bench: the speed figures, each a ratio with its goal: replay / cat, stored / --no-db, one pass / N replays, memory (needs ~6 GB of disk)
bench: all $(GEN_XENTRACE) $(WALLTIME)
	$(Q)GEN_XENTRACE=$(abspath $(GEN_XENTRACE)) WALLTIME=$(abspath $(WALLTIME)) scripts/bench.sh $(PROG)

## plots: charts (PNG, SVG, PDF) from the results database into plots/ (DB=vmxsim.db, TRACE=latest, PARAM=procs)
plots:
	$(Q)$(SETUP) --check plot
	$(Q)mkdir -p plots
	$(Q)scripts/plot/plot.sh exits --db $(or $(DB),vmxsim.db) $(if $(TRACE),--trace $(TRACE)) -o plots/exits
	$(Q)scripts/plot/plot.sh cycles --db $(or $(DB),vmxsim.db) $(if $(TRACE),--trace $(TRACE)) -o plots/cycles
	$(Q)scripts/plot/plot.sh param --db $(or $(DB),vmxsim.db) --param $(or $(PARAM),procs) \
	  -o plots/param-$(or $(PARAM),procs) || echo "  (no $(or $(PARAM),procs) in the traces' metadata: PARAM=key)"

# What `make install` puts under $(PREFIX)/share/vmxsim: the chart scripts the program runs
# (reproduce --plots finds plot/bars.gp beside its bin/), the recording script, the kernel-build
# recording the xenner-kbuild-2008 experiment replays (recorded/), and the documents the man
# page names (doc/).
SHARE      = $(DESTDIR)$(PREFIX)/share/vmxsim
PLOT_FILES = scripts/plot/plot.sh scripts/plot/common.gp scripts/plot/bars.gp scripts/plot/exits.gp \
             scripts/plot/cycles.gp scripts/plot/param.gp scripts/plot/sweep.sh scripts/plot/sweep.gp
DOC_FILES  = README.md:README.md traces/FORMAT.md:FORMAT.md docs/schema.md:schema.md \
             docs/experiments.md:experiments.md docs/sources.md:sources.md docs/building.md:building.md \
             workloads/README.md:workloads.md workloads/record/README.md:recording.md \
             scripts/plot/README.md:plots.md docs/reproduce-output.txt:reproduce-output.txt \
             docs/sweeps.md:sweeps.md

## install: the program, its man page, and under PREFIX/share/vmxsim the chart and recording scripts and the documents (DESTDIR stages); installs no packages
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 $(SHARE)/plot $(SHARE)/record $(SHARE)/doc \
	  $(SHARE)/recorded
	install -m 755 $(PROG) $(DESTDIR)$(PREFIX)/bin/vmxsim
	install -m 644 docs/vmxsim.1 $(DESTDIR)$(PREFIX)/share/man/man1/vmxsim.1
	install -m 755 scripts/plot/plot.sh scripts/plot/sweep.sh $(SHARE)/plot/
	install -m 644 scripts/plot/lib.sh $(SHARE)/plot/
	install -m 644 $(filter %.gp,$(PLOT_FILES)) $(SHARE)/plot/
	install -m 755 workloads/record/record.sh $(SHARE)/record/record.sh
	install -d $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 644 scripts/completion/vmxsim.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/vmxsim
	install -m 644 traces/recorded/perf-kbuild.txt.xz $(SHARE)/recorded/
	$(Q)for f in $(DOC_FILES); do install -m 644 "$${f%%:*}" "$(SHARE)/doc/$${f##*:}" || exit 1; done

## uninstall: remove what `make install` installed (same PREFIX and DESTDIR)
uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/vmxsim $(DESTDIR)$(PREFIX)/share/man/man1/vmxsim.1 \
	  $(DESTDIR)$(PREFIX)/share/bash-completion/completions/vmxsim
	rm -rf $(SHARE)

## clean: remove every build directory (build/, build-*/) and the ./vmxsim link
clean:
	rm -rf build build-* vmxsim

## help: this list
help:
	@echo "Targets (make TARGET):"
	@awk '/^## [a-z][a-z-]*: / { t = $$2; sub(/:$$/, "", t); sub(/^## [^:]*: */, ""); \
	  printf "  %-10s %s\n", t, $$0 }' $(firstword $(MAKEFILE_LIST))
	@echo "Options (make NAME=VALUE ...):"
	@sed -n 's/^#: /  /p' $(firstword $(MAKEFILE_LIST))

ifneq ($(BUILDING),)
-include $(LIB_OBJS:.o=.d) $(BUILD)/sim/cli/main.d
endif
