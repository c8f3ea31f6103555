# rust-kernel-workshop: write Linux kernel modules in Rust, stage by stage.
#
#   make run STEP=01            build steps/01-*, boot the workshop kernel in a
#                               VM, load the module, give you a root shell
#   make run STEP=01 FROM=solutions   the same with the reference solution
#   make run STEP=01 CMD='dmesg'      run a command instead of a shell
#   make run STEP=01 DEBUG=1    on the debug kernel (KASAN, lockdep, ...),
#                               which make check and make test always use
#   make check STEP=01          test your steps/01-* and explain what fails
#   make check STEP=01 FAST=1   the same on the fast kernel: quicker, but
#                               without KASAN and lockdep to catch your bugs
#   make test [STEP=01]         the full suite: every solution passes, every
#                               skeleton fails, host tests, the book
#   make progress [BUILD=1]     where you are, stage by stage, and what is next
#                               (BUILD=1: also compile the stages you changed)
#   make hint STEP=01 [EX=N]    the next hint for stage 01's exercises (EX=N: its Nth TODO's)
#                               (ALL=1: seen ones again; RESET=1: start over)
#   make rustdoc                the kernel crate's docs for the workshop
#                               kernel (prints the index page to open)
#   make rust-analyzer STEP=03  rust-project.json for steps/03-* (FROM=solutions:
#                               the solution), for your editor's rust-analyzer
#   make kit [FILE=...]         for teachers: pack the built kernels, their source
#                               and the tools into one file (build/rkw-kit-*.tar.zst)
#   make kit-install FILE=...   install such a kit here: no network, under a minute
#   make setup                  toolchain + kernel (run by the targets above)
#   make book                   build the book into build/book (then open
#                               build/book/index.html)
#   make bench [BENCH_ONLY=9p-reactor]  benchmarks (speed lives here, not in tests); BENCH_ONLY: some parts (scripts/bench.sh)
#   make fuzz [FUZZ_SECONDS=300]  fuzz the 9P decoder and the session logic, then the live server in the VM (FUZZ_LIVE=0: not), then r9p, diod and QEMU side by side (FUZZ_COMPARE=0: not)
#
# Every version (kernel, rustc, bindgen, virtme-ng, ...) is pinned in
# versions.env; the compiler variables for kernel builds are set in one place,
# scripts/common.sh (kmake_args). KDIR=... builds against another kernel tree.

SHELL := /bin/bash
REPO := $(dir $(abspath $(lastword $(MAKEFILE_LIST))))
FROM ?= steps
export KDIR

# STEP=1, STEP=01 or STEP=01-hello all name stage 01 (scripts/common.sh
# resolves it); FROM=steps|solutions picks the tree.
need_step = $(if $(STEP),,$(error say which stage, e.g. STEP=01 (see tests/)))

# Which kernel flavour each command boots (see kernel/debug.config).
RUN_FLAVOUR := $(if $(filter-out 0,$(DEBUG)),debug,fast)
CHECK_FLAVOUR := $(if $(filter-out 0,$(FAST)),fast,debug)
# ensure FLAVOUR,WHY[,VARS]: `make setup` for what this command uses, if it
# is missing (cheap when not); it announces a kernel build before it starts.
ensure = @RKW_FLAVOUR=$(1) RKW_WHY='$(2)' RKW_STEP='$(STEP)' $(3) $(REPO)scripts/ensure-setup.sh

.PHONY: help setup build run check test book bench fuzz clean progress hint rustdoc rust-analyzer kit kit-install
help:
	@sed -n '1,/^$$/p' $(REPO)Makefile | sed 's/^# \{0,1\}//'

setup:
	@$(REPO)scripts/setup.sh

build:
	$(need_step)
	$(call ensure,$(RUN_FLAVOUR),make build)
	@RKW_FLAVOUR=$(RUN_FLAVOUR) $(REPO)scripts/build-stage.sh $(FROM) $(STEP)

run:
	$(need_step)
	$(call ensure,$(RUN_FLAVOUR),make run)
	@RKW_FLAVOUR=$(RUN_FLAVOUR) $(REPO)scripts/run.sh $(FROM) $(STEP) $(if $(CMD),--exec "$(CMD)")

check:
	$(need_step)
	$(call ensure,$(CHECK_FLAVOUR),make check)
	@RKW_FLAVOUR=$(CHECK_FLAVOUR) $(REPO)scripts/test.sh --learner $(STEP)

test:
	$(call ensure,debug,make test,RKW_NEED_BOOK=1)
	$(call ensure,fast,make test)
	@$(REPO)scripts/test.sh $(STEP)

book:
	$(call ensure,fast,make book,RKW_NEED=book)
	@$(REPO)scripts/book.sh

bench:
	$(call ensure,fast,make bench)
	$(call ensure,debug,make bench)
	@$(REPO)scripts/bench.sh $(STEP)

fuzz:
	@$(REPO)scripts/fuzz.sh $(FUZZ_SECONDS)

progress:
	@$(REPO)scripts/progress.sh $(if $(filter-out 0,$(BUILD)),--build)

hint:
	$(need_step)
	@$(REPO)scripts/hint.sh $(if $(filter-out 0,$(RESET)),--reset) $(if $(filter-out 0,$(ALL)),--all) $(if $(EX),--exercise $(EX)) $(STEP)

rustdoc:
	$(call ensure,$(RUN_FLAVOUR),make rustdoc)
	@RKW_FLAVOUR=$(RUN_FLAVOUR) $(REPO)scripts/rustdoc.sh

rust-analyzer:
	$(need_step)
	$(call ensure,$(RUN_FLAVOUR),make rust-analyzer)
	@RKW_FLAVOUR=$(RUN_FLAVOUR) $(REPO)scripts/rust-analyzer.sh $(STEP) $(FROM)

kit:
	@$(REPO)scripts/kit.sh pack $(FILE)

kit-install:
	$(if $(FILE),,$(error say which kit, e.g. make kit-install FILE=/media/usb/rkw-kit-7.3.4-1_bpo13_1.tar.zst))
	@$(REPO)scripts/kit.sh install $(FILE)

clean:
	rm -rf $(REPO)build
