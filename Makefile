# rust-kernel-workshop: write Linux kernel modules in Rust, stage by stage.
#
#   make run STEP=01            build steps/01-*, boot the workshop kernel in a
#                               VM, load the module, give you a root shell
#   make run STEP=01 FROM=solutions   the same with the reference solution
#   make run STEP=01 CMD='dmesg'      run a command instead of a shell
#   make check STEP=01          test your steps/01-* and explain what fails
#   make test [STEP=01]         the full suite: every solution passes, every
#                               skeleton fails, host tests, the book
#   make setup                  toolchain + kernel (run by the targets above)
#   make book                   build the book into build/book (then open
#                               build/book/index.html)
#   make bench                  benchmarks (speed targets live here, not in tests)
#   make fuzz [FUZZ_SECONDS=300]  fuzz the 9P decoder
#
# Every version (kernel, rustc, bindgen, virtme-ng, ...) is pinned in
# versions.env; the compiler variables for kernel builds are set in one place,
# scripts/common.sh (kmake_args). KDIR=... builds against another kernel tree.

SHELL := /bin/bash
REPO := $(dir $(abspath $(lastword $(MAKEFILE_LIST))))
FROM ?= steps
export KDIR

# STEP=1, STEP=01 or STEP=01-hello all name tests/01-hello
stage = $(notdir $(patsubst %/,%,$(firstword $(wildcard $(REPO)tests/$(shell printf '%02d' $$((10\#$(firstword $(subst -, ,$(STEP)))))  2>/dev/null)-*/))))
need_step = $(if $(STEP),$(if $(stage),,$(error no stage $(STEP): see tests/)),$(error say which stage: STEP=NN))

.PHONY: ensure-setup help setup build run check test book bench fuzz clean
help:
	@sed -n '1,/^$$/p' $(REPO)Makefile | sed 's/^# \{0,1\}//'

setup:
	@$(REPO)scripts/setup.sh

# The cheap "is it set up?" test; the full setup is idempotent anyway.
ensure-setup:
	@$(REPO)scripts/ensure-setup.sh

build: ensure-setup
	$(need_step)
	@$(REPO)scripts/build-stage.sh $(FROM) $(stage)

run: ensure-setup
	$(need_step)
	@$(REPO)scripts/run.sh $(FROM) $(stage) $(if $(CMD),--exec "$(CMD)")

check: ensure-setup
	$(need_step)
	@$(REPO)scripts/test.sh --learner $(firstword $(subst -, ,$(stage)))

test: ensure-setup
	@$(REPO)scripts/test.sh $(if $(STEP),$(firstword $(subst -, ,$(stage))))

book: ensure-setup
	@$(REPO)scripts/book.sh

bench: ensure-setup
	@$(REPO)scripts/bench.sh $(if $(STEP),$(stage))

fuzz:
	@$(REPO)scripts/fuzz.sh $(FUZZ_SECONDS)

clean:
	rm -rf $(REPO)build
