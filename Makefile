# GEMM tutorial: builds every step, runs the tests and the benchmark.
#
#   make                 all steps (step01_naive/run ... and links step01 ...)
#   make step04          one step: then ./step04/run
#   make test            the test suite (the GPU half is skipped without a GPU)
#   make bench           scripts/run_all.sh: the speedup table
#   make regs            registers, shared memory and local memory per kernel
#   make ARCH=sm_90      build for one architecture (default: the GPU's own,
#                        or every supported one when there is no GPU)

NVCC ?= nvcc
CC ?= cc

# The toolkit's root, from wherever nvcc is.
CUDA_PATH ?= $(patsubst %/bin/,%,$(dir $(shell command -v $(NVCC))))

# The GPU's compute capability, e.g. 9.0 -> sm_90; empty without a GPU.
ifndef ARCH
ARCH := $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | grep -E '^[0-9]+\.[0-9]+$$' | sed 's/\.//; s/^/sm_/')
endif
ifeq ($(strip $(ARCH)),)
# Every supported GPU (Ampere and newer), plus PTX for newer chips.
GENCODE := -gencode arch=compute_80,code=sm_80 -gencode arch=compute_86,code=sm_86 \
           -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90,code=[sm_90,compute_90]
else
GENCODE := -arch=$(ARCH)
endif

NVCCFLAGS ?= -O3 -lineinfo -std=c++17 -Xptxas -warn-spills,-warn-lmem-usage
CFLAGS ?= -O3 -std=c11 -Wall -Wextra -Wpedantic
LDLIBS := -lcublas

STEPS := $(sort $(patsubst %/main.c,%,$(wildcard step[0-9][0-9]_*/main.c)))
SHORT = $(firstword $(subst _, ,$(1)))
COMMON_HDRS := $(wildcard common/*.h)
COMMON_OBJS := common/half.o common/options.o common/check.o common/harness.o

.PHONY: all test bench regs clean $(foreach s,$(STEPS),$(call SHORT,$(s)))
.SECONDARY:

all: $(foreach s,$(STEPS),$(call SHORT,$(s)))

# make step04 builds step04_register_tile/run and the link step04 -> step04_register_tile.
define STEP_ALIAS
$(call SHORT,$(1)): $(1)/run
	@ln -sfn $(1) $(call SHORT,$(1))
endef
$(foreach s,$(STEPS),$(eval $(call STEP_ALIAS,$(s))))

%/run: %/main.o %/kernel.o $(COMMON_OBJS)
	$(NVCC) $(GENCODE) -o $@ $^ $(LDLIBS) -Xlinker -rpath,$(CUDA_PATH)/lib64

%/kernel.o: %/kernel.cu common/gemm.h
	$(NVCC) $(NVCCFLAGS) $(GENCODE) -Icommon -c $< -o $@

%/main.o: %/main.c $(COMMON_HDRS)
	$(CC) $(CFLAGS) -Icommon -c $< -o $@

common/harness.o: common/harness.c $(COMMON_HDRS)
	$(CC) $(CFLAGS) -I$(CUDA_PATH)/include -c $< -o $@

common/%.o: common/%.c $(COMMON_HDRS)
	$(CC) $(CFLAGS) -c $< -o $@

# The harness's unit tests: plain C, no GPU and no CUDA needed.
common/test_common: common/test_common.c common/half.o common/options.o common/check.o
	$(CC) $(CFLAGS) -o $@ $^ -lm

test:
	@bash scripts/test.sh

bench: all
	@bash scripts/run_all.sh

regs:
	@NVCC="$(NVCC)" NVCCFLAGS="$(NVCCFLAGS)" GENCODE="$(GENCODE)" bash scripts/regs.sh $(STEPS)

clean:
	rm -f common/*.o common/test_common $(foreach s,$(STEPS),$(s)/*.o $(s)/run $(call SHORT,$(s)))
