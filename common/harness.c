#include "harness.h"

#include "half.h"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <dlfcn.h>
#if defined(__has_include)
#if __has_include(<cupti.h>)
#include <cupti.h> /* --launches; a toolkit without CUPTI builds every step all the same */
#define HAVE_CUPTI 1
#endif
#endif

static const char *prog = "gemm"; /* the step's name, for messages */

/* common/flush.cu: reads `bytes` of buffer on the stream, pushing out of L2 what was there. */
int flush_l2(const void *buffer, size_t bytes, cudaStream_t stream);

/* The timed runs come in PHASES phases of each kernel, the step's and
 * cuBLAS's in turn, in the order step, cuBLAS, cuBLAS, step (time_gemms). A
 * phase first runs its kernel untimed for SETTLE_SECONDS (at most
 * SETTLE_RUNS runs), so that the GPU's clock is the one this kernel's own
 * power draw allows, not the one the other kernel's left. A phase's timed
 * runs go to the GPU once the host has queued them all, or after
 * HOLD_SECONDS (hold). */
#define PHASES 2
#define SETTLE_SECONDS 0.2
#define SETTLE_RUNS 10000
#define HOLD_SECONDS 0.1

/* --cold: the buffer read before each timed run, this many times L2's size,
 * so that little of what was in L2 before stays there. */
#define FLUSH_L2_TIMES 2

#define CUDA_CHECK(call) cuda_check((call), #call, __FILE__, __LINE__)
#define CUBLAS_CHECK(call) cublas_check((call), #call, __FILE__, __LINE__)

static void cuda_check(cudaError_t err, const char *what, const char *file, int line)
{
    if (err == cudaSuccess)
        return;
    if (err == cudaErrorNoKernelImageForDevice || err == cudaErrorUnsupportedPtxVersion) {
        int dev = 0, major = 0, minor = 0;
        cudaGetDevice(&dev);
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
        fprintf(stderr, "%s: this build has no code for this GPU (sm_%d%d): rebuild with make ARCH=sm_%d%d\n",
                prog, major, minor, major, minor);
        exit(2);
    }
    fprintf(stderr, "%s: CUDA error %s (%s) in %s at %s:%d\n", prog, cudaGetErrorName(err),
            cudaGetErrorString(err), what, file, line);
    exit(err == cudaErrorMemoryAllocation ? 2 : 1);
}

static void cublas_check(cublasStatus_t st, const char *what, const char *file, int line)
{
    if (st == CUBLAS_STATUS_SUCCESS)
        return;
    fprintf(stderr, "%s: cuBLAS error %s (%s) in %s at %s:%d\n", prog, cublasGetStatusName(st),
            cublasGetStatusString(st), what, file, line);
    exit(st == CUBLAS_STATUS_ALLOC_FAILED ? 2 : 1);
}

static void *host_alloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "%s: out of host memory (%.2f GiB more needed)\n", prog,
                (double)bytes / (1u << 30));
        exit(2);
    }
    return p;
}

/* The bytes of --cold's flush buffer on device dev. */
static size_t flush_bytes(int dev)
{
    int l2 = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    return (size_t)FLUSH_L2_TIMES * (size_t)l2;
}

/* How the GPU sums a step's products: half inputs go to the tensor cores in
 * every step that takes them, as in cuBLAS GemmEx; float inputs to FFMA, as
 * in cuBLAS SGEMM; FP8 to the tensor cores' FP8 path, as in cuBLASLt. */
static enum summation summation(enum input_type input)
{
    return input == INPUT_E4M3 ? SUM_FP8 : input == INPUT_FP16 ? SUM_TRUNCATED : SUM_ROUNDED;
}

/* cuBLASLt's workspace for FP8 (cublas_fp8), made with the problem. */
#define LT_WORKSPACE_BYTES (32u << 20)

static int full_reference(int M, int N, int K)
{
    return (long long)M * N * K <= FULL_REFERENCE_MAX_MACS;
}

/* Host memory this process could still take, in bytes: MemAvailable where
 * Linux reports it, else the free physical pages. */
static double host_memory_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (f) {
        char line[256];
        unsigned long long kb = 0;
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
                break;
        fclose(f);
        if (kb)
            return 1024.0 * (double)kb;
    }
    return (double)sysconf(_SC_AVPHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
}

/* One line for a runtime that cannot start: the advice differs between no
 * driver, an old driver and no GPU. */
static int no_usable_gpu(cudaError_t err)
{
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    if (driver == 0)
        fprintf(stderr, "%s: no NVIDIA driver found: this machine has no NVIDIA GPU, or its "
                        "driver is not installed\n", prog);
    else if (err == cudaErrorInsufficientDriver || driver < runtime)
        fprintf(stderr, "%s: the NVIDIA driver is too old for CUDA %d.%d (it supports CUDA "
                        "%d.%d): update the driver\n", prog, runtime / 1000, runtime % 1000 / 10,
                driver / 1000, driver % 1000 / 10);
    else if (err == cudaErrorNoDevice || err == cudaSuccess)
        fprintf(stderr, "%s: no CUDA GPU found (the driver, CUDA %d.%d, sees none)\n", prog,
                driver / 1000, driver % 1000 / 10);
    else
        fprintf(stderr, "%s: the CUDA runtime cannot start: %s (%s)\n", prog,
                cudaGetErrorName(err), cudaGetErrorString(err));
    return 2;
}

int open_gpu(const struct step *step, const struct options *opt, struct gpu *gpu)
{
    prog = step->name;
    const double M = opt->M, N = opt->N, K = opt->K;
    const double in = input_bytes(step->input);
    const int full = full_reference(opt->M, opt->N, opt->K);

    /* Host: A and B as float (the reference reads them), the old C when beta
     * != 0, the half copies made for the upload, and the check's copies of
     * C (the kernel's, and cuBLAS's when the reference is sampled). */
    double host = 4.0 * (M * K + K * N) + (opt->beta != 0.0f ? 4.0 * M * N : 0.0);
    if (step->input == INPUT_FP16)
        host += 2.0 * (M * K > K * N ? M * K : K * N);
    if (step->input == INPUT_E4M3) /* A and B before quantizing, the e4m3 bytes, the scales */
        host += 5.0 * (M * K + K * N) + 4.0 * (M + N) * (K / 128 + 1);
    if (opt->check)
        host += 4.0 * M * N * (full ? 1 : 2) + 8.0 * (M + N);
    const double host_free = host_memory_available();
    if (host > 0.9 * host_free) {
        fprintf(stderr, "%s: M=%d N=%d K=%d needs %.2f GiB of host memory; %.2f GiB are "
                        "available\n", prog, opt->M, opt->N, opt->K, host / (1u << 30),
                host_free / (1u << 30));
        return 2;
    }

    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0)
        return no_usable_gpu(err);
    const int dev = 0;
    CUDA_CHECK(cudaSetDevice(dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&gpu->major, cudaDevAttrComputeCapabilityMajor, dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&gpu->minor, cudaDevAttrComputeCapabilityMinor, dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&gpu->sms, cudaDevAttrMultiProcessorCount, dev));
    CUDA_CHECK(cudaRuntimeGetVersion(&gpu->runtime));
    struct cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
    snprintf(gpu->name, sizeof gpu->name, "%s", prop.name);

    struct arch need;
    if (!parse_arch(step->arch, &need)) {
        fprintf(stderr, "%s: the step declares arch \"%s\", not of the form sm_75 or sm_90a\n",
                prog, step->arch);
        return 2;
    }
    if (!arch_runs_on(&need, gpu->major, gpu->minor)) {
        char words[128];
        describe_need(step->arch, words, sizeof words);
        fprintf(stderr, "%s: needs %s; GPU %d, %s, is %d.%d\n", prog, words, dev, gpu->name,
                gpu->major, gpu->minor);
        return 2;
    }

    /* Device: A, B and C; the comparison with cuBLAS reuses C. With --cold,
     * the buffer that flushes L2. */
    const double device = in * (M * K + K * N) + 4.0 * M * N + (2 * in + 4) * opt->offset +
                          (opt->cold ? (double)flush_bytes(dev) : 0.0) +
                          (step->input == INPUT_E4M3 ? 4.0 * (M + N) * (K / 128 + 1) + LT_WORKSPACE_BYTES : 0.0);
    size_t free_bytes = 0, total_bytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (device > 0.95 * (double)free_bytes) {
        fprintf(stderr, "%s: M=%d N=%d K=%d needs %.2f GiB of GPU memory; %s has %.2f GiB free\n",
                prog, opt->M, opt->N, opt->K, device / (1u << 30), gpu->name,
                (double)free_bytes / (1u << 30));
        return 2;
    }
    return -1;
}

static void upload(void *dst, const float *src, size_t n, enum input_type input)
{
    if (input == INPUT_FP32) {
        CUDA_CHECK(cudaMemcpy(dst, src, n * sizeof(float), cudaMemcpyHostToDevice));
        return;
    }
    uint16_t *h = host_alloc(n * sizeof *h);
    for (size_t i = 0; i < n; i++)
        h[i] = float_to_half(src[i]); /* exact: src already holds half values */
    CUDA_CHECK(cudaMemcpy(dst, h, n * sizeof *h, cudaMemcpyHostToDevice));
    free(h);
}

void setup_problem(struct problem *p, const struct step *step, const struct options *opt)
{
    const int M = opt->M, N = opt->N, K = opt->K;
    const size_t a_n = (size_t)M * K, b_n = (size_t)K * N, c_n = (size_t)M * N;
    const int to_half = step->input == INPUT_FP16;

    memset(p, 0, sizeof *p);
    p->input = step->input;
    p->A = host_alloc(a_n * sizeof(float));
    p->B = host_alloc(b_n * sizeof(float));
    uint64_t state = opt->seed;
    /* FP8: k-blocks of K, blocks of 128 of N; qa and qb the e4m3 bytes, p->A and p->B their values (check.h) */
    const size_t kb = (size_t)(K + 127) / 128, nb = (size_t)(N + 127) / 128;
    uint8_t *qa = NULL, *qb = NULL;
    if (p->input == INPUT_E4M3) {
        qa = host_alloc(a_n);
        qb = host_alloc(b_n);
        p->A_raw = host_alloc(a_n * sizeof(float));
        p->B_raw = host_alloc(b_n * sizeof(float));
        p->sa = host_alloc(kb * M * sizeof(float));
        p->sb = host_alloc(kb * nb * sizeof(float));
        fp8_inputs(M, N, K, &state, p->A_raw, p->B_raw, qa, qb, p->sa, p->sb, p->A, p->B);
    } else {
        fill_random(p->A, a_n, &state, to_half);
        fill_random(p->B, b_n, &state, to_half);
    }
    if (opt->beta != 0.0f) {
        p->C0 = host_alloc(c_n * sizeof(float));
        fill_random(p->C0, c_n, &state, 0);
    }

    p->host = (struct gemm_data){ M, N, K, opt->alpha, opt->beta, p->A, p->B, p->C0,
                                  summation(step->input), p->sa, p->sb };

    const size_t in = input_bytes(p->input), off = opt->offset;
    CUDA_CHECK(cudaMalloc(&p->dA0, (a_n + off) * in));
    CUDA_CHECK(cudaMalloc(&p->dB0, (b_n + off) * in));
    CUDA_CHECK(cudaMalloc(&p->dC0, (c_n + off) * sizeof(float)));
    p->dA = (char *)p->dA0 + off * in;
    p->dB = (char *)p->dB0 + off * in;
    p->dC = (float *)p->dC0 + off;
    if (qa) { /* FP8: the e4m3 bytes, B N x K, and the scales */
        const size_t sa_bytes = kb * M * sizeof(float), sb_bytes = kb * nb * sizeof(float);
        CUDA_CHECK(cudaMemcpy(p->dA, qa, a_n, cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemcpy(p->dB, qb, b_n, cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMalloc((void **)&p->dsa, sa_bytes ? sa_bytes : 1));
        CUDA_CHECK(cudaMalloc((void **)&p->dsb, sb_bytes ? sb_bytes : 1));
        CUDA_CHECK(cudaMemcpy(p->dsa, p->sa, sa_bytes, cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemcpy(p->dsb, p->sb, sb_bytes, cudaMemcpyHostToDevice));
        /* cuBLASLt reads the 128 x 128 blocks' scales with each row of
         * k-blocks padded to a multiple of 4: given gemm.h's rows, its C was
         * wrong wherever ceil(K/128) is not one (make test on the H200). */
        const size_t kb4 = (kb + 3) / 4 * 4;
        CUDA_CHECK(cudaMalloc((void **)&p->dsb_lt, kb4 * nb > 0 ? kb4 * nb * sizeof(float) : 1));
        CUDA_CHECK(cudaMemset(p->dsb_lt, 0, kb4 * nb * sizeof(float)));
        CUDA_CHECK(cudaMemcpy2D(p->dsb_lt, kb4 * sizeof(float), p->sb, kb * sizeof(float), kb * sizeof(float), nb,
                                cudaMemcpyHostToDevice));
        free(qa);
        free(qb);
    } else {
        upload(p->dA, p->A, a_n, p->input);
        upload(p->dB, p->B, b_n, p->input);
    }
    /* A stream of the program's own, not the default one; a blocking stream, so
     * that the plain cudaMemcpy and cudaMemset that set C before a check come
     * before the runs queued on it, and the runs before the copies of C back. */
    CUDA_CHECK(cudaStreamCreate(&p->stream));
    if (opt->cold) {
        int dev = 0;
        CUDA_CHECK(cudaGetDevice(&dev));
        p->flush_bytes = flush_bytes(dev);
        CUDA_CHECK(cudaMalloc(&p->flush, p->flush_bytes));
        CUDA_CHECK(cudaMemset(p->flush, 0x5a, p->flush_bytes)); /* read, never random: no value of it matters */
    }
}

void free_problem(struct problem *p)
{
    CUDA_CHECK(cudaFree(p->dA0));
    CUDA_CHECK(cudaFree(p->dB0));
    CUDA_CHECK(cudaFree(p->dC0));
    CUDA_CHECK(cudaFree(p->flush));
    CUDA_CHECK(cudaFree(p->dsa));
    CUDA_CHECK(cudaFree(p->dsb));
    CUDA_CHECK(cudaFree(p->dsb_lt));
    CUDA_CHECK(cudaStreamDestroy(p->stream));
    free(p->A);
    free(p->B);
    free(p->C0);
    free(p->sa);
    free(p->sb);
    free(p->A_raw);
    free(p->B_raw);
}

/* C before a checked run: the random C0, or all NaN (bytes 0xff) when
 * beta == 0, so a kernel that reads C anyway, or skips an element, shows. */
static void reset_c(const struct problem *p)
{
    const size_t bytes = (size_t)p->host.M * p->host.N * sizeof(float);
    if (p->C0)
        CUDA_CHECK(cudaMemcpy(p->dC, p->C0, bytes, cudaMemcpyHostToDevice));
    else
        CUDA_CHECK(cudaMemset(p->dC, 0xff, bytes));
}

/* What the harness runs: a step's call or cuBLAS's, with gemm.h's signature
 * (fn) or the FP8 one (fp8). */
struct kernel {
    gemm_fn fn;
    gemm_fp8_fn fp8;
    int lt; /* cuBLASLt's FP8: B's scales in its layout (dsb_lt); no algorithm for some shapes */
};

/* One call of k on the problem's data, queued on its stream; its return. */
static int call(const struct problem *p, const struct kernel *k)
{
    const struct gemm_data *d = &p->host;
    if (k->fp8)
        return k->fp8(d->M, d->N, d->K, d->alpha, p->dA, p->dsa, p->dB, k->lt ? p->dsb_lt : p->dsb, d->beta, p->dC,
                      p->stream);
    return k->fn(d->M, d->N, d->K, d->alpha, p->dA, p->dB, d->beta, p->dC, p->stream);
}

/* Runs k once on fresh C and copies C to out. Returns 1, or 0 where k is
 * cuBLASLt's FP8 with no algorithm for the shape, which runs nothing. */
static int run_once(const struct problem *p, const struct kernel *k, float *out)
{
    const struct gemm_data *d = &p->host;
    reset_c(p);
    const int err = call(p, k);
    if (err == cudaErrorNotSupported && k->lt)
        return 0;
    CUDA_CHECK((cudaError_t)err);
    CUDA_CHECK(cudaStreamSynchronize(p->stream));
    CUDA_CHECK(cudaMemcpy(out, p->dC, (size_t)d->M * d->N * sizeof(float),
                          cudaMemcpyDeviceToHost));
    return 1;
}

/* FP8: what the format costs, for the report: got against the product of A
 * and B before quantizing (alpha and beta as the run's), the r.m.s. of the
 * difference over that product's r.m.s., on a few rows. */
static double unquantized_error(const struct problem *p, const float *got)
{
    const struct gemm_data *d = &p->host;
    int rows[SAMPLE_FEW_MAX];
    const int n = sample_few(d->M, 3, rows);
    double err = 0.0, size = 0.0;
    for (int r = 0; r < n; r++)
        for (int j = 0; j < d->N; j++) {
            const int i = rows[r];
            double want = 0.0;
            for (int k = 0; k < d->K; k++)
                want += (double)p->A_raw[(size_t)i * d->K + k] * p->B_raw[(size_t)j * d->K + k];
            want = d->alpha * want + (p->C0 ? (double)d->beta * p->C0[(size_t)i * d->N + j] : 0.0);
            const double e = got[(size_t)i * d->N + j] - want;
            err += e * e, size += want * want;
        }
    return size > 0.0 ? sqrt(err / size) : 0.0;
}

/* Every index of an n-long side. */
static int all_indices(int n, int *idx)
{
    for (int i = 0; i < n; i++)
        idx[i] = i;
    return n;
}

static struct check_result check_kernel(const struct problem *p, const struct kernel *k, const struct kernel *yardstick)
{
    const struct gemm_data *d = &p->host;
    struct check_result r = { 0 };

    float *got = host_alloc((size_t)d->M * d->N * sizeof(float));
    run_once(p, k, got);
    count_nonfinite(d, got, &r);
    float *again = host_alloc((size_t)d->M * d->N * sizeof(float));
    run_once(p, k, again);
    count_changed(d, got, again, &r);
    free(again);

    double *a_norm = host_alloc(norms_size(d, d->M) * sizeof(double));
    double *b_norm = host_alloc(norms_size(d, d->N) * sizeof(double));
    compute_norms(d, a_norm, b_norm);

    int *rows = host_alloc((size_t)d->M * sizeof(int));
    int *cols = host_alloc((size_t)d->N * sizeof(int));
    if (full_reference(d->M, d->N, d->K)) {
        check_reference(d, a_norm, b_norm, got, rows, all_indices(d->M, rows), cols,
                        all_indices(d->N, cols), &r);
    } else {
        /* Every tile edge of C in both directions (check.h), then all of C
         * against cuBLAS on the same data. */
        int few[SAMPLE_FEW_MAX];
        check_reference(d, a_norm, b_norm, got, rows, sample_edges(d->M, rows), few,
                        sample_few(d->N, 2, few), &r);
        check_reference(d, a_norm, b_norm, got, few, sample_few(d->M, 1, few), cols,
                        sample_edges(d->N, cols), &r);

        float *other = host_alloc((size_t)d->M * d->N * sizeof(float));
        if (run_once(p, yardstick, other))
            check_other(d, a_norm, b_norm, got, other, &r);
        free(other);
    }
    if (p->A_raw)
        r.unquantized = unquantized_error(p, got);
    free(rows);
    free(cols);
    free(a_norm);
    free(b_norm);
    free(got);
    check_verdict(&r);
    return r;
}

struct check_result check_gemm(const struct problem *p, gemm_fn fn)
{
    const struct kernel k = { fn, NULL, 0 }, yardstick = { cublas_gemm(p->input), NULL, 0 };
    return check_kernel(p, &k, &yardstick);
}

struct check_result check_gemm_fp8(const struct problem *p, gemm_fp8_fn fn)
{
    const struct kernel k = { NULL, fn, 0 }, yardstick = { NULL, cublas_gemm_fp8(), 1 };
    return check_kernel(p, &k, &yardstick);
}

static cublasHandle_t cublas_handle(void)
{
    static cublasHandle_t handle;
    if (!handle) {
        CUBLAS_CHECK(cublasCreate(&handle));
        /* The FP32 yardstick is true FP32: no TF32 tensor-core shortcut. */
        CUBLAS_CHECK(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
    }
    return handle;
}

/* cuBLAS is column-major. A row-major M x N matrix is the column-major
 * N x M matrix of its transpose, and C^T = B^T A^T, so swapping the operands
 * computes the row-major product with no transposes at all. */
static int cublas_fp32(int M, int N, int K, float alpha, const void *A, const void *B,
                       float beta, float *C, cudaStream_t stream)
{
    CUBLAS_CHECK(cublasSetStream(cublas_handle(), stream));
    CUBLAS_CHECK(cublasSgemm(cublas_handle(), CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha,
                             (const float *)B, N, (const float *)A, K, &beta, C, N));
    return cudaSuccess;
}

static int cublas_fp16(int M, int N, int K, float alpha, const void *A, const void *B,
                       float beta, float *C, cudaStream_t stream)
{
    CUBLAS_CHECK(cublasSetStream(cublas_handle(), stream));
    CUBLAS_CHECK(cublasGemmEx(cublas_handle(), CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha,
                              B, CUDA_R_16F, N, A, CUDA_R_16F, K, &beta, C, CUDA_R_32F, N,
                              CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    return cudaSuccess;
}

gemm_fn cublas_gemm(enum input_type input)
{
    cublas_handle(); /* created here, outside any timed region */
    return input == INPUT_FP16 ? cublas_fp16 : cublas_fp32;
}

static cublasLtHandle_t lt_handle;
static void *lt_workspace;

/* cuBLASLt's FP8. Column-major, as cuBLAS: C^T = B A^T, its A our B (K x N
 * column-major, read transposed: N x K), its B our A (K x M), its D our C
 * (N x M, column-major). With block scales (the yardstick), its A takes B's
 * 128 x 128 blocks' scales and its B A's 1 x 128 runs', in gemm.h's layouts
 * (found by comparing with a CPU sum on an H200); per tensor, each takes its
 * first scale alone. A plan (the heuristic's first algorithm) is made on a
 * shape's first call, untimed, and kept, one for each scaling. */
static int lt_fp8(int per_tensor, int M, int N, int K, float alpha, const void *A, const float *sa, const void *B,
                  const float *sb, float beta, float *C, cudaStream_t stream)
{
    /* The heuristic takes operands 256-byte aligned unless told: tell it. */
    uint32_t align[3] = { 256, 256, 256 }; /* its A (our B), its B (our A), C */
    const uintptr_t at[3] = { (uintptr_t)B, (uintptr_t)A, (uintptr_t)C };
    for (int i = 0; i < 3; i++)
        while (at[i] % align[i])
            align[i] /= 2;
    static struct lt_plan {
        int M, N, K, found;
        uint32_t align[3];
        cublasLtMatmulDesc_t op;
        cublasLtMatrixLayout_t a, b, c;
        cublasLtMatmulAlgo_t algo;
    } plans[2] = { { .M = -1 }, { .M = -1 } };
    struct lt_plan *plan = &plans[per_tensor];
    if (plan->M != M || plan->N != N || plan->K != K || memcmp(plan->align, align, sizeof align)) {
        if (plan->M >= 0) {
            cublasLtMatmulDescDestroy(plan->op);
            cublasLtMatrixLayoutDestroy(plan->a);
            cublasLtMatrixLayoutDestroy(plan->b);
            cublasLtMatrixLayoutDestroy(plan->c);
        }
        plan->M = M, plan->N = N, plan->K = K;
        memcpy(plan->align, align, sizeof align);
        const cublasOperation_t t = CUBLAS_OP_T, n = CUBLAS_OP_N;
        const int32_t scalar = CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F,
                      blocks = per_tensor ? scalar : CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F,
                      runs = per_tensor ? scalar : CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
        const size_t workspace = LT_WORKSPACE_BYTES;
        cublasLtMatmulPreference_t pref;
        cublasLtMatmulHeuristicResult_t heuristic;
        int count = 0;
        CUBLAS_CHECK(cublasLtMatmulDescCreate(&plan->op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
        CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t));
        CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_TRANSB, &n, sizeof n));
        CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &blocks, sizeof blocks));
        CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &runs, sizeof runs));
        /* The heuristic finds no algorithm for block scales without their pointers. */
        CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sb, sizeof sb));
        CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sa, sizeof sa));
        CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
        CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                                          sizeof workspace));
        const cublasLtMatmulPreferenceAttributes_t aligns[4] = {
            CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
            CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES
        };
        for (int i = 0; i < 4; i++)
            CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, aligns[i], &align[i < 3 ? i : 2], sizeof align[0]));
        /* A layout cuBLASLt refuses (a side of 0, a leading dimension it cannot take) has no algorithm. */
        plan->found = cublasLtMatrixLayoutCreate(&plan->a, CUDA_R_8F_E4M3, K, N, K) == CUBLAS_STATUS_SUCCESS &&
                      cublasLtMatrixLayoutCreate(&plan->b, CUDA_R_8F_E4M3, K, M, K) == CUBLAS_STATUS_SUCCESS &&
                      cublasLtMatrixLayoutCreate(&plan->c, CUDA_R_32F, N, M, N) == CUBLAS_STATUS_SUCCESS &&
                      cublasLtMatmulAlgoGetHeuristic(lt_handle, plan->op, plan->a, plan->b, plan->c, plan->c, pref, 1,
                                                     &heuristic, &count) == CUBLAS_STATUS_SUCCESS &&
                      count > 0;
        if (plan->found)
            plan->algo = heuristic.algo;
        cublasLtMatmulPreferenceDestroy(pref);
    }
    if (!plan->found)
        return cudaErrorNotSupported;
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sb, sizeof sb));
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sa, sizeof sa));
    CUBLAS_CHECK(cublasLtMatmul(lt_handle, plan->op, &alpha, B, plan->a, A, plan->b, &beta, C, plan->c, C, plan->c,
                                &plan->algo, lt_workspace, LT_WORKSPACE_BYTES, stream));
    return cudaSuccess;
}

static int cublas_fp8(int M, int N, int K, float alpha, const void *A, const float *sa, const void *B,
                      const float *sb, float beta, float *C, cudaStream_t stream)
{
    return lt_fp8(0, M, N, K, alpha, A, sa, B, sb, beta, C, stream);
}

static int cublas_fp8_tensor(int M, int N, int K, float alpha, const void *A, const float *sa, const void *B,
                             const float *sb, float beta, float *C, cudaStream_t stream)
{
    return lt_fp8(1, M, N, K, alpha, A, sa, B, sb, beta, C, stream);
}

gemm_fp8_fn cublas_gemm_fp8(void)
{
    if (!lt_handle) { /* made here, outside any timed region */
        CUBLAS_CHECK(cublasLtCreate(&lt_handle));
        CUDA_CHECK(cudaMalloc(&lt_workspace, LT_WORKSPACE_BYTES));
    }
    return cublas_fp8;
}

static const char *cublas_label(enum input_type input)
{
    return input == INPUT_E4M3   ? "cublasLtMatmul, e4m3 in with the same scales, fp32 out"
           : input == INPUT_FP16 ? "cublasGemmEx, fp16 in, fp32 out, CUBLAS_COMPUTE_32F"
                                 : "cublasSgemm, FP32 math (no TF32)";
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median, least and most of n times, which it sorts. */
static struct timing summarize(double *ms, int n, int warmup)
{
    qsort(ms, (size_t)n, sizeof *ms, cmp_double);
    return (struct timing){ .median_ms = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]),
                            .min_ms = ms[0], .max_ms = ms[n - 1], .warmup = warmup, .runs = n };
}

static double seconds_since(const struct timespec *start)
{
    struct timespec now;
    timespec_get(&now, TIME_UTC);
    return (double)(now.tv_sec - start->tv_sec) + 1e-9 * (double)(now.tv_nsec - start->tv_nsec);
}

/* Run on the stream by the CUDA runtime's own thread: holds the stream
 * until *queued is raised, or HOLD_SECONDS have passed. A call that waits
 * for the stream itself (a first call that allocates memory, with
 * --warmup 0) then waits that long, and nothing hangs. */
static void CUDART_CB hold(void *queued)
{
    struct timespec start;
    timespec_get(&start, TIME_UTC);
    while (!atomic_load((atomic_int *)queued) && seconds_since(&start) < HOLD_SECONDS)
        ;
}

/* What one call of fn launches, as the driver is asked for it (CUPTI's
 * callbacks on cuLaunchKernel and cuLaunchKernelEx): each kernel's name, and
 * its launch written BLOCKSxTHREADS/cCLUSTER/sSHARED_BYTES, each joined by
 * "+". Two steps whose launches at a shape are the same run the same
 * schedule; their times differ by noise (scripts/run_all.sh marks them); the
 * names say which of cuBLAS's kernels it timed. "unknown" where CUPTI cannot
 * watch: not installed, or another tool holds it (ncu, for one). CUPTI is
 * loaded only here (dlopen), so that nothing else needs it. */
#ifdef HAVE_CUPTI
struct launch_text { char *text, *names; size_t size, names_size; };

static void CUPTIAPI note_launch(void *user, CUpti_CallbackDomain domain, CUpti_CallbackId id, const void *info)
{
    const CUpti_CallbackData *call = info;
    struct launch_text *out = user;
    (void)domain;
    if (call->callbackSite != CUPTI_API_ENTER)
        return;
    unsigned blocks, threads, cluster = 1, shared;
    if (id == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel || id == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz) {
        const cuLaunchKernel_params *k = call->functionParams;
        blocks = k->gridDimX * k->gridDimY * k->gridDimZ;
        threads = k->blockDimX * k->blockDimY * k->blockDimZ;
        shared = k->sharedMemBytes;
    } else {
        const CUlaunchConfig *c = ((const cuLaunchKernelEx_params *)call->functionParams)->config;
        blocks = c->gridDimX * c->gridDimY * c->gridDimZ;
        threads = c->blockDimX * c->blockDimY * c->blockDimZ;
        shared = c->sharedMemBytes;
        for (unsigned i = 0; i < c->numAttrs; i++)
            if (c->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
                cluster = c->attrs[i].value.clusterDim.x * c->attrs[i].value.clusterDim.y *
                          c->attrs[i].value.clusterDim.z;
    }
    size_t used = strlen(out->text);
    snprintf(out->text + used, out->size - used, "%s%ux%u/c%u/s%u", used ? "+" : "", blocks, threads, cluster,
             shared);
    used = strlen(out->names);
    snprintf(out->names + used, out->names_size - used, "%s%s", used ? "+" : "",
             call->symbolName ? call->symbolName : "?");
}

static void record_launches(const struct problem *p, const struct kernel *k, struct timing *t)
{
    static const CUpti_CallbackId IDS[] = { CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
                                            CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
                                            CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
                                            CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz };
    CUptiResult (*subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *) = NULL;
    CUptiResult (*enable)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId) = NULL;
    CUptiResult (*unsubscribe)(CUpti_SubscriberHandle) = NULL;
    char name[32];
    snprintf(name, sizeof name, "libcupti.so.%d", CUDART_VERSION / 1000); /* the runtime's own CUPTI */
    void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        lib = dlopen("libcupti.so", RTLD_NOW | RTLD_LOCAL);
    if (lib) { /* POSIX's way to a function from dlsym */
        *(void **)&subscribe = dlsym(lib, "cuptiSubscribe");
        *(void **)&enable = dlsym(lib, "cuptiEnableCallback");
        *(void **)&unsubscribe = dlsym(lib, "cuptiUnsubscribe");
    }
    struct launch_text out = { t->launches, t->kernels, sizeof t->launches, sizeof t->kernels };
    CUpti_SubscriberHandle watch;
    t->launches[0] = t->kernels[0] = '\0';
    const int subscribed = subscribe && enable && unsubscribe && subscribe(&watch, note_launch, &out) == CUPTI_SUCCESS;
    int ok = subscribed;
    for (size_t i = 0; ok && i < sizeof IDS / sizeof IDS[0]; i++)
        ok = enable(1, watch, CUPTI_CB_DOMAIN_DRIVER_API, IDS[i]) == CUPTI_SUCCESS;
    if (ok) {
        CUDA_CHECK((cudaError_t)call(p, k));
        CUDA_CHECK(cudaStreamSynchronize(p->stream));
    }
    if (subscribed)
        unsubscribe(watch);
    if (!ok || !t->launches[0]) {
        snprintf(t->launches, sizeof t->launches, "unknown");
        snprintf(t->kernels, sizeof t->kernels, "unknown");
    }
}
#else
static void record_launches(const struct problem *p, const struct kernel *k, struct timing *t)
{
    (void)p, (void)k;
    snprintf(t->launches, sizeof t->launches, "unknown");
    snprintf(t->kernels, sizeof t->kernels, "unknown");
}
#endif

/* --host: the CPU time of each call, the step's and cuBLAS's in turn, n of
 * each, while hold keeps the stream from starting them: each call only
 * queues its work, as in a program whose GPU is busy with work before it.
 * The median of each, in microseconds. */
static void time_host(const struct problem *p, const struct kernel k[2], int kinds, int n, double us[2])
{
    double *t = host_alloc(2 * (size_t)n * sizeof *t);
    atomic_int queued;
    atomic_init(&queued, 0);
    CUDA_CHECK(cudaLaunchHostFunc(p->stream, hold, &queued));
    for (int i = 0; i < n; i++)
        for (int f = 0; f < kinds; f++) {
            struct timespec start;
            timespec_get(&start, TIME_UTC);
            const int err = call(p, &k[f]);
            t[f * n + i] = 1e6 * seconds_since(&start);
            CUDA_CHECK((cudaError_t)err);
        }
    atomic_store(&queued, 1);
    CUDA_CHECK(cudaStreamSynchronize(p->stream));
    for (int f = 0; f < kinds; f++)
        us[f] = summarize(t + f * n, n, 0).median_ms; /* the median, in the unit it was given */
    free(t);
}

static void time_kernels(const struct problem *p, const struct kernel k[2], const struct options *opt,
                         struct timing *t_mine, struct timing *t_theirs)
{
    const int n = opt->iters;
    /* A yardstick with no algorithm for the shape (cuBLASLt's FP8 where K is
     * not a multiple of 16, for one) is left out, and the step runs alone;
     * so is none at all (k[1] empty). */
    int kinds = k[1].fn || k[1].fp8 ? 2 : 1;
    if (kinds == 2 && k[1].lt) {
        const int err = call(p, &k[1]);
        if (err == cudaErrorNotSupported)
            kinds = 1;
        else
            CUDA_CHECK((cudaError_t)err);
    }

    /* Warm-up: at least opt->warmup runs of each and, unless that is 0,
     * WARMUP_SECONDS of them. Under a sustained load the GPU lowers its
     * clock to stay within its power limit, in well under that time, and
     * keeps it there; timed from a cold start, some processes would catch
     * the higher clock and some the lower one, and the two kernels do not
     * lose the same share to it (README, "How it is measured"). */
    struct timespec start;
    timespec_get(&start, TIME_UTC);
    int warmup = 0;
    for (double elapsed = 0.0; warmup < opt->warmup || (opt->warmup > 0 && elapsed < WARMUP_SECONDS);
         warmup++) {
        for (int f = 0; f < kinds; f++)
            CUDA_CHECK((cudaError_t)call(p, &k[f]));
        CUDA_CHECK(cudaStreamSynchronize(p->stream)); /* so that the host's clock follows the GPU */
        elapsed = seconds_since(&start);
    }

    /* Each kernel's settling runs: SETTLE_SECONDS of them, from the time of
     * one run; none with --warmup 0. */
    cudaEvent_t *ev = host_alloc(4 * (size_t)n * sizeof *ev);
    for (int i = 0; i < 4 * n; i++)
        CUDA_CHECK(cudaEventCreate(&ev[i]));
    int settle[2] = { 0, 0 };
    for (int f = 0; f < kinds && opt->warmup > 0; f++) {
        float e;
        CUDA_CHECK(cudaEventRecord(ev[0], p->stream));
        CUDA_CHECK((cudaError_t)call(p, &k[f]));
        CUDA_CHECK(cudaEventRecord(ev[1], p->stream));
        CUDA_CHECK(cudaEventSynchronize(ev[1]));
        CUDA_CHECK(cudaEventElapsedTime(&e, ev[0], ev[1]));
        const double runs = SETTLE_SECONDS / (e > 0.0f ? 1e-3 * e : 1e-6);
        settle[f] = runs < 1.0 ? 1 : runs > SETTLE_RUNS ? SETTLE_RUNS : (int)runs;
    }

    /* The timed runs, PHASES phases of each kernel in turn, the second pair
     * in the reverse order (step, cuBLAS, cuBLAS, step), so that slow drift
     * (the die warming over the process) reaches both alike: with either
     * kernel always first, it ran on the cooler die (results/README.md, the
     * baseline). Within a phase, the settling runs, then the phase's share of
     * the timed runs back to back, each between two events, read after the
     * last: no host round trip between runs, and each run timed on its own
     * for the median.
     * Settling, the clock comes to the one this kernel's own power draw
     * allows: timed right after the other kernel, cuBLAS ran 5% slower at
     * 3000^3 beside the step that drew the most power than beside the one
     * that drew the least (results/README.md, the baseline).
     * A timed run follows a run of its own kernel (warm), or flush_l2
     * (--cold): what the kernel before it leaves behind (L2's lines, C's
     * writes still draining, the clock) is its own, whichever step runs
     * beside it. The GPU starts a phase's timed runs once the host has queued
     * them all (hold): runs shorter than the host's calls that queue them (a
     * few microseconds: 512^3) would otherwise leave the GPU idle between them. */
    double *ms = host_alloc(2 * (size_t)n * sizeof *ms);
    atomic_int *queued = host_alloc(2 * PHASES * sizeof *queued);
    for (int phase = 0, done[2] = { 0, 0 }; phase < PHASES; phase++)
        for (int g = 0; g < 2; g++) {
            const int f = phase % 2 ? 1 - g : g, count = n / PHASES + (phase < n % PHASES);
            if (count == 0 || f >= kinds)
                continue;
            for (int i = 0; i < settle[f]; i++)
                CUDA_CHECK((cudaError_t)call(p, &k[f]));
            atomic_int *q = &queued[2 * phase + f];
            atomic_init(q, 0);
            CUDA_CHECK(cudaLaunchHostFunc(p->stream, hold, q));
            for (int i = done[f]; i < done[f] + count; i++) {
                if (opt->cold)
                    CUDA_CHECK((cudaError_t)flush_l2(p->flush, p->flush_bytes, p->stream));
                CUDA_CHECK(cudaEventRecord(ev[2 * (f * n + i)], p->stream));
                CUDA_CHECK((cudaError_t)call(p, &k[f]));
                CUDA_CHECK(cudaEventRecord(ev[2 * (f * n + i) + 1], p->stream));
            }
            done[f] += count;
            atomic_store(q, 1);
        }
    CUDA_CHECK(cudaStreamSynchronize(p->stream));
    for (int i = 0; i < kinds * n; i++) {
        float e;
        CUDA_CHECK(cudaEventElapsedTime(&e, ev[2 * i], ev[2 * i + 1]));
        ms[i] = e;
    }
    for (int i = 0; i < 4 * n; i++)
        CUDA_CHECK(cudaEventDestroy(ev[i]));

    *t_mine = summarize(ms, n, warmup);
    if (opt->launches)
        record_launches(p, &k[0], t_mine);
    if (kinds == 2) {
        *t_theirs = summarize(ms + n, n, warmup);
        record_launches(p, &k[1], t_theirs); /* the names of cuBLAS's kernels, always */
    } else {
        *t_theirs = (struct timing){ .median_ms = NAN, .min_ms = NAN, .max_ms = NAN };
        snprintf(t_theirs->kernels, sizeof t_theirs->kernels, "none (no algorithm for this shape)");
    }
    if (opt->host) {
        double us[2] = { 0.0, NAN };
        time_host(p, k, kinds, n, us);
        t_mine->host_us = us[0], t_theirs->host_us = us[1];
    }
    free(ev);
    free(ms);
    free(queued);
}

void time_gemms(const struct problem *p, gemm_fn mine, gemm_fn theirs, const struct options *opt,
                struct timing *t_mine, struct timing *t_theirs)
{
    const struct kernel k[2] = { { mine, NULL, 0 }, { theirs, NULL, 0 } };
    time_kernels(p, k, opt, t_mine, t_theirs);
}

/* With the pair timed, cuBLASLt's FP8 with one scale per tensor, timed the
 * same way alone, for information: the product with no block scales' work
 * (its C is not the step's). NaN where it has no algorithm. */
void time_gemms_fp8(const struct problem *p, gemm_fp8_fn mine, gemm_fp8_fn theirs, const struct options *opt,
                    struct timing *t_mine, struct timing *t_theirs)
{
    const struct kernel k[2] = { { NULL, mine, 0 }, { NULL, theirs, 1 } },
                        tensor[2] = { { NULL, cublas_fp8_tensor, 1 }, { NULL, NULL, 0 } };
    time_kernels(p, k, opt, t_mine, t_theirs);
    t_theirs->tensor_ms = NAN;
    const int err = call(p, &tensor[0]);
    if (err != cudaErrorNotSupported) {
        CUDA_CHECK((cudaError_t)err);
        struct options quiet = *opt;
        quiet.launches = quiet.host = 0;
        struct timing t, none;
        time_kernels(p, tensor, &quiet, &t, &none);
        t_theirs->tensor_ms = t.median_ms;
    }
}

static double tflops(const struct options *opt, double ms)
{
    return 2.0 * opt->M * opt->N * opt->K / (ms * 1e-3) / 1e12;
}

void report(const struct step *step, const struct gpu *gpu, const struct options *opt,
            const struct timing *mine, const struct timing *cublas,
            const struct check_result *check)
{
    const int fp16 = step->input == INPUT_FP16, fp8 = step->input == INPUT_E4M3;
    const double pct = 100.0 * cublas->median_ms / mine->median_ms; /* NaN where cuBLAS did not run */

    printf("%s: C = alpha * A x B%s + beta * C\n", step->name, fp8 ? "ᵀ, A and B scaled by blocks" : "");
    printf("  GPU        %s (sm_%d%d, %d SMs), CUDA runtime %d.%d\n", gpu->name, gpu->major,
           gpu->minor, gpu->sms, gpu->runtime / 1000, gpu->runtime % 1000 / 10);
    printf("  shape      M=%d N=%d K=%d, alpha=%g beta=%g", opt->M, opt->N, opt->K, opt->alpha,
           opt->beta);
    if (opt->offset)
        printf(", A, B and C %d elements past aligned addresses", opt->offset);
    printf("\n");
    printf("  precision  A, B %s; accumulate fp32; C fp32\n",
           fp8 ? "e4m3 (FP8), scales fp32: A's per 1 x 128, B's per 128 x 128"
               : fp16 ? "fp16 (IEEE binary16)" : "fp32");
    printf("  kernel     %9.3f ms %8.2f TFLOPS   median of %d runs after %d warm-up (min %.3f, max %.3f)\n",
           mine->median_ms, tflops(opt, mine->median_ms), mine->runs, mine->warmup,
           mine->min_ms, mine->max_ms);
    if (cublas->runs) {
        printf("  cuBLAS     %9.3f ms %8.2f TFLOPS   %s, same data, phases alternating\n",
               cublas->median_ms, tflops(opt, cublas->median_ms), cublas_label(step->input));
        printf("  vs cuBLAS  %.1f %%\n", pct);
    } else {
        printf("  cuBLAS     not run: %s has no algorithm for this shape\n", cublas_label(step->input));
    }
    if (fp8)
        printf("  per tensor %9.3f ms %8.2f TFLOPS   cublasLtMatmul, e4m3 in with one scale per tensor: "
               "information, the product without block scales\n",
               cublas->tensor_ms, tflops(opt, cublas->tensor_ms));
    printf("  timed      %s\n", opt->cold ? "cold: each run after a read of twice L2's size, A, B and C out of L2"
                                           : "warm: each run after runs of itself, A and B in L2 where they fit");
    printf("  cuBLAS ran %s\n", cublas->kernels);
    if (opt->launches)
        printf("  launches   %s (per kernel: blocks x threads / cluster / shared bytes)\n", mine->launches);
    if (opt->host)
        printf("  host       %.1f us per call of gemm_launch, %.1f us of cuBLAS (CPU time, median of %d, "
               "queued while the GPU is busy)\n", mine->host_us, cublas->host_us, mine->runs);
    if (!check) {
        printf("  check      skipped (--no-check)\n");
    } else {
        printf("  check      %s: worst error %.3g of tolerance (%.3g absolute) on %lld elements vs a CPU reference in double",
               check->pass ? "PASS" : "FAIL", check->ref_worst, check->ref_worst_err,
               check->ref_count);
        if (check->blas_count)
            printf("; %.3g of tolerance on all %lld vs cuBLAS", check->blas_worst,
                   check->blas_count);
        printf("\n");
        if (check->nonfinite)
            printf("  check      FAIL: %lld elements are NaN or Inf\n", check->nonfinite);
        if (check->changed)
            printf("  check      FAIL: %lld elements differ in a second run on the same data\n",
                   check->changed);
        if (fp8)
            printf("  FP8 costs  %.3g: the r.m.s. error against the product before quantizing, over its r.m.s.\n",
                   check->unquantized);
        const long long limit = check_power_limit(summation(step->input));
        if (opt->K >= limit)
            printf("  check      blind spot: from K = %lld on (%s sums), a result missing 8\n"
                   "             consecutive products passes for most elements: rounding\n"
                   "             is as large (common/check.c, check_power_limit)\n",
                   limit, fp8 ? "FP8 tensor-core" : fp16 ? "tensor-core" : "float");
    }

    char gpu_name[sizeof gpu->name];
    snprintf(gpu_name, sizeof gpu_name, "%s", gpu->name);
    for (char *c = gpu_name; *c; c++)
        if (*c == ' ')
            *c = '_';
    const double worst = !check ? 0.0 : check->blas_worst > check->ref_worst ? check->blas_worst
                                                                             : check->ref_worst;
    printf("step=%s precision=%s m=%d n=%d k=%d alpha=%g beta=%g offset=%d cold=%d ms=%.4f tflops=%.2f "
           "cublas_ms=%.4f cublas_tflops=%.2f pct_cublas=%.1f check=%s worst=%.3g "
           "gpu=%s sm=%d%d cuda=%d.%d cublas_kernel=%s",
           step->name, fp8 ? "e4m3" : fp16 ? "fp16" : "fp32", opt->M, opt->N, opt->K, opt->alpha, opt->beta,
           opt->offset, opt->cold, mine->median_ms, tflops(opt, mine->median_ms), cublas->median_ms,
           tflops(opt, cublas->median_ms), pct, !check ? "SKIP" : check->pass ? "PASS" : "FAIL",
           worst, gpu_name, gpu->major, gpu->minor, gpu->runtime / 1000,
           gpu->runtime % 1000 / 10, cublas->kernels);
    if (fp8)
        printf(" tensor_ms=%.4f", cublas->tensor_ms);
    if (opt->host)
        printf(" host_us=%.2f cublas_host_us=%.2f", mine->host_us, cublas->host_us);
    if (opt->launches)
        printf(" launches=%s", mine->launches);
    printf("\n");
}
