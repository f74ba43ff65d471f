/*
 * Deliberately wrong kernels, for the test suite only: linked with a step's
 * main.c in place of its kernel.cu, each must make the check report FAIL
 * and the program exit 1 (scripts/test.sh). A check that passes one of them
 * cannot be trusted with a real step.
 *
 * Built with -DWRONG=n and -DHALF=0 (float A and B, as steps 01-04 take) or
 * -DHALF=1 (half, as from step 05 on), or -DFP8=1 (gemm_fp8_launch's e4m3
 * with scales, B N x K, as step 16); one thread per element of C, right
 * but for one bug:
 *   1  skips one k-tile: the products k = 8 .. 15 (when K > 16);
 *   2  one element, C(M / 2, N / 2), off by 1;
 *   3  never writes one element, C(M - 1, N - 1);
 *   4  reads C when beta == 0 (the harness fills it with NaN then);
 *   5  C(0, 0) one ulp larger on every other call: inside the tolerance,
 *      but a second run on the same data does not give the same bits;
 *   6  (FP8) every block of K scaled with the first block's scales.
 */
#include "gemm.h"

#include <cuda_fp16.h>
#include <cuda_fp8.h>

extern "C" const long long gemm_max_elements = GEMM_MAX_ELEMENTS_32; // as the steps it stands in for

#ifndef FP8
#define FP8 0
#endif

#if FP8
typedef __nv_fp8_e4m3 input_t;
__device__ float value(input_t x) { return float(x); }
#elif HALF
typedef __half input_t;
__device__ float value(input_t x) { return __half2float(x); }
#else
typedef float input_t;
__device__ float value(input_t x) { return x; }
#endif

constexpr int SKIP_FROM = 8, SKIP_TO = 16; // the k-tile WRONG == 1 leaves out

__global__ void wrong_kernel(int M, int N, int K, float alpha, const input_t *A, const float *sa, const input_t *B,
                             const float *sb, float beta, float *C, int odd_call)
{
    const int r = blockIdx.y * blockDim.y + threadIdx.y, c = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= M || c >= N)
        return;
    if (WRONG == 3 && r == M - 1 && c == N - 1)
        return;
    float acc = 0.0f, part = 0.0f;
    for (int k = 0; k < K; ++k) {
        if (!(WRONG == 1 && K > SKIP_TO && k >= SKIP_FROM && k < SKIP_TO))
            part += value(A[r * K + k]) * value(B[FP8 ? (size_t)c * K + k : (size_t)k * N + c]);
        if (FP8 && (k % 128 == 127 || k == K - 1)) { // each block of 128 of K, times its scales (gemm.h)
            const int b = WRONG == 6 ? 0 : k / 128;
            acc += part * sa[b * M + r] * sb[c / 128 * ((K + 127) / 128) + b];
            part = 0.0f;
        }
    }
    if (!FP8)
        acc = part;
    if (WRONG == 2 && r == M / 2 && c == N / 2)
        acc += 1.0f;
    float v = beta == 0.0f && WRONG != 4 ? alpha * acc : alpha * acc + beta * C[r * N + c];
    if (WRONG == 5 && odd_call && r == 0 && c == 0)
        v = nextafterf(v, INFINITY);
    C[r * N + c] = v;
}

static int launch(int M, int N, int K, float alpha, const void *A, const float *sa, const void *B, const float *sb,
                  float beta, float *C, cudaStream_t stream)
{
    static int calls;
    const dim3 block(16, 16), grid((N + 15) / 16, (M + 15) / 16);
    wrong_kernel<<<grid, block, 0, stream>>>(M, N, K, alpha, (const input_t *)A, sa, (const input_t *)B, sb, beta, C,
                                             ++calls % 2);
    return cudaGetLastError();
}

#if FP8
extern "C" int gemm_fp8_launch(int M, int N, int K, float alpha, const void *A, const float *sa, const void *B,
                               const float *sb, float beta, float *C, cudaStream_t stream)
{
    return launch(M, N, K, alpha, A, sa, B, sb, beta, C, stream);
}
#else
extern "C" int gemm_launch(int M, int N, int K, float alpha, const void *A, const void *B,
                           float beta, float *C, cudaStream_t stream)
{
    return launch(M, N, K, alpha, A, nullptr, B, nullptr, beta, C, stream);
}
#endif
