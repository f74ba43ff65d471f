/*
 * What a step tells the harness about itself, in one line of its main.c:
 *
 *   static const struct step STEP = { "step06_mma_ptx", INPUT_FP16, "sm_80" };
 *
 * That line is the one place a step's oldest GPU is declared: the Makefile,
 * scripts/run_all.sh and the tests read it there (scripts/arch.sh), and the
 * harness refuses an older GPU with it.
 */
#ifndef STEP_H
#define STEP_H

#include <stddef.h>

enum input_type { INPUT_FP32, INPUT_FP16, INPUT_E4M3 };

struct step {
    const char *name;      /* the folder's name, e.g. "step01_naive" */
    enum input_type input; /* what A and B hold on the GPU */
    const char *arch;      /* the oldest GPU it runs on: "sm_75" runs on 7.5 and
                            * newer; "sm_90a" (Hopper's own instructions) on 9.0 only */
};

/* A step's arch as a compute capability. */
struct arch {
    int major, minor;
    int exact; /* an "a" target: its instructions exist on major.minor only */
};

/* Parses "sm_75", "sm_100" or "sm_90a". Returns 0 if s is not of that form. */
int parse_arch(const char *s, struct arch *a);

/* Whether a GPU of compute capability major.minor runs code built for a. */
int arch_runs_on(const struct arch *a, int major, int minor);

/* What a step's arch asks of the GPU, in words for messages: "sm_80,
 * compute capability 8.0 or newer (Ampere or later)", or "sm_90a, a Hopper
 * GPU (compute capability 9.0)". */
void describe_need(const char *arch, char *buf, size_t size);

/* Bytes of one element of A or B. */
int input_bytes(enum input_type input);

#endif
