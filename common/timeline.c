/*
 * scripts/timeline.sh's program: a step's gemm_launch built with its stamps
 * on (make stepNN_name/timeline, common/timeline.cuh), run once to warm up
 * and once stamped on random A and B, C = A x B. Prints a stamp per line,
 * "sm block consumer kind ns", ns from the first stamp; kind 0 multiply,
 * 1 fixup, 2 store, 3 done.
 * usage: stepNN_name/timeline M N K
 */
#include "gemm.h"
#include "half.h"

#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct timeline_stamp { unsigned long long ns; unsigned sm, block, phase; };
int timeline_read(struct timeline_stamp *out, int most);

enum { MOST = 1 << 22 };

static void *random_halves(size_t n)
{
    uint16_t *h = malloc(n * sizeof *h);
    void *d = NULL;
    if (!h || cudaMalloc(&d, n * sizeof *h) != cudaSuccess)
        return free(h), NULL;
    for (size_t i = 0; i < n; i++)
        h[i] = float_to_half((float)rand() / (float)RAND_MAX * 2.0f - 1.0f);
    cudaMemcpy(d, h, n * sizeof *h, cudaMemcpyHostToDevice);
    free(h);
    return d;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s M N K\n", argv[0]);
        return 2;
    }
    const int M = atoi(argv[1]), N = atoi(argv[2]), K = atoi(argv[3]);
    void *A = random_halves((size_t)M * K), *B = random_halves((size_t)K * N);
    float *C = NULL;
    struct timeline_stamp *s = malloc(MOST * sizeof *s);
    if (!A || !B || !s || cudaMalloc((void **)&C, (size_t)M * N * sizeof *C) != cudaSuccess) {
        fprintf(stderr, "%s: out of memory for M=%d N=%d K=%d\n", argv[0], M, N, K);
        return 1;
    }
    int n = -1, err = gemm_launch(M, N, K, 1.0f, A, B, 0.0f, C); // the warm-up: memory, modules, clocks
    if (!err && timeline_read(s, MOST) >= 0 && !(err = gemm_launch(M, N, K, 1.0f, A, B, 0.0f, C)))
        n = timeline_read(s, MOST);
    if (err || n < 0) {
        err = err ? err : (int)cudaGetLastError();
        fprintf(stderr, "%s: %s\n", argv[0], cudaGetErrorString((cudaError_t)err));
        return 1;
    }
    unsigned long long t0 = n ? s[0].ns : 0;
    for (int i = 0; i < n; i++)
        t0 = s[i].ns < t0 ? s[i].ns : t0;
    for (int i = 0; i < n; i++)
        printf("%u %u %u %u %llu\n", s[i].sm, s[i].block, s[i].phase / 4, s[i].phase % 4, s[i].ns - t0);
    return 0;
}
