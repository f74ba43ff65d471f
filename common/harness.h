/*
 * The harness every step's main.c shares: GPU, data, check, timing, cuBLAS,
 * report. Plain C; nothing a learner needs to understand an optimization
 * lives here (that is all in each step's kernel.cu).
 */
#ifndef HARNESS_H
#define HARNESS_H

#include "check.h"
#include "gemm.h"
#include "options.h"

struct gpu {
    char name[256];
    int major, minor, sms;
    int runtime; /* CUDA runtime version, e.g. 13000 */
};

struct problem {
    struct gemm_data host; /* the inputs as the GPU sees them, for the check */
    enum input_type input;
    float *A, *B, *C0;     /* host buffers behind host; C0 NULL when beta == 0 */
    float *sa, *sb;        /* FP8: the scales, as gemm.h lays them out; else NULL */
    float *A_raw, *B_raw;  /* FP8: A and B (N x K) before quantizing, for the check's report; else NULL */
    void *dA, *dB;
    float *dsa, *dsb;      /* FP8: the scales on the GPU */
    float *dsb_lt;         /* FP8: B's as cuBLASLt reads them, each row of ceil(K/128) padded to a multiple of 4 */
    float *dC;             /* each opt->offset elements into its allocation: */
    void *dA0, *dB0, *dC0; /* the allocations, which cudaMalloc aligns */
    cudaStream_t stream;   /* where every run of the step and of cuBLAS is queued */
    void *flush;           /* --cold: what flush_l2 reads before each timed run; else NULL */
    size_t flush_bytes;
};

/* gemm_launch's signature, so cuBLAS can be run and timed the same way; and
 * gemm_fp8_launch's, for the FP8 step and cuBLASLt. */
typedef int (*gemm_fn)(int M, int N, int K, float alpha, const void *A, const void *B,
                       float beta, float *C, cudaStream_t stream);
typedef int (*gemm_fp8_fn)(int M, int N, int K, float alpha, const void *A, const float *sa,
                           const void *B, const float *sb, float beta, float *C, cudaStream_t stream);

struct timing {
    double median_ms, min_ms, max_ms;
    int warmup, runs;
    char launches[256]; /* with --launches, what one call launched (time_gemms); else empty */
    char kernels[256];  /* the kernels one call launched, by name, or "unknown" (CUPTI) */
    double host_us;     /* with --host, the CPU time of one call (median); else 0 */
    double tensor_ms;   /* FP8's yardstick: cuBLASLt with one scale per tensor (median; NaN: none); else 0 */
};

/* Picks GPU 0 and checks it can run this problem. Returns -1 to go on, or the
 * exit code 2 after one line on stderr: no GPU or no driver, a driver too old
 * for this CUDA runtime, a GPU older than the step's arch ("needs sm_80 ..."),
 * or too little host or GPU memory for the shape. */
int open_gpu(const struct step *step, const struct options *opt, struct gpu *gpu);

/* Seeded random A and B (rounded to half for half inputs; for FP8, blocks of
 * different sizes, quantized as gemm.h's FP8 call takes them, B N x K), and
 * C: random, or NaN when beta == 0 so that a kernel that reads it is caught.
 * Copies them to the GPU, and makes the stream the runs are queued on (and,
 * with --cold, the buffer that pushes A, B and C out of L2). */
void setup_problem(struct problem *p, const struct step *step, const struct options *opt);
void free_problem(struct problem *p);

/* Runs fn once on fresh C and checks the output (check.h says how); for
 * FP8, also how far it is from the product of A and B before quantizing. */
struct check_result check_gemm(const struct problem *p, gemm_fn fn);
struct check_result check_gemm_fp8(const struct problem *p, gemm_fp8_fn fn);

/* The yardstick for these inputs: cublasSgemm with FP32 math (no TF32) for
 * float, cublasGemmEx with half inputs and CUBLAS_COMPUTE_32F for half;
 * for FP8, cublasLtMatmul with the same scales (VEC128 for A, BLK128x128
 * for B), which returns cudaErrorNotSupported where cuBLASLt has no
 * algorithm for the shape (K a multiple of 16, for one): then the step
 * runs alone. */
gemm_fn cublas_gemm(enum input_type input);
gemm_fp8_fn cublas_gemm_fp8(void);

/* The step against the yardstick, interleaved so that slow drift
 * (temperature) reaches both alike: warm-up runs of each (at least
 * opt->warmup, and unless that is 0, WARMUP_SECONDS of them), then
 * opt->iters timed runs of each in PHASES phases, the step's and cuBLAS's in
 * turn (step, cuBLAS, cuBLAS, step), each phase's runs queued before the GPU starts them and each timed
 * by events; the median of each. A phase first runs its kernel untimed for
 * SETTLE_SECONDS: under its power limit the GPU sets its clock from the
 * power drawn over the last fraction of a second, so a kernel timed right
 * after another runs at the clock the other's power left (harness.c). With --cold, each timed run follows
 * flush_l2. Then the kernels one call of each launches, by name, and with
 * --host the CPU time of a call of each. */
void time_gemms(const struct problem *p, gemm_fn mine, gemm_fn theirs, const struct options *opt,
                struct timing *t_mine, struct timing *t_theirs);
void time_gemms_fp8(const struct problem *p, gemm_fp8_fn mine, gemm_fp8_fn theirs, const struct options *opt,
                    struct timing *t_mine, struct timing *t_theirs);

/* The report for people, then one machine-readable line of key=value pairs.
 * check is NULL after --no-check. */
void report(const struct step *step, const struct gpu *gpu, const struct options *opt,
            const struct timing *mine, const struct timing *cublas,
            const struct check_result *check);

#endif
