/*
 * step16_fp8, host side. Every step's main.c tells the same story: parse
 * the options, set up seeded random data, run the step's gemm_launch once and
 * check it, time it against cuBLAS on the same data, report. The lesson of
 * each step is in its kernel.cu; this file changes only with the step's name,
 * the precision of the inputs (half from step 05 on) and the oldest GPU the
 * step runs on, STEP's arch: the one place it is declared (the Makefile reads
 * it here too).
 */
#include "harness.h"

static const struct step STEP = { "step16_fp8", INPUT_E4M3, "sm_90a" };

int main(int argc, char **argv)
{
    struct options opt;
    int exit_code = parse_options(argc, argv, &STEP, &opt);
    if (exit_code >= 0)
        return exit_code; /* --help, or bad input */

    struct gpu gpu;
    exit_code = open_gpu(&STEP, &opt, &gpu);
    if (exit_code >= 0)
        return exit_code; /* no usable GPU, one older than STEP.arch, or too little memory */

    struct problem prob;
    setup_problem(&prob, &STEP, &opt);

    struct check_result check = { .pass = 1 };
    if (opt.check)
        check = check_gemm_fp8(&prob, gemm_fp8_launch);

    struct timing mine, theirs;
    time_gemms_fp8(&prob, gemm_fp8_launch, cublas_gemm_fp8(), &opt, &mine, &theirs);

    report(&STEP, &gpu, &opt, &mine, &theirs, opt.check ? &check : NULL);
    free_problem(&prob);
    return check.pass ? 0 : 1;
}
