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
    .offset = 0,
    .seed = 2024,
    .check = 1,
};

/* The usage line shows the command as it was typed (./step01/run, or a
 * path to it); messages name the step. */
static void usage(const char *cmd, const struct step *step)
{
    char need[128];
    describe_need(step->arch, need, sizeof need);
    printf("usage: %s [options]\n"
           "%s: C = alpha * A x B + beta * C on the GPU, checked, and timed against\n"
           "cuBLAS on the same data. Needs %s.\n"
           "\n"
           "  -m M, -n N, -k K   matrix sizes: A is M x K, B is %s (default %d each)\n"
           "  -s S, --size S     set M, N and K to S\n"
           "  --alpha X          scale of A x B (default %g)\n"
           "  --beta X           scale of the old C (default %g; 0 means C is not read)\n"
           "  --warmup N         untimed runs of each before timing: at least N, and\n"
           "                     unless N is 0, %g s of them (default %d)\n"
           "  --iters N          timed runs; the median is reported (default %d)\n"
           "  --seed N           seed of the random inputs (default %llu)\n"
           "  --offset N         start A, B and C N elements past an aligned address,\n"
           "                     to see what misaligned rows cost (default 0)\n"
           "  --no-check         skip the correctness check\n"
           "  --launches         report the kernels one call launches: grid, block,\n"
           "                     cluster and shared memory of each (through CUPTI)\n"
           "  --cold             time each run with A, B and C out of L2 (a buffer\n"
           "                     twice L2's size read first), as a program that runs\n"
           "                     the product once sees it; the default reruns warm\n"
           "  --host             also report the CPU time of one call, the step's and\n"
           "                     cuBLAS's, queued while the GPU is busy\n"
           "  -h, --help         show this help (wherever it stands)\n"
           "\n"
           "Numbers are decimal: 1000, +12, -1.5, 2.5e-3; no spaces, no hex.\n"
           "Exit status: 0 success, 1 check failed or CUDA error, 2 bad input or no\n"
           "usable GPU.\n",
           cmd, step->name, need, step->input == INPUT_E4M3 ? "N x K" : "K x N", DEFAULTS.M, DEFAULTS.alpha,
           DEFAULTS.beta, WARMUP_SECONDS, DEFAULTS.warmup, DEFAULTS.iters, (unsigned long long)DEFAULTS.seed);
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

/* An optional sign, then digits: the one form every number here starts with,
 * so that strtoll and strtod (which also take leading spaces, hex, "inf" and
 * "nan") see nothing else. Returns the length of the digits after the sign. */
static size_t signed_digits(const char *s)
{
    if (*s == '+' || *s == '-')
        s++;
    return strspn(s, "0123456789");
}

static int parse_int(const char *s, long long lo, long long hi, long long *out)
{
    const size_t sign = *s == '+' || *s == '-';
    if (signed_digits(s) == 0 || s[sign + signed_digits(s)] != '\0')
        return 0;
    errno = 0;
    const long long v = strtoll(s, NULL, 10);
    if (errno == ERANGE || v < lo || v > hi)
        return 0;
    *out = v;
    return 1;
}

/* A decimal number: [sign] digits [. digits] [e [sign] digits], with digits
 * on at least one side of the point. Rounded to the nearest float; refused
 * only if that is infinite (tiny values round to a subnormal or to zero). */
static int parse_float(const char *s, float *out)
{
    const char *p = s;
    size_t whole = signed_digits(p);
    p += (*p == '+' || *p == '-') + whole;
    size_t frac = 0;
    if (*p == '.') {
        frac = strspn(p + 1, "0123456789");
        p += 1 + frac;
    }
    if (whole + frac == 0)
        return 0;
    if (*p == 'e' || *p == 'E') {
        const size_t exp = signed_digits(p + 1);
        if (exp == 0)
            return 0;
        p += 1 + (p[1] == '+' || p[1] == '-') + exp;
    }
    if (*p != '\0')
        return 0;
    const float v = (float)strtod(s, NULL);
    if (!isfinite(v))
        return 0;
    *out = v;
    return 1;
}

/* One matrix of rows x cols must have at most the step's gemm_max_elements (gemm.h). */
static int too_large(const char *prog, const char *name, long long rows, long long cols,
                     int bytes)
{
    if (rows * cols <= gemm_max_elements)
        return 0;
    fprintf(stderr,
            "%s: %s would be %lld x %lld = %lld elements (%.1f GiB of %s), too large: "
            "at most %lld elements per matrix (see --help)\n",
            prog, name, rows, cols, rows * cols, (double)(rows * cols) * bytes / (1u << 30),
            bytes == 1 ? "e4m3" : bytes == 2 ? "half" : "float", gemm_max_elements);
    return 1;
}

int parse_options(int argc, char **argv, const struct step *step, struct options *opt)
{
    const char *prog = step->name;
    *opt = DEFAULTS;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(argv[0], step);
            return 0;
        }

    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!strcmp(arg, "--no-check")) {
            opt->check = 0;
            continue;
        }
        if (!strcmp(arg, "--launches")) {
            opt->launches = 1;
            continue;
        }
        if (!strcmp(arg, "--cold")) {
            opt->cold = 1;
            continue;
        }
        if (!strcmp(arg, "--host")) {
            opt->host = 1;
            continue;
        }

        /* Every other option takes a value: "--opt V" or "--opt=V". */
        static const char *const WITH_VALUE[] = {
            "-m", "-n", "-k", "-s", "--size", "--alpha", "--beta",
            "--warmup", "--iters", "--seed", "--offset",
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
                return bad(prog, "%s needs a decimal number within float range, got '%s'", name,
                           value);
        } else if (!strcmp(name, "--warmup")) {
            if (!parse_int(value, 0, 100000, &v))
                return bad(prog, "%s needs an integer from 0 to 100000, got '%s'", name, value);
            opt->warmup = (int)v;
        } else if (!strcmp(name, "--iters")) {
            if (!parse_int(value, 1, 100000, &v))
                return bad(prog, "%s needs an integer from 1 to 100000, got '%s'", name, value);
            opt->iters = (int)v;
        } else if (!strcmp(name, "--offset")) {
            if (!parse_int(value, 0, MAX_OFFSET, &v))
                return bad(prog, "%s needs an integer from 0 to %d, got '%s'", name, MAX_OFFSET, value);
            opt->offset = (int)v;
        } else if (!strcmp(name, "--seed")) {
            if (!parse_int(value, 0, 0x7fffffffffffffffLL, &v))
                return bad(prog, "%s needs a non-negative integer, got '%s'", name, value);
            opt->seed = (uint64_t)v;
        } else {
            if (!parse_int(value, 1, GEMM_MAX_SIDE, &v))
                return bad(prog, "%s needs an integer from 1 to %d, got '%s'", name, GEMM_MAX_SIDE, value);
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

    const int in = input_bytes(step->input);
    if (too_large(prog, "A", opt->M, opt->K, in) || too_large(prog, "B", opt->K, opt->N, in) ||
        too_large(prog, "C", opt->M, opt->N, 4))
        return 2;
    return -1;
}
