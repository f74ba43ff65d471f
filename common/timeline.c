/*
 * scripts/timeline.sh's program: a step's gemm_launch built with its stamps
 * on (make stepNN_name/timeline, common/timeline.cuh), on the harness's own
 * problem (the step's options and seeded inputs), run once to warm up and
 * once stamped. Prints a stamp per line, "sm block consumer kind ns", ns
 * from the first stamp; kind 0 multiply, 1 fixup, 2 store, 3 done.
 * usage: stepNN_name/timeline [-m M -n N -k K | -s S] (the step's options)
 * Built with -DFP8=1 for step 16's gemm_fp8_launch.
 */
#include "harness.h"
#include "options.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

struct timeline_stamp { unsigned long long ns; unsigned sm, block, phase; };
int timeline_read(struct timeline_stamp *out, int most);

enum { MOST = 1 << 22 };

#if FP8
static const struct step STEP = { "timeline", INPUT_E4M3, "sm_90a" }; // step 16
#define GEMM() gemm_fp8_launch(d->M, d->N, d->K, d->alpha, p.dA, p.dsa, p.dB, p.dsb, d->beta, p.dC, p.stream)
#else
static const struct step STEP = { "timeline", INPUT_FP16, "sm_90a" }; // the stamped steps: 10 and up
#define GEMM() gemm_launch(d->M, d->N, d->K, d->alpha, p.dA, p.dB, d->beta, p.dC, p.stream)
#endif

int main(int argc, char **argv)
{
    struct options opt;
    int exit_code = parse_options(argc, argv, &STEP, &opt);
    if (exit_code >= 0)
        return exit_code;
    struct gpu gpu;
    exit_code = open_gpu(&STEP, &opt, &gpu);
    if (exit_code >= 0)
        return exit_code;
    struct problem p;
    setup_problem(&p, &STEP, &opt);
    struct timeline_stamp *s = malloc(MOST * sizeof *s);
    const struct gemm_data *d = &p.host;
    // the warm-up: memory, modules, clocks; then the stamped call
    int n = -1, err = s ? GEMM() : cudaErrorMemoryAllocation;
    if (!err && timeline_read(s, MOST) >= 0 && !(err = GEMM()))
        n = timeline_read(s, MOST);
    if (err || n < 0) {
        err = err ? err : (int)cudaGetLastError();
        fprintf(stderr, "%s: %s\n", STEP.name, cudaGetErrorString((cudaError_t)err));
        return 1;
    }
    unsigned long long t0 = n ? s[0].ns : 0;
    for (int i = 0; i < n; i++)
        t0 = s[i].ns < t0 ? s[i].ns : t0;
    for (int i = 0; i < n; i++)
        printf("%u %u %u %u %llu\n", s[i].sm, s[i].block, s[i].phase / 4, s[i].phase % 4, s[i].ns - t0);
    free(s);
    free_problem(&p);
    return 0;
}
