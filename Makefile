# GEMM tutorial: builds every step, runs the tests and the benchmark.
# `make help` lists the targets.

NVCC ?= nvcc
CC ?= cc

# The toolkit's root, from wherever nvcc is.
CUDA_PATH ?= $(patsubst %/bin/,%,$(dir $(shell command -v $(NVCC))))

# The GPU's compute capability, e.g. 9.0 -> sm_90; empty without a GPU, and
# then each step is built for every architecture it runs on.
ifndef ARCH
ARCH := $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | grep -E '^[0-9]+\.[0-9]+$$' | sed 's/\.//; s/^/sm_/')
endif
ifneq ($(strip $(ARCH)),)
ifeq ($(shell echo '$(ARCH)' | grep -E '^(sm|compute)_[1-9][0-9]{1,2}a?$$'),)
$(error ARCH=$(ARCH): want sm_NN (machine code for that GPU) or compute_NN (PTX only), e.g. make ARCH=sm_90)
endif
endif

export ARCH

NVCCFLAGS ?= -O3 -lineinfo -std=c++17 -Xptxas -warn-spills,-warn-lmem-usage
CFLAGS ?= -O3 -std=c11 -Wall -Wextra -Wpedantic
LDLIBS := -lcublasLt -lcublas -ldl
# gemm.h names cudaStream_t: the C files see the toolkit's headers, as system headers.
CUDA_INCLUDE := -isystem $(CUDA_PATH)/include

ALL_STEPS := $(sort $(patsubst %/main.c,%,$(wildcard step[0-9][0-9]_*/main.c)))
SHORT = $(firstword $(subst _, ,$(1)))
COMMON_HDRS := $(wildcard common/*.h)
COMMON_OBJS := common/half.o common/fp8.o common/options.o common/step.o common/check.o common/harness.o common/flush.o
# Code for any GPU from sm_75 on (Hopper's own where ARCH is Hopper): the
# harness's flush kernel, and ceilings/.
GENCODE_ANY := $(shell bash scripts/arch.sh gencode-any $(ARCH))

# Each step's -gencode flags, from the architecture its main.c declares
# (scripts/arch.sh), or "left out: <why>" when ARCH cannot run it.
$(foreach s,$(ALL_STEPS),$(eval GENCODE_$(s) := $(shell bash scripts/arch.sh gencode $(s) $(ARCH))))
LEFT_OUT := $(foreach s,$(ALL_STEPS),$(if $(filter left,$(firstword $(GENCODE_$(s)))),$(s)))
BUILT := $(filter-out $(LEFT_OUT),$(ALL_STEPS))

# What was asked on the command line, checked before any work: STEP names
# the step of make lesson, sass and profile, which need one (the scripts
# behind them build with STEP= cleared); a build takes the step as its
# target, and a step must exist.
STEP_GOALS := $(filter lesson sass profile,$(MAKECMDGOALS))
STEP_NAMES := $(ALL_STEPS) $(foreach s,$(ALL_STEPS),$(call SHORT,$(s)))
ifneq ($(strip $(STEP)),)
ifeq ($(STEP_GOALS),)
$(error STEP=$(STEP) is for make lesson, sass and profile; to build one step: make step$(STEP))
endif
else ifneq ($(STEP_GOALS),)
$(error usage: make $(firstword $(STEP_GOALS)) STEP=NN, NN one of $(foreach s,$(ALL_STEPS),$(patsubst step%,%,$(call SHORT,$(s)))))
endif
UNKNOWN_STEPS := $(filter-out $(STEP_NAMES),$(foreach g,$(filter step%,$(MAKECMDGOALS)),$(if $(findstring /,$(g)),,$(g))))
ifneq ($(UNKNOWN_STEPS),)
$(error no step $(firstword $(UNKNOWN_STEPS)); the steps: $(foreach s,$(ALL_STEPS),$(call SHORT,$(s))))
endif

.PHONY: all test bench ceilings regs profile sass lesson help clean FORCE $(ALL_STEPS) $(foreach s,$(ALL_STEPS),$(call SHORT,$(s)))
.SECONDARY:

# A step ARCH cannot run is left out with one line saying why (and a binary
# left from another ARCH is removed, so nothing runs what this build is not).
all: $(foreach s,$(BUILT),$(call SHORT,$(s))) $(if $(filter left,$(firstword $(GENCODE_ANY))),,ceilings/run)
	@$(foreach s,$(LEFT_OUT),rm -f $(s)/run; echo "$(s): $(GENCODE_$(s))";)

# make step04 (or make step04_register_tile) builds step04_register_tile/run
# and the link step04 -> step04_register_tile.
define STEP_ALIAS
$(call SHORT,$(1)) $(1): $(1)/run
	@ln -sfn $(1) $(call SHORT,$(1))
endef
define STEP_LEFT_OUT
$(call SHORT,$(1)) $(1) $(1)/run:
	@echo "$(1): $(GENCODE_$(1))" >&2; exit 2
endef
$(foreach s,$(BUILT),$(eval $(call STEP_ALIAS,$(s))))
$(foreach s,$(LEFT_OUT),$(eval $(call STEP_LEFT_OUT,$(s))))

# What each build was made with, recorded so that a change of compiler,
# flags or architecture rebuilds what depends on it: the record is rewritten
# only when it differs, and everything compiled depends on it.
define RECORD
$(1)/.build-config: FORCE
	@echo '$(2)' | cmp -s - $$@ || echo '$(2)' >$$@
endef
$(foreach s,$(BUILT),$(eval $(call RECORD,$(s),$(NVCC) $(NVCCFLAGS) $(GENCODE_$(s)))))
$(eval $(call RECORD,common,$(CC) $(CFLAGS) $(CUDA_PATH) $(NVCC) $(NVCCFLAGS) $(GENCODE_ANY)))
$(eval $(call RECORD,ceilings,$(NVCC) $(NVCCFLAGS) $(GENCODE_ANY)))

%/run: %/main.o %/kernel.o $(COMMON_OBJS)
	$(NVCC) -o $@ $^ $(LDLIBS) -Xlinker -rpath,$(CUDA_PATH)/lib64:$(CUDA_PATH)/extras/CUPTI/lib64

%/kernel.o: %/kernel.cu common/gemm.h common/launch.cuh common/repack.cuh common/timeline.cuh %/.build-config
	$(NVCC) $(NVCCFLAGS) $(GENCODE_$*) -Icommon -c $< -o $@

# scripts/timeline.sh's program: the step's kernels with their stamps on
# (common/timeline.cuh), and common/timeline.c built for the step's inputs
# (FP8's call for step 16); no default target builds it.
TIMELINE_MAIN = common/timeline$(if $(filter e4m3,$(shell bash scripts/arch.sh input $(1))),_fp8).o
.SECONDEXPANSION:
%/timeline: %/timeline.o $$(call TIMELINE_MAIN,$$*) $(COMMON_OBJS)
	$(NVCC) -o $@ $^ $(LDLIBS) -Xlinker -rpath,$(CUDA_PATH)/lib64:$(CUDA_PATH)/extras/CUPTI/lib64

%/timeline.o: %/kernel.cu common/gemm.h common/launch.cuh common/repack.cuh common/timeline.cuh %/.build-config
	$(NVCC) $(NVCCFLAGS) $(GENCODE_$*) -DGEMM_TIMELINE -Icommon -c $< -o $@

# scripts/plan.sh's program: the step's planner on the CPU, every candidate
# it weighs (common/plan_show.cu). It only runs on the CPU, so it is built
# as PTX of the step's own GPU (no machine code) whatever ARCH is; no
# default target builds it.
%/plan: %/kernel.cu common/plan_show.cu common/plan_of.cuh common/gemm.h common/launch.cuh common/repack.cuh \
        common/timeline.cuh
	$(NVCC) -O2 -std=c++17 $$(bash scripts/arch.sh gencode-host $*) -Icommon -I. -DKERNEL='"$*/kernel.cu"' \
	    -DFP8=$$([ "$$(bash scripts/arch.sh input $*)" = e4m3 ] && echo 1 || echo 0) common/plan_show.cu -o $@

%/main.o: %/main.c $(COMMON_HDRS) common/.build-config
	$(CC) $(CFLAGS) $(CUDA_INCLUDE) -Icommon -c $< -o $@

common/%.o: common/%.c $(COMMON_HDRS) common/.build-config
	$(CC) $(CFLAGS) $(CUDA_INCLUDE) -c $< -o $@

common/timeline_fp8.o: common/timeline.c $(COMMON_HDRS) common/.build-config
	$(CC) $(CFLAGS) $(CUDA_INCLUDE) -DFP8=1 -c $< -o $@

common/flush.o: common/flush.cu common/.build-config
	$(NVCC) $(NVCCFLAGS) $(GENCODE_ANY) -c $< -o $@

# The harness's unit tests: plain C, no GPU needed (the toolkit's headers only).
common/test_common: common/test_common.c common/half.o common/fp8.o common/options.o common/step.o common/check.o
	$(CC) $(CFLAGS) $(CUDA_INCLUDE) -o $@ $^ -lm

# The machine's own ceilings (ceilings/ceilings.cu): make ceilings measures them.
ceilings/run: ceilings/ceilings.cu ceilings/.build-config
	$(NVCC) $(NVCCFLAGS) $(GENCODE_ANY) -o $@ $< -Xlinker -rpath,$(CUDA_PATH)/lib64

ceilings: ceilings/run
	@./ceilings/run

# The scripts run make themselves; the + hands them this make's job slots,
# so that make -j8 test builds in parallel.
test:
	+@bash scripts/test.sh

bench:
	+@bash scripts/run_all.sh

# make regs [STEPS="05 06"]
regs:
	@NVCC="$(NVCC)" NVCCFLAGS="$(NVCCFLAGS)" bash scripts/regs.sh $(or $(STEPS),$(ALL_STEPS))

# make lesson STEP=04; make profile STEP=07 [SIZE=4096];
# make sass STEP=06 [SASS_FLAGS="--loop"]
lesson:
	@bash scripts/lesson.sh $(STEP)

profile:
	+@bash scripts/profile.sh $(STEP) $(if $(SIZE),-s $(SIZE))

sass:
	+@bash scripts/sass.sh $(STEP) $(SASS_FLAGS)

help:
	@echo 'make                  build every step the GPU (or ARCH) can run: step01_naive/run ...'
	@echo 'make step04           build one step (or make step04_register_tile), then ./step04/run'
	@echo 'make test             the test suite (the GPU half is skipped without a GPU;'
	@echo '                      STEPS="05 06" tests those steps only, JOBS=4 runs 4 compiles or GPU checks at a time)'
	@echo 'make bench            scripts/run_all.sh: every step against cuBLAS, the speedup table'
	@echo 'make ceilings         the ceilings of this GPU: FMA, mma.sync, wgmma, HBM and L2 bandwidth'
	@echo 'make regs             registers, shared memory and spills of every kernel'
	@echo 'make lesson STEP=04   the code diff from the previous step, without the headers'
	@echo 'make profile STEP=07  Nsight Compute: the numbers the README quotes (SIZE=N to change size)'
	@echo 'make sass STEP=06     count the instructions a step teaches (SASS_FLAGS=--loop: its main loop)'
	@echo 'make clean            remove what make built'
	@echo
	@echo 'Variables: ARCH=sm_90 (one GPU; compute_75 for PTX only; default: the GPU found,'
	@echo 'or every architecture each step runs on), NVCC=nvcc, CC=cc, NVCCFLAGS, CFLAGS.'
	@echo 'Steps and the oldest GPU each runs on:'
	@$(foreach s,$(ALL_STEPS),echo "  $(s) $$(bash scripts/arch.sh need $(s))";)

clean:
	rm -f common/*.o common/test_common common/.build-config ceilings/run ceilings/.build-config \
	    $(foreach s,$(ALL_STEPS),$(s)/*.o $(s)/run $(s)/timeline $(s)/.build-config $(call SHORT,$(s)))
