/*
 * ceilings: the rates that bound the steps, measured on the GPU at hand
 * (make ceilings). Each is a loop that does nothing but one instruction or
 * one kind of memory traffic:
 *
 *   fma        FP32 FFMA, the instruction of steps 01-04
 *   mma        mma.sync m16n8k16, half in, float sums: steps 05-07 (two
 *              m16n8k8 on Turing; step 05's WMMA compiles to the same HMMA)
 *   wgmma      wgmma m64n256k16 from shared memory, half in, float sums:
 *              steps 08 and up (sm_90a)
 *   wgmma_fp8  the same with e4m3 inputs, m64n256k32 (sm_90a)
 *   hbm_read   bytes read from device memory: a buffer many times L2's size,
 *              read once, 16 bytes a thread at a time
 *   hbm_write  bytes written to it the same way
 *   l2_read    bytes read again and again from a buffer a quarter of L2's
 *              size, which stays in L2 (ld.global.cg: past L1)
 *
 * Timed as the steps are: WARMUP_SECONDS of runs first, so that the clock
 * comes down to where a sustained load keeps it, then the median of the
 * runs, each between two CUDA events. The compute loops also read the SM
 * clock (clock64 against %globaltimer) and give their rate per SM and cycle:
 * what the hardware does at any clock (4096 flops for the H100's and H200's
 * half-precision tensor cores, 256 for their FP32 units).
 *
 * The last line is for scripts (scripts/run_all.sh, scripts/roofline.sh):
 * NAME=RATE for each (TFLOPS, or TB/s for the memory ones; "-" where this
 * GPU has not the instruction), and NAME_per_run=COUNT, the flops or bytes
 * one run does, which make test checks against the profiler's count.
 */
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

constexpr double WARMUP_SECONDS = 0.5; // as the harness's (common/options.h)
constexpr int RUNS = 20;

constexpr int FMA_THREADS = 256, FMA_BLOCKS_PER_SM = 8, FMA_CHAINS = 8, FMA_ITERS = 16384;
constexpr int MMA_THREADS = 256, MMA_BLOCKS_PER_SM = 4, MMA_CHAINS = 8, MMA_ITERS = 4096;
constexpr int MMA_FLOPS = 2 * 16 * 8 * 16; // one mma.sync m16n8k16
constexpr int WARPGROUP = 128, WG_GROUPS = 2, WG_BATCH = 8, WG_ITERS = 2048; // two warpgroups a block, one block an SM
constexpr int WG_M = 64, WG_N = 256, WG_K_BYTES = 32; // m64n256, 32 bytes of K: k16 of half, k32 of e4m3
constexpr int WG_FLOPS_HALF = 2 * WG_M * WG_N * 16, WG_FLOPS_FP8 = 2 * WG_M * WG_N * 32;
constexpr int CORE_ROWS = 8, CORE_BYTES = 16; // wgmma's core matrix: 8 rows of 16 bytes
constexpr int MEM_THREADS = 256, MEM_BLOCKS_PER_SM = 8, MEM_UNROLL = 4;
constexpr long long HBM_BYTES = 2LL << 30; // or a quarter of the free memory, if less
constexpr int L2_PASSES = 64;

__device__ unsigned long long global_ns()
{
    unsigned long long ns;
    asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(ns));
    return ns;
}

// Block 0's first thread stamps the SM clock and the global timer at the start and the end: the clock's rate.
struct clock_stamps { unsigned long long cycles, ns; };
__device__ void stamp(clock_stamps *s, bool end)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        const unsigned long long c = clock64(), t = global_ns();
        s->cycles = end ? c - s->cycles : c;
        s->ns = end ? t - s->ns : t;
    }
}

// A value from a thread's index that is never 0 nor far from 1: the data the units multiply (never zeros).
__device__ float value_of(unsigned i)
{
    i = i * 2654435761u;
    return 0.25f + (float)(i >> 8) * (1.0f / 16777216.0f) * 0.5f;
}

// ---- FP32: FMA_CHAINS independent chains of FFMA a thread.
__global__ void __launch_bounds__(FMA_THREADS) fma_kernel(float x, float y, float *sink, clock_stamps *clock)
{
    float a[FMA_CHAINS];
#pragma unroll
    for (int j = 0; j < FMA_CHAINS; ++j)
        a[j] = value_of(threadIdx.x * FMA_CHAINS + j);
    stamp(clock, false);
#pragma unroll 16
    for (int i = 0; i < FMA_ITERS; ++i)
#pragma unroll
        for (int j = 0; j < FMA_CHAINS; ++j)
            a[j] = fmaf(a[j], y, x);
    stamp(clock, true);
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < FMA_CHAINS; ++j)
        s += a[j];
    if (s == -1.0f) // never: it keeps the sums
        *sink = s;
}

// ---- mma.sync m16n8k16, half in, float sums: MMA_CHAINS independent accumulators a warp.
__global__ void __launch_bounds__(MMA_THREADS) mma_kernel(float *sink, clock_stamps *clock)
{
#if __CUDA_ARCH__ >= 750
    uint32_t a[4], b[2];
    for (int i = 0; i < 4; ++i) {
        const __half2 h = __floats2half2_rn(value_of(threadIdx.x * 6 + i), -value_of(threadIdx.x * 6 + i + 100));
        a[i] = *reinterpret_cast<const uint32_t *>(&h);
    }
    for (int i = 0; i < 2; ++i) {
        const __half2 h = __floats2half2_rn(value_of(threadIdx.x * 6 + 4 + i), value_of(threadIdx.x + i));
        b[i] = *reinterpret_cast<const uint32_t *>(&h);
    }
    float d[MMA_CHAINS][4] = {};
    stamp(clock, false);
    for (int i = 0; i < MMA_ITERS; ++i)
#pragma unroll
        for (int c = 0; c < MMA_CHAINS; ++c)
#if __CUDA_ARCH__ >= 800
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                         "{%8, %9}, {%0, %1, %2, %3};\n"
                         : "+f"(d[c][0]), "+f"(d[c][1]), "+f"(d[c][2]), "+f"(d[c][3])
                         : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else // Turing has m16n8k8 only: two of them, the same flops
            asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5}, {%8}, "
                         "{%0, %1, %2, %3};\n"
                         "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%6, %7}, {%9}, "
                         "{%0, %1, %2, %3};\n"
                         : "+f"(d[c][0]), "+f"(d[c][1]), "+f"(d[c][2]), "+f"(d[c][3])
                         : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
    stamp(clock, true);
    float s = 0.0f;
    for (int c = 0; c < MMA_CHAINS; ++c)
        s += d[c][0] + d[c][1] + d[c][2] + d[c][3];
    if (s == -1.0f)
        *sink = s;
#endif
}

// ---- wgmma from shared memory. Both operands K-major without a swizzle:
// core matrices of 8 rows of 16 bytes, the two along K 128 bytes apart (the
// leading offset), the next 8 rows 256 bytes on (the stride offset). The
// values need no order: the loop multiplies the same tiles again and again.
constexpr int CORE_LEADING = CORE_ROWS * CORE_BYTES, CORE_STRIDE = 2 * CORE_LEADING;
__device__ uint64_t descriptor(const void *p)
{
    const uint32_t addr = (uint32_t)__cvta_generic_to_shared(p);
    return (uint64_t)((addr & 0x3FFFF) >> 4) | (uint64_t)(CORE_LEADING >> 4) << 16 |
           (uint64_t)(CORE_STRIDE >> 4) << 32;
}

#define D4(j) "+f"(d[j][0]), "+f"(d[j][1]), "+f"(d[j][2]), "+f"(d[j][3])
#define D_ALL                                                                                                        \
    D4(0), D4(1), D4(2), D4(3), D4(4), D4(5), D4(6), D4(7), D4(8), D4(9), D4(10), D4(11), D4(12), D4(13), D4(14),    \
        D4(15), D4(16), D4(17), D4(18), D4(19), D4(20), D4(21), D4(22), D4(23), D4(24), D4(25), D4(26), D4(27),      \
        D4(28), D4(29), D4(30), D4(31)
#define D_REGS                                                                                                       \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, "     \
    "%23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, "  \
    "%45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, "  \
    "%67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, "  \
    "%89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, "   \
    "%109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, "    \
    "%127}"

template <bool FP8>
__global__ void __launch_bounds__(WG_GROUPS * WARPGROUP, 1) wgmma_kernel(float *sink, clock_stamps *clock)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    __shared__ __align__(128) uint8_t a_tile[WG_GROUPS][WG_M * WG_K_BYTES];
    __shared__ __align__(128) uint8_t b_tile[WG_N * WG_K_BYTES];
    // Random halves in [-1, 1), or e4m3 bytes of magnitude below 2 (the exponent's top bit clear: never NaN).
    for (int i = threadIdx.x; i < (int)sizeof a_tile + (int)sizeof b_tile; i += blockDim.x) {
        uint8_t *p = i < (int)sizeof a_tile ? &a_tile[0][0] + i : b_tile + i - sizeof a_tile;
        if (FP8)
            *p = (uint8_t)(value_of(i) * 255.0f) & 0xBF;
        else if (i % 2 == 0)
            *reinterpret_cast<__half *>(p) = __float2half(value_of(i) - (i % 4 ? 0.75f : 0.0f));
    }
    asm volatile("fence.proxy.async.shared::cta;\n" : : : "memory"); // the tensor cores read through the async proxy
    __syncthreads();
    const int wg = threadIdx.x / WARPGROUP;
    const uint64_t da = descriptor(a_tile[wg]), db = descriptor(b_tile);
    float d[WG_N / 8][4] = {};
    stamp(clock, false);
    for (int i = 0; i < WG_ITERS; ++i) {
        asm volatile("wgmma.fence.sync.aligned;\n" : : : "memory");
#pragma unroll
        for (int j = 0; j < WG_BATCH; ++j) {
            if (FP8)
                asm volatile("wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3 " D_REGS ", %128, %129, 1, 1, 1;\n"
                             : D_ALL : "l"(da), "l"(db));
            else
                asm volatile("wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 " D_REGS
                             ", %128, %129, 1, 1, 1, 0, 0;\n"
                             : D_ALL : "l"(da), "l"(db));
        }
        asm volatile("wgmma.commit_group.sync.aligned;\n" : : : "memory");
        asm volatile("wgmma.wait_group.sync.aligned 0;\n" : : : "memory");
    }
    stamp(clock, true);
    float s = 0.0f;
    for (int j = 0; j < WG_N / 8; ++j)
        s += d[j][0] + d[j][1] + d[j][2] + d[j][3];
    if (s == -1.0f)
        *sink = s;
#endif
}

// ---- memory: each thread MEM_UNROLL pieces of 16 bytes in flight, the grid striding over the buffer.
__global__ void __launch_bounds__(MEM_THREADS) read_kernel(const uint4 *buffer, long long pieces, int passes,
                                                            unsigned *sink)
{
    unsigned s = 0;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (int pass = 0; pass < passes; ++pass)
        for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < pieces; i += MEM_UNROLL * stride) {
            uint4 v[MEM_UNROLL];
#pragma unroll
            for (int u = 0; u < MEM_UNROLL; ++u)
                v[u] = i + u * stride < pieces ? __ldcg(buffer + i + u * stride) : make_uint4(0, 0, 0, 0);
#pragma unroll
            for (int u = 0; u < MEM_UNROLL; ++u)
                s += v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
        }
    if (s == 0x8badf00du) // never, for these bytes: it keeps the loads
        *sink = s;
}

__global__ void __launch_bounds__(MEM_THREADS) write_kernel(uint4 *buffer, long long pieces)
{
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < pieces; i += stride)
        buffer[i] = make_uint4((unsigned)i, (unsigned)(i >> 32) ^ 0x5a5a5a5au, ~(unsigned)i, 0x3c003c00u);
}

// ---- the host side
static void check(cudaError_t err, const char *what)
{
    if (err == cudaSuccess)
        return;
    fprintf(stderr, "ceilings: CUDA error %s (%s) in %s\n", cudaGetErrorName(err), cudaGetErrorString(err), what);
    exit(err == cudaErrorMemoryAllocation ? 2 : 1);
}

struct ceiling {
    const char *name, *what, *unit;
    double per_run;  // flops or bytes one run does
    double rate;     // TFLOPS or TB/s; < 0: not measured
    double ghz;      // the SM clock while it ran (compute only), else 0
};

// The median seconds of `runs` runs of launch(), after WARMUP_SECONDS of them; the clock the last run read.
template <typename Launch>
static double time_runs(Launch launch, int runs, clock_stamps *clock, double *ghz)
{
    const auto start = std::chrono::steady_clock::now();
    do {
        launch();
        check(cudaDeviceSynchronize(), "a warm-up run");
    } while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < WARMUP_SECONDS);
    std::vector<cudaEvent_t> ev(2 * runs);
    for (cudaEvent_t &e : ev)
        check(cudaEventCreate(&e), "cudaEventCreate");
    for (int i = 0; i < runs; ++i) {
        check(cudaEventRecord(ev[2 * i]), "cudaEventRecord");
        launch();
        check(cudaEventRecord(ev[2 * i + 1]), "cudaEventRecord");
    }
    check(cudaDeviceSynchronize(), "the timed runs");
    std::vector<double> s(runs);
    for (int i = 0; i < runs; ++i) {
        float ms = 0.0f;
        check(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]), "cudaEventElapsedTime");
        s[i] = ms * 1e-3;
    }
    for (cudaEvent_t &e : ev)
        cudaEventDestroy(e);
    std::sort(s.begin(), s.end());
    if (clock && ghz) {
        clock_stamps c;
        check(cudaMemcpy(&c, clock, sizeof c, cudaMemcpyDeviceToHost), "reading the clock");
        *ghz = c.ns ? (double)c.cycles / (double)c.ns : 0.0;
    }
    return runs % 2 ? s[runs / 2] : 0.5 * (s[runs / 2 - 1] + s[runs / 2]);
}

static void usage(FILE *to)
{
    fprintf(to, "usage: ceilings/run [--only NAME[,NAME...]] [--runs N]\n"
                "The rates that bound the steps, measured on this GPU: fma, mma, wgmma,\n"
                "wgmma_fp8 (TFLOPS), hbm_read, hbm_write, l2_read (TB/s). Each: %g s of\n"
                "warm-up runs, then the median of N timed runs (default %d).\n"
                "  --only NAMES   measure only these (comma-separated)\n"
                "  --runs N       timed runs of each, 1 to 1000\n"
                "Exit status: 0 measured, 1 CUDA error, 2 bad input or no usable GPU.\n",
            WARMUP_SECONDS, RUNS);
}

int main(int argc, char **argv)
{
    static const char *const NAMES[] = { "fma", "mma", "wgmma", "wgmma_fp8", "hbm_read", "hbm_write", "l2_read" };
    std::string only;
    int runs = RUNS;
    for (int i = 1; i < argc; ++i) // --help wins wherever it stands
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        }
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if ((arg == "--only" || arg == "--runs") && i + 1 >= argc) {
            fprintf(stderr, "ceilings: %s needs a value (see --help)\n", arg.c_str());
            return 2;
        }
        if (arg == "--only") {
            only = "," + std::string(argv[++i]) + ",";
            for (size_t p = 1; p < only.size();) {
                const size_t q = only.find(',', p);
                const std::string name = only.substr(p, q - p);
                if (std::none_of(std::begin(NAMES), std::end(NAMES), [&](const char *n) { return name == n; })) {
                    fprintf(stderr, "ceilings: no ceiling '%s' (fma, mma, wgmma, wgmma_fp8, hbm_read, hbm_write, "
                                    "l2_read)\n", name.c_str());
                    return 2;
                }
                p = q + 1;
            }
        } else if (arg == "--runs") {
            char *end = nullptr;
            const long v = strtol(argv[++i], &end, 10);
            if (!*argv[i] || *end || v < 1 || v > 1000) {
                fprintf(stderr, "ceilings: --runs needs an integer from 1 to 1000, got '%s'\n", argv[i]);
                return 2;
            }
            runs = (int)v;
        } else {
            fprintf(stderr, "ceilings: unknown argument '%s' (see --help)\n", arg.c_str());
            return 2;
        }
    }
    const auto wanted = [&](const char *name) { return only.empty() || only.find("," + std::string(name) + ",") != std::string::npos; };

    int count = 0, driver = 0;
    cudaDriverGetVersion(&driver);
    if (driver == 0) {
        fprintf(stderr, "ceilings: no NVIDIA driver found: this machine has no NVIDIA GPU, or its driver is not installed\n");
        return 2;
    }
    if (const cudaError_t err = cudaGetDeviceCount(&count); err != cudaSuccess || count == 0) {
        fprintf(stderr, "ceilings: no usable CUDA GPU (%s)\n", err ? cudaGetErrorString(err) : "the driver sees none");
        return 2;
    }
    int major = 0, minor = 0, sms = 0, l2 = 0, runtime = 0;
    cudaDeviceProp prop;
    check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0), "attributes");
    check(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0), "attributes");
    check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "attributes");
    check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0), "attributes");
    check(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion");
    if (major * 10 + minor < 75) {
        fprintf(stderr, "ceilings: needs sm_75 or newer; GPU 0, %s, is %d.%d\n", prop.name, major, minor);
        return 2;
    }

    float *sink = nullptr;
    clock_stamps *clock = nullptr;
    check(cudaMalloc(&sink, sizeof(float) * 4), "cudaMalloc");
    check(cudaMalloc(&clock, sizeof(clock_stamps)), "cudaMalloc");
    std::vector<ceiling> out;

    // Compute: flops per run over the median time.
    const auto compute = [&](const char *name, const char *what, bool has, double flops, auto launch) {
        ceiling c = { name, what, "TFLOPS", flops, -1.0, 0.0 };
        if (has && wanted(name)) {
            const double s = time_runs(launch, runs, clock, &c.ghz);
            c.rate = flops / s * 1e-12;
        }
        out.push_back(c);
    };
    compute("fma", "FP32 FFMA (steps 01-04)", true, 2.0 * FMA_CHAINS * FMA_ITERS * FMA_THREADS * FMA_BLOCKS_PER_SM * sms,
            [&] { fma_kernel<<<sms * FMA_BLOCKS_PER_SM, FMA_THREADS>>>(0.001f, 0.999f, sink, clock); });
    compute("mma", "mma.sync m16n8k16, half in, float sums (05-07)", true,
            (double)MMA_FLOPS * MMA_CHAINS * MMA_ITERS * (MMA_THREADS / 32) * MMA_BLOCKS_PER_SM * sms,
            [&] { mma_kernel<<<sms * MMA_BLOCKS_PER_SM, MMA_THREADS>>>(sink, clock); });
    const bool hopper = major == 9 && minor == 0;
    compute("wgmma", "wgmma m64n256k16 from shared memory, half in (08-)", hopper,
            (double)WG_FLOPS_HALF * WG_BATCH * WG_ITERS * WG_GROUPS * sms,
            [&] { wgmma_kernel<false><<<sms, WG_GROUPS * WARPGROUP>>>(sink, clock); });
    compute("wgmma_fp8", "wgmma m64n256k32 from shared memory, e4m3 in", hopper,
            (double)WG_FLOPS_FP8 * WG_BATCH * WG_ITERS * WG_GROUPS * sms,
            [&] { wgmma_kernel<true><<<sms, WG_GROUPS * WARPGROUP>>>(sink, clock); });

    // Memory: bytes per run over the median time.
    size_t free_bytes = 0, total = 0;
    check(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo");
    const long long hbm = std::min(HBM_BYTES, (long long)(free_bytes / 4)) / 4096 * 4096;
    const long long l2_bytes = (long long)l2 / 4 / 4096 * 4096;
    uint4 *buffer = nullptr;
    check(cudaMalloc(&buffer, (size_t)hbm), "cudaMalloc of the memory buffer");
    check(cudaMemset(buffer, 0x3c, (size_t)hbm), "cudaMemset");
    const int mem_blocks = sms * MEM_BLOCKS_PER_SM;
    const auto memory = [&](const char *name, const char *what, double bytes, auto launch) {
        ceiling c = { name, what, "TB/s", bytes, -1.0, 0.0 };
        if (wanted(name))
            c.rate = bytes / time_runs(launch, runs, nullptr, nullptr) * 1e-12;
        out.push_back(c);
    };
    char what[3][96];
    snprintf(what[0], sizeof what[0], "reads from device memory, %.2f GB once", hbm * 1e-9);
    snprintf(what[1], sizeof what[1], "writes to device memory, %.2f GB once", hbm * 1e-9);
    snprintf(what[2], sizeof what[2], "reads from L2, %.1f MB %d times", l2_bytes * 1e-6, L2_PASSES);
    memory("hbm_read", what[0], (double)hbm,
           [&] { read_kernel<<<mem_blocks, MEM_THREADS>>>(buffer, hbm / 16, 1, (unsigned *)sink); });
    memory("hbm_write", what[1], (double)hbm, [&] { write_kernel<<<mem_blocks, MEM_THREADS>>>(buffer, hbm / 16); });
    memory("l2_read", what[2], (double)l2_bytes * L2_PASSES,
           [&] { read_kernel<<<mem_blocks, MEM_THREADS>>>(buffer, l2_bytes / 16, L2_PASSES, (unsigned *)sink); });
    check(cudaGetLastError(), "a launch");

    printf("Ceilings of %s (sm_%d%d, %d SMs, %.0f MB of L2), CUDA %d.%d: median of %d runs after %g s of warm-up\n\n",
           prop.name, major, minor, sms, l2 * 1e-6, runtime / 1000, runtime % 1000 / 10, runs, WARMUP_SECONDS);
    printf("%-10s %-52s %9s %-7s %9s %17s\n", "ceiling", "what it measures", "rate", "unit", "SM clock",
           "per SM per cycle");
    for (const ceiling &c : out) {
        char rate[32] = "-", ghz[32] = "", per[32] = "";
        if (c.rate >= 0)
            snprintf(rate, sizeof rate, "%.2f", c.rate);
        else
            snprintf(rate, sizeof rate, "%s", wanted(c.name) ? "-" : "skipped");
        if (c.ghz > 0) {
            snprintf(ghz, sizeof ghz, "%.3f GHz", c.ghz);
            snprintf(per, sizeof per, "%.0f flops", c.rate * 1e12 / (sms * c.ghz * 1e9));
        }
        printf("%-10s %-52s %9s %-7s %9s %17s\n", c.name, c.what, rate, c.unit, ghz, per);
    }
    char gpu[sizeof prop.name];
    snprintf(gpu, sizeof gpu, "%s", prop.name);
    for (char *p = gpu; *p; ++p)
        if (*p == ' ')
            *p = '_';
    printf("\nceilings:");
    for (const ceiling &c : out) {
        if (c.rate >= 0)
            printf(" %s=%.2f", c.name, c.rate);
        else
            printf(" %s=-", c.name);
        printf(" %s_per_run=%.0f", c.name, c.per_run);
    }
    printf(" gpu=%s sm=%d%d cuda=%d.%d\n", gpu, major, minor, runtime / 1000, runtime % 1000 / 10);
    cudaFree(buffer);
    cudaFree(sink);
    cudaFree(clock);
    return 0;
}
