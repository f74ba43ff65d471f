/*
 * Command-line options shared by every step. Parsing needs no GPU, so bad
 * input is refused before any GPU work.
 */
#ifndef OPTIONS_H
#define OPTIONS_H

#include "gemm.h"
#include "step.h"

#include <stdint.h>

struct options {
    int M, N, K;
    float alpha, beta;
    int warmup, iters;
    int offset; /* A, B and C start this many elements past an allocation */
    uint64_t seed;
    int check; /* 0 after --no-check */
    int launches; /* 1 after --launches: report the kernels gemm_launch launches */
    int cold;     /* 1 after --cold: A, B and C out of L2 before each timed run */
    int host;     /* 1 after --host: report the CPU time of one call */
};

/* The largest problem a step accepts is gemm.h's (GEMM_MAX_SIDE, the step's gemm_max_elements). */
#define MAX_OFFSET 1024

/* Seconds of warm-up runs before timing, unless --warmup 0. */
#define WARMUP_SECONDS 0.5

/* Parses argv into *opt. Returns -1 when the program should go on; otherwise
 * the exit code: 0 after --help (wherever it stands), 2 after bad input,
 * which gets one line on stderr naming the problem, prefixed by the step's
 * name. Numbers are decimal, with an optional sign and no spaces: integers
 * are digits only; alpha and beta are any decimal number, rounded to the
 * nearest float, refused only where that is infinite. */
int parse_options(int argc, char **argv, const struct step *step, struct options *opt);

#endif
