# vmxsim build.  `make` builds ./vmxsim; see `make help`.
#   SANITIZER=address|undefined   build into build-<sanitizer>/ with that sanitizer
#   WERROR=1                      treat warnings as errors (CI)
#   V=1                           show full compiler command lines
#   PREFIX=/usr/local             install prefix

CC       ?= cc
PREFIX   ?= /usr/local
BUILD    ?= build$(if $(SANITIZER),-$(SANITIZER))
PKGS     := sqlite3 libcjson
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null || echo -I/usr/include/cjson)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -lsqlite3 -lcjson)
TEST_LIBS  = $(shell pkg-config --libs cmocka 2>/dev/null || echo -lcmocka)

OPT      ?= -O2
CFLAGS   += -std=c11 -D_DEFAULT_SOURCE -D_FILE_OFFSET_BITS=64 $(OPT) -g -Wall -Wextra \
            -Wshadow -Wstrict-prototypes -Wmissing-prototypes -I. $(PKG_CFLAGS)
# Link-time optimisation lets the event loop inline across files (trace reader,
# engine, models); sanitizer builds skip it.
ifeq ($(SANITIZER),)
CFLAGS   += -flto=auto
LDFLAGS  += -flto=auto
endif
AR       := $(shell command -v gcc-ar >/dev/null 2>&1 && echo gcc-ar || echo ar)
ifeq ($(WERROR),1)
CFLAGS   += -Werror
endif
ifneq ($(SANITIZER),)
CFLAGS   += -fsanitize=$(SANITIZER) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS  += -fsanitize=$(SANITIZER)
endif
LDLIBS   += $(PKG_LIBS) -lreadline -lm

ifeq ($(V),1)
Q :=
else
Q := @
endif

LIB_SRCS  := $(sort $(wildcard sim/*/*.c models/*.c models/*/*.c workloads/*.c))
LIB_SRCS  := $(filter-out sim/cli/main.c,$(LIB_SRCS))
LIB_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/%.o) $(BUILD)/embedded.o
DATA      := $(sort $(wildcard models/cpus/*.json models/policies/*.json))
TEST_SRCS := $(sort $(wildcard tests/unit/test_*.c))
TEST_BINS := $(TEST_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
PROG      := $(BUILD)/vmxsim

.PHONY: all deps check unit cli demo bench install uninstall clean help reproduce
all: $(PROG) $(if $(SANITIZER),,vmxsim)

vmxsim: $(PROG)
	$(Q)ln -sf $(PROG) vmxsim

deps:
	$(Q)scripts/setup.sh

$(BUILD)/.deps-ok: scripts/setup.sh
	$(Q)mkdir -p $(BUILD) && scripts/setup.sh && touch $@

$(BUILD)/%.o: %.c | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/embedded.c: $(DATA) scripts/embed.sh
	@mkdir -p $(dir $@)
	$(Q)scripts/embed.sh $(DATA) > $@

$(BUILD)/embedded.o: $(BUILD)/embedded.c
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/libvmxsim.a: $(LIB_OBJS)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(PROG): $(BUILD)/sim/cli/main.o $(BUILD)/libvmxsim.a
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libvmxsim.a | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  TEST-CC $<")
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libvmxsim.a $(LDLIBS) $(TEST_LIBS)

## check: unit tests (cmocka), then the CLI tests, against this build
check: all $(TEST_BINS)
	$(Q)tests/run-unit.sh $(TEST_BINS)
	$(Q)VMXSIM=$(CURDIR)/$(PROG) tests/cli/run.sh
	$(Q)$(PROG) regress -q tests/regress

unit: $(TEST_BINS)
	$(Q)tests/run-unit.sh $(TEST_BINS)

cli: all
	$(Q)VMXSIM=$(CURDIR)/$(PROG) tests/cli/run.sh

## demo: generate a small lat_ctx trace, replay it under several policies, compare
demo: all
	$(Q)scripts/demo.sh $(PROG)

## reproduce: the classic exit-cost experiments, tables on stdout, PNGs in plots/
reproduce: all
	$(Q)$(PROG) reproduce --plots plots

## bench: events/s per policy on a 50-million-event trace (needs ~1.2 GB of disk)
bench: all
	$(Q)scripts/bench.sh $(PROG)

## plots: PNGs from the results database into plots/ (DB=vmxsim.db, TRACE=latest, PARAM=procs)
.PHONY: plots
plots:
	$(Q)mkdir -p plots
	$(Q)scripts/plot/plot.sh exits --db $(or $(DB),vmxsim.db) $(if $(TRACE),--trace $(TRACE)) -o plots/exits.png
	$(Q)scripts/plot/plot.sh cycles --db $(or $(DB),vmxsim.db) $(if $(TRACE),--trace $(TRACE)) -o plots/cycles.png
	$(Q)scripts/plot/plot.sh param --db $(or $(DB),vmxsim.db) --param $(or $(PARAM),procs) \
	  -o plots/param-$(or $(PARAM),procs).png || echo "  (no $(or $(PARAM),procs) in the traces' metadata: PARAM=key)"

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(PROG) $(DESTDIR)$(PREFIX)/bin/vmxsim
	install -m 644 docs/vmxsim.1 $(DESTDIR)$(PREFIX)/share/man/man1/vmxsim.1

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/vmxsim $(DESTDIR)$(PREFIX)/share/man/man1/vmxsim.1

clean:
	rm -rf build build-address build-undefined vmxsim

help:
	@echo "targets: all (default) check unit cli demo bench install uninstall clean deps"
	@echo "options: SANITIZER=address|undefined WERROR=1 V=1 PREFIX=dir OPT=-O0"

-include $(LIB_OBJS:.o=.d) $(BUILD)/sim/cli/main.d
