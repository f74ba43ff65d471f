#include "options.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct options DEFAULTS = {
    .M = 4096, .N = 4096, .K = 4096,
    .alpha = 1.0f, .beta = 0.0f,
    .warmup = 3, .iters = 20,
    .seed = 2024,
    .check = 1,
};

static void usage(const char *prog)
{
    printf("usage: %s [options]\n"
           "Runs C = alpha * A x B + beta * C on the GPU, checks it, and times it\n"
           "against cuBLAS on the same data.\n"
           "\n"
           "  -m M, -n N, -k K   matrix sizes: A is M x K, B is K x N (default %d each)\n"
           "  -s S, --size S     set M, N and K to S\n"
           "  --alpha X          scale of A x B (default %g)\n"
           "  --beta X           scale of the old C (default %g; 0 means C is not read)\n"
           "  --warmup N         untimed runs before timing (default %d)\n"
           "  --iters N          timed runs; the median is reported (default %d)\n"
           "  --seed N           seed of the random inputs (default %llu)\n"
           "  --no-check         skip the correctness check\n"
           "  -h, --help         show this help\n"
           "\n"
           "Exit status: 0 success, 1 check failed or CUDA error, 2 bad input or no usable GPU.\n",
           prog, DEFAULTS.M, DEFAULTS.alpha, DEFAULTS.beta, DEFAULTS.warmup,
           DEFAULTS.iters, (unsigned long long)DEFAULTS.seed);
}

/* One line on stderr naming the problem; returns the exit code for bad input. */
static int bad(const char *prog, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", prog);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see --help)\n");
    va_end(ap);
    return 2;
}

static int parse_int(const char *s, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    const long long v = strtoll(s, &end, 10);
    if (end == s || *end != '\0' || errno == ERANGE || v < lo || v > hi)
        return 0;
    *out = v;
    return 1;
}

static int parse_float(const char *s, float *out)
{
    char *end;
    errno = 0;
    const float v = strtof(s, &end);
    if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v))
        return 0;
    *out = v;
    return 1;
}

/* One matrix of rows x cols must fit the 32-bit index math of the kernels. */
static int too_large(const char *prog, const char *name, long long rows, long long cols)
{
    if (rows * cols <= MAX_MATRIX_ELEMENTS)
        return 0;
    fprintf(stderr,
            "%s: %s would be %lld x %lld = %lld elements (%.1f GiB), too large: "
            "at most %lld elements per matrix (see --help)\n",
            prog, name, rows, cols, rows * cols,
            (double)(rows * cols) * 4.0 / (1u << 30), MAX_MATRIX_ELEMENTS);
    return 1;
}

int parse_options(int argc, char **argv, const char *prog, struct options *opt)
{
    *opt = DEFAULTS;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
            usage(prog);
            return 0;
        }
        if (!strcmp(arg, "--no-check")) {
            opt->check = 0;
            continue;
        }

        /* Every other option takes a value: "--opt V" or "--opt=V". */
        static const char *const WITH_VALUE[] = {
            "-m", "-n", "-k", "-s", "--size", "--alpha", "--beta",
            "--warmup", "--iters", "--seed",
        };
        const char *name = NULL, *value = NULL;
        for (size_t j = 0; j < sizeof WITH_VALUE / sizeof WITH_VALUE[0]; j++) {
            const size_t len = strlen(WITH_VALUE[j]);
            if (!strncmp(arg, WITH_VALUE[j], len) && (arg[len] == '\0' || arg[len] == '=')) {
                name = WITH_VALUE[j];
                value = arg[len] == '=' ? arg + len + 1 : NULL;
                break;
            }
        }
        if (!name) {
            if (arg[0] == '-')
                return bad(prog, "unknown option '%s'", arg);
            return bad(prog, "unexpected argument '%s'", arg);
        }
        if (!value) {
            if (i + 1 >= argc)
                return bad(prog, "option %s needs a value", name);
            value = argv[++i];
        }

        long long v;
        if (!strcmp(name, "--alpha") || !strcmp(name, "--beta")) {
            float *dst = !strcmp(name, "--alpha") ? &opt->alpha : &opt->beta;
            if (!parse_float(value, dst))
                return bad(prog, "%s needs a finite number, got '%s'", name, value);
        } else if (!strcmp(name, "--warmup")) {
            if (!parse_int(value, 0, 100000, &v))
                return bad(prog, "%s needs an integer from 0 to 100000, got '%s'", name, value);
            opt->warmup = (int)v;
        } else if (!strcmp(name, "--iters")) {
            if (!parse_int(value, 1, 100000, &v))
                return bad(prog, "%s needs an integer from 1 to 100000, got '%s'", name, value);
            opt->iters = (int)v;
        } else if (!strcmp(name, "--seed")) {
            if (!parse_int(value, 0, 0x7fffffffffffffffLL, &v))
                return bad(prog, "%s needs a non-negative integer, got '%s'", name, value);
            opt->seed = (uint64_t)v;
        } else {
            if (!parse_int(value, 1, MAX_SIDE, &v))
                return bad(prog, "%s needs an integer from 1 to %d, got '%s'", name, MAX_SIDE, value);
            if (!strcmp(name, "-m"))
                opt->M = (int)v;
            else if (!strcmp(name, "-n"))
                opt->N = (int)v;
            else if (!strcmp(name, "-k"))
                opt->K = (int)v;
            else
                opt->M = opt->N = opt->K = (int)v;
        }
    }

    if (too_large(prog, "A", opt->M, opt->K) || too_large(prog, "B", opt->K, opt->N) ||
        too_large(prog, "C", opt->M, opt->N))
        return 2;
    return -1;
}
