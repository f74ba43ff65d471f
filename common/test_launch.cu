/*
 * gemm_launch as a library (gemm.h), used the way a program of one's own
 * would use it, for the test suite: linked with one step's kernel.cu, and
 * run once per case (scripts/test.sh), each case in a process of its own:
 *
 *   threads          four host threads call it at once, each on a stream of its
 *                    own, on shapes that copy A or B for TMA and shapes whose
 *                    tiles are split: every result has the bits of the same
 *                    call made alone
 *   streams          two host threads, each queuing all its calls on its own
 *                    stream before it waits, so that the GPU runs them
 *                    overlapped: the bits of the calls alone
 *   graph            a call on a stream of the program's own captured into a
 *                    CUDA graph (global capture mode: any work on another
 *                    stream fails it), replayed three times: the bits of a
 *                    direct call, on a shape that copies A and B for TMA and
 *                    one whose tiles are split
 *   pool             a program that holds memory of the device's default pool
 *                    calls it: the default pool's release threshold, reserved
 *                    and used memory, and their highest marks, stay as they were
 *   alpha0           alpha = 0 with NaN in A and B: C = beta * C, A and B unread
 *   earlier          an error an earlier CUDA call left unread: returned, C
 *                    untouched, and the next call runs
 *   scales           FP8: the scales 4 bytes past a 16-byte boundary, as
 *                    gemm.h allows them: the bits of the call with them on one
 *   busy S H M N K ...  a kernel on another stream holds all the SMs but
 *                    FREE_SMS (for H seconds at most) while each shape runs:
 *                    each must end within S seconds, with the bits of the
 *                    same call on an idle GPU
 *   reset            cudaDeviceReset between two calls: the same bits after
 *   zero             M, N or K = 0: nothing done, or C = beta * C
 *   limits           sizes out of range: cudaErrorInvalidValue, C untouched
 *   oom M N K        too little GPU memory for a shape that needs some (a
 *                    copy for TMA, a workspace), at the process's first call:
 *                    cudaErrorMemoryAllocation, C untouched; then the call
 *                    works, right against the CPU reference, twice the same
 *   large C|A|B      C, A or B past 2^32 elements (just below 2^31 where the
 *                    step offsets in 32 bits): every element of C written,
 *                    blocks of its first, middle and last rows and columns
 *                    right (SKIP where the GPU has too little memory)
 *
 * Built with -DHALF=0 (float A and B, steps 01-04) or -DHALF=1, or with
 * -DFP8=1 for gemm_fp8_launch (step 16: A and B e4m3 with their scales, B
 * N x K). Prints a PASS, FAIL or SKIP line per check; exits 1 if one
 * failed, 2 on bad usage.
 */
#include "gemm.h"
extern "C" {
#include "check.h" // fill_random: the harness's inputs
#include "fp8.h"
}

#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#ifndef FP8
#define FP8 0
#endif
#if FP8
typedef __nv_fp8_e4m3 input_t;
#elif HALF
typedef __half input_t;
#else
typedef float input_t;
#endif

// The step's call: gemm_launch, or gemm_fp8_launch with A's and B's scales (sa and sb unused by the others).
static int gemm(int M, int N, int K, float alpha, const void *A, const float *sa, const void *B, const float *sb,
                float beta, float *C, cudaStream_t stream)
{
#if FP8
    return gemm_fp8_launch(M, N, K, alpha, A, sa, B, sb, beta, C, stream);
#else
    (void)sa, (void)sb;
    return gemm_launch(M, N, K, alpha, A, B, beta, C, stream);
#endif
}

constexpr int FREE_SMS = 2;        // the SMs the busy case leaves to gemm_launch: a cluster of two
constexpr int THREADS = 4;         // host threads in the threads case
constexpr int ROUNDS = 3;          // calls of each shape in each thread

static int failures = 0;

static void result(bool ok, const std::string &what, const std::string &why = "")
{
    printf("%s  %s%s%s\n", ok ? "PASS" : "FAIL", what.c_str(), ok || why.empty() ? "" : ": ", ok ? "" : why.c_str());
    fflush(stdout);
    failures += !ok;
}

static std::string shape_name(int M, int N, int K)
{
    return "M=" + std::to_string(M) + " N=" + std::to_string(N) + " K=" + std::to_string(K);
}

static std::string error_name(int err)
{
    return std::string(cudaGetErrorName((cudaError_t)err));
}

// A problem on the GPU: A, B and C, and C's value before each call: c0, or
// NaN (every byte 0xff) where c0 is empty, as where beta == 0, so that a
// call that reads C shows.
struct problem {
    int M = 0, N = 0, K = 0;
    float alpha = 1.0f, beta = 0.0f;
    void *A = nullptr, *B = nullptr;
    float *C = nullptr, *sa = nullptr, *sb = nullptr; // sa, sb: FP8's scales (gemm.h)
    cudaStream_t stream = nullptr; // the program's own, which waits for no other (cudaStreamNonBlocking)
    std::vector<float> c0, a, b;   // a and b: the inputs as floats, for the reference (b K x N)
    std::vector<float> a_scales, b_scales; // FP8: the scales, for the reference
};

static bool make(problem &p, int M, int N, int K, float alpha, float beta, uint64_t seed)
{
    p.M = M, p.N = N, p.K = K, p.alpha = alpha, p.beta = beta;
    uint64_t state = seed;
    p.a.resize((size_t)M * K), p.b.resize((size_t)K * N);
#if FP8 // as the harness makes them (check.h): B N x K on the GPU, K x N in b
    const size_t kb = (K + 127) / 128;
    std::vector<float> raw_a(p.a.size()), raw_b(p.b.size());
    std::vector<uint8_t> qa(p.a.size()), qb(p.b.size());
    p.a_scales.resize(kb * M), p.b_scales.resize(kb * ((N + 127) / 128));
    fp8_inputs(M, N, K, &state, raw_a.data(), raw_b.data(), qa.data(), qb.data(), p.a_scales.data(),
               p.b_scales.data(), p.a.data(), p.b.data());
    const std::vector<uint8_t> &a = qa, &b = qb;
    if (cudaMalloc(&p.sa, p.a_scales.size() * sizeof(float) + 1) != cudaSuccess ||
        cudaMalloc(&p.sb, p.b_scales.size() * sizeof(float) + 1) != cudaSuccess ||
        cudaMemcpy(p.sa, p.a_scales.data(), p.a_scales.size() * sizeof(float), cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaMemcpy(p.sb, p.b_scales.data(), p.b_scales.size() * sizeof(float), cudaMemcpyHostToDevice) != cudaSuccess)
        return false;
#else
    fill_random(p.a.data(), p.a.size(), &state, HALF);
    fill_random(p.b.data(), p.b.size(), &state, HALF);
    const std::vector<input_t> a(p.a.begin(), p.a.end()), b(p.b.begin(), p.b.end()); // exact: half values already
#endif
    p.c0.assign(beta != 0.0f ? (size_t)M * N : 0, 0.0f);
    fill_random(p.c0.data(), p.c0.size(), &state, 0);
    return cudaStreamCreateWithFlags(&p.stream, cudaStreamNonBlocking) == cudaSuccess &&
           cudaMalloc(&p.A, a.size() * sizeof(input_t)) == cudaSuccess &&
           cudaMalloc(&p.B, b.size() * sizeof(input_t)) == cudaSuccess &&
           cudaMalloc(&p.C, (size_t)M * N * sizeof(float)) == cudaSuccess &&
           cudaMemcpy(p.A, a.data(), a.size() * sizeof(input_t), cudaMemcpyHostToDevice) == cudaSuccess &&
           cudaMemcpy(p.B, b.data(), b.size() * sizeof(input_t), cudaMemcpyHostToDevice) == cudaSuccess;
}

static void release(problem &p)
{
    cudaStreamSynchronize(p.stream);
    cudaFree(p.A), cudaFree(p.B), cudaFree(p.C), cudaFree(p.sa), cudaFree(p.sb);
    cudaStreamDestroy(p.stream);
    p.A = p.B = nullptr, p.C = p.sa = p.sb = nullptr, p.stream = nullptr;
}

// C back to what it held before the calls, queued on the problem's stream
// (c0 is pinned by the wait: a copy from pageable memory returns once staged).
static bool reset_c(const problem &p)
{
    const size_t bytes = (size_t)p.M * p.N * sizeof(float);
    return (p.c0.empty() ? cudaMemsetAsync(p.C, 0xff, bytes, p.stream)
                         : cudaMemcpyAsync(p.C, p.c0.data(), bytes, cudaMemcpyHostToDevice, p.stream)) ==
               cudaSuccess &&
           cudaStreamSynchronize(p.stream) == cudaSuccess;
}

// The call on the problem's stream, as it is, without waiting for it.
static int call(const problem &p)
{
    return gemm(p.M, p.N, p.K, p.alpha, p.A, p.sa, p.B, p.sb, p.beta, p.C, p.stream);
}

// C back to c0, then the call, without waiting for it; its return value.
static int launch(const problem &p)
{
    if (!reset_c(p))
        return -1;
    return call(p);
}

// C as the GPU holds it, once the problem's stream is done; false (and why) on an error.
static bool read_c(const problem &p, std::vector<float> &out, std::string &why)
{
    out.resize((size_t)p.M * p.N);
    cudaError_t err = cudaStreamSynchronize(p.stream);
    if (err == cudaSuccess)
        err = cudaMemcpy(out.data(), p.C, out.size() * sizeof(float), cudaMemcpyDeviceToHost);
    if (err != cudaSuccess)
        why = error_name(err);
    return err == cudaSuccess;
}

// One call and its result: false (and why) if it returned an error or faulted.
static bool run(const problem &p, std::vector<float> &out, std::string &why)
{
    const int err = launch(p);
    if (err != cudaSuccess) {
        why = "gemm_launch returned " + error_name(err);
        return false;
    }
    return read_c(p, out, why);
}

// Where two results differ in their bits: "" if nowhere.
static std::string differs(const std::vector<float> &x, const std::vector<float> &y)
{
    size_t count = 0, first = 0;
    for (size_t i = 0; i < x.size(); ++i)
        if (memcmp(&x[i], &y[i], sizeof(float)) != 0 && count++ == 0)
            first = i;
    if (count == 0)
        return "";
    return std::to_string(count) + " elements differ, the first at " + std::to_string(first) + " (" +
           std::to_string(x[first]) + " vs " + std::to_string(y[first]) + ")";
}

// Whether out is right against the CPU reference in double (check.c), on
// every tile edge of a few rows and columns; else why not.
static std::string wrong_against_reference(const problem &p, const std::vector<float> &out)
{
    const gemm_data d = { p.M, p.N, p.K, p.alpha, p.beta, p.a.data(), p.b.data(),
                          p.c0.empty() ? nullptr : p.c0.data(), FP8 ? SUM_FP8 : HALF ? SUM_TRUNCATED : SUM_ROUNDED,
                          FP8 ? p.a_scales.data() : nullptr, FP8 ? p.b_scales.data() : nullptr };
    std::vector<double> a_norm(norms_size(&d, p.M)), b_norm(norms_size(&d, p.N));
    std::vector<int> rows(p.M), cols(p.N), few(SAMPLE_FEW_MAX);
    compute_norms(&d, a_norm.data(), b_norm.data());
    check_result r = {};
    check_reference(&d, a_norm.data(), b_norm.data(), out.data(), rows.data(), sample_edges(p.M, rows.data()),
                    few.data(), sample_few(p.N, 2, few.data()), &r);
    check_reference(&d, a_norm.data(), b_norm.data(), out.data(), few.data(), sample_few(p.M, 1, few.data()),
                    cols.data(), sample_edges(p.N, cols.data()), &r);
    count_nonfinite(&d, out.data(), &r);
    check_verdict(&r);
    return r.pass ? "" : "worst error " + std::to_string(r.ref_worst) + " of the tolerance, " +
                             std::to_string(r.nonfinite) + " not finite";
}

// The shapes of the threads and reset cases, each with its alpha and beta:
// copies of A, of B or of both for TMA (K or N not a multiple of 8), and
// tiles split in two or more parts (steps 11-13), in clusters too (12-13).
struct shape {
    int M, N, K;
    float alpha, beta;
};
static const shape SHAPES[] = {
    { 1000, 1000, 1001, 1.0f, 0.0f }, { 513, 1025, 257, -1.5f, 0.5f }, { 128, 4096, 4096, 1.0f, 0.0f },
    { 1024, 1024, 16384, 0.5f, 2.0f }, { 256, 256, 32768, 1.0f, 0.0f }, { 128, 4100, 4100, 1.0f, 0.25f },
};
constexpr int SHAPE_COUNT = sizeof SHAPES / sizeof SHAPES[0];

// What went wrong on each thread (empty where nothing did), in one line: "thread T, what; thread U, ...".
static std::string by_thread(const std::vector<std::string> &wrong)
{
    std::string why;
    for (size_t t = 0; t < wrong.size(); ++t)
        if (!wrong[t].empty())
            why += (why.empty() ? "thread " : "; thread ") + std::to_string(t) + ", " + wrong[t];
    return why;
}

static void case_threads()
{
    std::vector<problem> probs(THREADS * SHAPE_COUNT);
    std::vector<std::vector<float>> alone(probs.size());
    for (size_t i = 0; i < probs.size(); ++i) {
        const shape &s = SHAPES[i % SHAPE_COUNT];
        std::string why;
        if (!make(probs[i], s.M, s.N, s.K, s.alpha, s.beta, 1000 + i) || !run(probs[i], alone[i], why)) {
            result(false, "threads: " + shape_name(s.M, s.N, s.K) + " alone", why.empty() ? "no memory" : why);
            return;
        }
    }
    // Each thread calls its own problems in turn, starting at a shape of its
    // own, so that different shapes meet.
    std::vector<std::string> wrong(THREADS);
    std::vector<std::thread> threads;
    std::atomic<int> ready{ 0 };
    for (int t = 0; t < THREADS; ++t)
        threads.emplace_back([&, t] {
            ready++;
            while (ready < THREADS)
                ;
            std::vector<float> got;
            for (int r = 0; r < ROUNDS * SHAPE_COUNT && wrong[t].empty(); ++r) {
                const int i = t * SHAPE_COUNT + (t + r) % SHAPE_COUNT;
                std::string why;
                if (!run(probs[i], got, why))
                    wrong[t] = shape_name(probs[i].M, probs[i].N, probs[i].K) + ": " + why;
                else if (const std::string d = differs(got, alone[i]); !d.empty())
                    wrong[t] = shape_name(probs[i].M, probs[i].N, probs[i].K) + ": " + d;
            }
        });
    for (std::thread &th : threads)
        th.join();
    const std::string why = by_thread(wrong);
    result(why.empty(),
           std::to_string(THREADS) + " host threads at once, " + std::to_string(ROUNDS) + " calls of each of " +
               std::to_string(SHAPE_COUNT) + " shapes each: the bits of the calls alone",
           why);
    for (problem &p : probs)
        release(p);
}

// The busy case's kernel: blocks of HOLD_THREADS threads, as many on each SM
// as its threads allow (so that no block of another kernel fits beside
// them), of which those on the first FREE_SMS SMs end at once and the others
// spin until released, or for most_ns at most.
constexpr int HOLD_THREADS = 1024;
__global__ void hold_kernel(volatile int *release, volatile int *arrived, long long most_ns)
{
    unsigned sm;
    asm volatile("mov.u32 %0, %%smid;\n" : "=r"(sm));
    if (sm < FREE_SMS) {
        if (threadIdx.x == 0)
            arrived[blockIdx.x] = 1 + sm;
        return;
    }
    if (threadIdx.x == 0) { // the others wait at the barrier, holding their places on the SM
        long long start, now;
        asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(start));
        arrived[blockIdx.x] = 1 + sm;
        do
            asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(now));
        while (!*release && now - start < most_ns);
    }
    __syncthreads();
}

// Marks the SM each block ran on: the busy case's check that the SMs are held.
__global__ void probe_kernel(int *seen)
{
    unsigned sm;
    asm volatile("mov.u32 %0, %%smid;\n" : "=r"(sm));
    if (threadIdx.x == 0)
        atomicOr(&seen[sm / 32], 1 << sm % 32);
}

static void case_busy(double seconds, double hold, const std::vector<shape> &shapes)
{
    int device = 0, sms = 0, per_sm = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device);
    const int blocks = sms * (per_sm / HOLD_THREADS);
    // Every allocation first: cudaFree and cudaMalloc may wait for the GPU, which is busy below.
    std::vector<problem> probs(shapes.size());
    std::vector<std::vector<float>> idle(shapes.size()), got(shapes.size());
    for (size_t i = 0; i < shapes.size(); ++i) {
        const shape &s = shapes[i];
        std::string why;
        if (!make(probs[i], s.M, s.N, s.K, s.alpha, s.beta, 2000 + i) || !run(probs[i], idle[i], why)) {
            result(false, "busy: " + shape_name(s.M, s.N, s.K) + " on an idle GPU", why.empty() ? "no memory" : why);
            return;
        }
        got[i].resize(idle[i].size());
    }
    int *flags = nullptr, *dev_flags = nullptr; // [0]: release, [1 + b]: block b has started, on SM [1 + b] - 1
    constexpr int SM_WORDS = 16;
    int *seen = nullptr; // a bit per SM the probe ran on
    cudaStream_t side;
    if (cudaMalloc(&seen, SM_WORDS * sizeof(int)) != cudaSuccess ||
        cudaHostAlloc(&flags, (1 + blocks) * sizeof(int), cudaHostAllocMapped) != cudaSuccess ||
        cudaHostGetDevicePointer(&dev_flags, flags, 0) != cudaSuccess ||
        cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking) != cudaSuccess) {
        result(false, "busy: set up", error_name(cudaGetLastError()));
        return;
    }
    // Every kernel runs once before (the shapes on the idle GPU, the probe here): CUDA loads a kernel's code at
    // its first launch, and the load waits for the kernels running then, the other kernel too.
    probe_kernel<<<1, 32>>>(seen);
    cudaDeviceSynchronize();
    volatile int *vflags = flags;
    for (int b = 0; b <= blocks; ++b)
        vflags[b] = 0;
    hold_kernel<<<blocks, HOLD_THREADS, 0, side>>>(dev_flags, dev_flags + 1, (long long)(hold * 1e9));
    const auto start = std::chrono::steady_clock::now();
    const auto elapsed = [](std::chrono::steady_clock::time_point since) {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
    };
    int started = 0;
    while (started < blocks && elapsed(start) < 10) {
        started = 0;
        for (int b = 1; b <= blocks; ++b)
            started += vflags[b] != 0;
    }
    std::vector<int> held_on(blocks);
    for (int b = 1; b <= blocks; ++b)
        held_on[b - 1] = vflags[b] - 1;
    std::sort(held_on.begin(), held_on.end());
    const int distinct = (int)(std::unique(held_on.begin(), held_on.end()) - held_on.begin());
    // The SMs left: a probe's blocks, many per SM, must all run on FREE_SMS of them.
    int on[SM_WORDS] = {}, used = 0;
    double probe_s = -1; // how long the probe took: it must not wait for the other kernel
    if (started == blocks && cudaMemset(seen, 0, sizeof on) == cudaSuccess) {
        const auto probed = std::chrono::steady_clock::now();
        probe_kernel<<<64 * sms, 32>>>(seen);
        cudaMemcpy(on, seen, sizeof on, cudaMemcpyDeviceToHost);
        probe_s = elapsed(probed);
        for (int w : on)
            used += __builtin_popcount(w);
    }
    if (started < blocks || used == 0 || used > FREE_SMS) {
        vflags[0] = 1;
        result(false, "busy: the other kernel holds all SMs but " + std::to_string(FREE_SMS),
               std::to_string(started) + " of its " + std::to_string(blocks) + " blocks started within 10 s, on " +
                   std::to_string(distinct) + " SMs; " +
                   "a probe kernel then ran on " + std::to_string(used) + " SMs in " + std::to_string(probe_s) + " s (" +
                   error_name(cudaGetLastError()) + ")");
        cudaDeviceSynchronize();
        return;
    }
    for (size_t i = 0; i < shapes.size(); ++i) {
        const shape &s = shapes[i];
        const std::string what = "busy: " + shape_name(s.M, s.N, s.K) + " with " + std::to_string(sms - FREE_SMS) +
                                 " of " + std::to_string(sms) + " SMs held by another kernel";
        cudaEvent_t done;
        cudaEventCreateWithFlags(&done, cudaEventDisableTiming);
        const auto begun = std::chrono::steady_clock::now();
        const int err = launch(probs[i]);
        cudaEventRecord(done, probs[i].stream);
        cudaError_t q;
        while ((q = cudaEventQuery(done)) == cudaErrorNotReady && elapsed(begun) < seconds)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        const double took = elapsed(begun);
        cudaEventDestroy(done);
        if (err != cudaSuccess || (q != cudaSuccess && q != cudaErrorNotReady)) {
            result(false, what, err != cudaSuccess ? "gemm_launch returned " + error_name(err) : error_name(q));
            break;
        }
        if (q == cudaErrorNotReady) { // still running: let the other kernel go, to end the process
            vflags[0] = 1;
            result(false, what, "not done " + std::to_string((int)seconds) + " s later, while the other kernel ran");
            cudaDeviceSynchronize();
            break;
        }
        cudaMemcpy(got[i].data(), probs[i].C, got[i].size() * sizeof(float), cudaMemcpyDeviceToHost);
        const std::string d = differs(got[i], idle[i]);
        char took_s[32];
        snprintf(took_s, sizeof took_s, "%.2f s", took);
        result(d.empty(), what + ": done in " + took_s + ", the idle GPU's bits", d);
    }
    vflags[0] = 1;
    cudaDeviceSynchronize();
    cudaStreamDestroy(side);
    cudaFreeHost(flags);
    cudaFree(seen);
    for (problem &p : probs)
        release(p);
}

static void case_reset()
{
    for (int round = 0; round < 2; ++round) {
        for (const shape &s : SHAPES) {
            problem p;
            std::vector<float> before, after;
            std::string why;
            bool ok = make(p, s.M, s.N, s.K, s.alpha, s.beta, 3000) && run(p, before, why);
            release(p);
            ok = ok && cudaDeviceReset() == cudaSuccess && make(p, s.M, s.N, s.K, s.alpha, s.beta, 3000) &&
                 run(p, after, why);
            release(p);
            if (round == 1) // the first round leaves the same call's state behind, if any
                result(ok && differs(before, after).empty(),
                       "reset: " + shape_name(s.M, s.N, s.K) + ", cudaDeviceReset, the same call: the same bits",
                       ok ? differs(before, after) : why);
        }
    }
}

static void case_zero()
{
    problem p;
    if (!make(p, 33, 65, 17, 1.0f, 0.5f, 4000)) {
        result(false, "zero: set up", "no memory");
        return;
    }
    std::vector<float> got;
    std::string why;
    // M or N = 0: success, nothing read or written (null pointers too).
    for (int i = 0; i < 2; ++i) {
        const int M = i == 0 ? 0 : 33, N = i == 0 ? 65 : 0;
        const int err = reset_c(p) ? gemm(M, N, 17, 1.0f, p.A, p.sa, p.B, p.sb, 0.5f, p.C, p.stream) : -1;
        const int null_err = gemm(M, N, 17, 1.0f, nullptr, nullptr, nullptr, nullptr, 0.5f, nullptr, p.stream);
        const bool ok = err == cudaSuccess && null_err == cudaSuccess && read_c(p, got, why) && got == p.c0;
        result(ok, "zero: " + shape_name(M, N, 17) + ": success, C untouched, null pointers accepted",
               err != cudaSuccess || null_err != cudaSuccess ? "returned " + error_name(err) + ", " + error_name(null_err)
                                                             : why.empty() ? "C changed" : why);
    }
    // K = 0: C = beta * C, and zeros where beta == 0 (C holding NaN).
    for (const float beta : { -1.5f, 0.0f }) {
        problem q = p;
        q.K = 0, q.beta = beta;
        std::vector<float> want(p.c0.size());
        for (size_t i = 0; i < want.size(); ++i)
            want[i] = beta == 0.0f ? 0.0f : beta * q.c0[i];
        if (beta == 0.0f)
            q.c0.clear(); // C holds NaN
        const bool ran = run(q, got, why);
        result(ran && differs(got, want).empty(),
               "zero: " + shape_name(33, 65, 0) + ", beta=" + std::to_string(beta) + ": C = beta * C",
               ran ? differs(got, want) : why);
    }
    const int err = gemm(0, 0, 0, 1.0f, nullptr, nullptr, nullptr, nullptr, 0.0f, nullptr, p.stream);
    result(err == cudaSuccess, "zero: M=N=K=0: success", "returned " + error_name(err));
    release(p);
}

static void case_limits()
{
    problem p; // C of 65536 floats, A and B of 65536 elements: all a refused call could touch
    if (!make(p, 256, 256, 256, 1.0f, 0.5f, 5000)) {
        result(false, "limits: set up", "no memory");
        return;
    }
    const long long side = GEMM_MAX_SIDE;
    const int over = (int)(gemm_max_elements >> 20) + 1; // over x 2^20: A, C or B just past the step's limit
    const int too[][3] = { { -1, 64, 64 },           { 64, -1, 64 },           { 64, 64, -1 },
                           { over, 1, 1 << 20 },     { over, 1 << 20, 1 },     { 1, over, 1 << 20 },
                           { (int)(side + 1), 1, 1 }, { 1, (int)(side + 1), 1 }, { 1, 1, (int)(side + 1) } };
    std::vector<float> got;
    std::string why;
    for (const auto &t : too) {
        const int err = reset_c(p) ? gemm(t[0], t[1], t[2], 1.0f, p.A, p.sa, p.B, p.sb, 0.5f, p.C, p.stream) : -1;
        const bool untouched = read_c(p, got, why) && got == p.c0;
        result(err == cudaErrorInvalidValue && untouched,
               "limits: " + shape_name(t[0], t[1], t[2]) + ": cudaErrorInvalidValue, C untouched",
               "returned " + error_name(err) + (untouched ? "" : why.empty() ? ", C changed" : ", " + why));
    }
    // And the process goes on: a call in range works.
    std::vector<float> again;
    const bool ok = run(p, got, why) && run(p, again, why) && got == again;
    result(ok, "limits: a call in range afterwards runs", why);
    release(p);
}

// GPU memory held until released, so that less than `leave` bytes are free.
static std::vector<void *> fill_memory(size_t leave)
{
    std::vector<void *> held;
    for (size_t chunk = (size_t)1 << 30; chunk >= ((size_t)1 << 20); chunk /= 2)
        for (;;) {
            size_t free_bytes = 0, total = 0;
            cudaMemGetInfo(&free_bytes, &total);
            void *p = nullptr;
            if (free_bytes < leave || free_bytes - chunk < leave / 2 || cudaMalloc(&p, chunk) != cudaSuccess)
                break;
            held.push_back(p);
        }
    cudaGetLastError(); // the failed cudaMalloc's
    return held;
}

// The process's first call (the library's pool holds nothing yet) with
// under 8 MB of GPU memory free; then with the memory back.
static void case_oom(const shape &s)
{
    problem p;
    std::vector<float> after, again, got;
    std::string why;
    const std::string what = "oom: " + shape_name(s.M, s.N, s.K) +
                             " with under 8 MB free: cudaErrorMemoryAllocation, C untouched; with the memory back, "
                             "right, and twice the same bits";
    if (!make(p, s.M, s.N, s.K, s.alpha, s.beta, 6000)) {
        result(false, what, "no memory to set up");
        return;
    }
    std::vector<void *> held = fill_memory((size_t)8 << 20);
    const int err = launch(p);
    const bool untouched = read_c(p, got, why) && got == p.c0;
    for (void *h : held)
        cudaFree(h);
    const bool ran = run(p, after, why) && run(p, again, why);
    const std::string wrong = ran ? wrong_against_reference(p, after) + differs(after, again) : why;
    result(err == cudaErrorMemoryAllocation && untouched && wrong.empty(), what,
           "returned " + error_name(err) + (untouched ? "" : ", C changed") + (wrong.empty() ? "" : ", then " + wrong));
    release(p);
}

// Two host threads, each with a stream of its own and its own problems,
// queue ROUNDS calls of each before they wait: the GPU runs the two streams'
// kernels side by side. C is set before the first call only; beta = 0, so
// every call writes the same C.
static void case_streams()
{
    constexpr int PAIR = 2;
    std::vector<problem> probs(PAIR * SHAPE_COUNT);
    std::vector<std::vector<float>> alone(probs.size());
    for (size_t i = 0; i < probs.size(); ++i) {
        const shape &s = SHAPES[i % SHAPE_COUNT];
        std::string why;
        if (!make(probs[i], s.M, s.N, s.K, s.alpha, 0.0f, 8000 + i) || !run(probs[i], alone[i], why) ||
            !reset_c(probs[i])) {
            result(false, "streams: " + shape_name(s.M, s.N, s.K) + " alone", why.empty() ? "no memory" : why);
            return;
        }
    }
    std::vector<std::string> wrong(PAIR);
    std::vector<std::thread> threads;
    std::atomic<int> ready{ 0 };
    for (int t = 0; t < PAIR; ++t)
        threads.emplace_back([&, t] {
            const cudaStream_t mine = probs[t * SHAPE_COUNT].stream; // all the thread's calls on one stream
            ready++;
            while (ready < PAIR)
                ;
            for (int r = 0; r < ROUNDS && wrong[t].empty(); ++r)
                for (int i = 0; i < SHAPE_COUNT && wrong[t].empty(); ++i) {
                    const problem &q = probs[t * SHAPE_COUNT + (t + i) % SHAPE_COUNT];
                    if (const int err = gemm(q.M, q.N, q.K, q.alpha, q.A, q.sa, q.B, q.sb, q.beta, q.C, mine))
                        wrong[t] = "gemm_launch returned " + error_name(err);
                }
            std::vector<float> got;
            const cudaError_t err = cudaStreamSynchronize(mine);
            if (err != cudaSuccess && wrong[t].empty())
                wrong[t] = error_name(err);
            for (int i = 0; i < SHAPE_COUNT && wrong[t].empty(); ++i) {
                const problem &q = probs[t * SHAPE_COUNT + i];
                std::string why;
                if (!read_c(q, got, why))
                    wrong[t] = shape_name(q.M, q.N, q.K) + ": " + why;
                else if (const std::string d = differs(got, alone[t * SHAPE_COUNT + i]); !d.empty())
                    wrong[t] = shape_name(q.M, q.N, q.K) + ": " + d;
            }
        });
    for (std::thread &th : threads)
        th.join();
    const std::string why = by_thread(wrong);
    result(why.empty(),
           std::to_string(PAIR) + " host threads, a stream each, " + std::to_string(ROUNDS) + " calls of each of " +
               std::to_string(SHAPE_COUNT) + " shapes queued before they wait: the bits of the calls alone",
           why);
    for (problem &p : probs)
        release(p);
}

// The call captured into a graph on the problem's own stream, in global
// mode: work queued on any other stream (the legacy default one) during the
// capture fails it. Replayed REPLAYS times, C set before each.
constexpr int REPLAYS = 3;
static void case_graph()
{
    // A and B copied for TMA (K and N not multiples of 8); tiles split (steps 11 and up), with beta.
    const shape shapes[] = { { 513, 1025, 257, -1.5f, 0.5f }, { 256, 256, 32768, 1.0f, 0.25f } };
    for (const shape &s : shapes) {
        const std::string what = "graph: " + shape_name(s.M, s.N, s.K) + " captured on the program's stream, " +
                                 std::to_string(REPLAYS) + " replays: the bits of a direct call";
        problem p;
        std::vector<float> direct, got;
        std::string why;
        if (!make(p, s.M, s.N, s.K, s.alpha, s.beta, 9000) || !run(p, direct, why)) {
            result(false, what, why.empty() ? "no memory" : why);
            release(p);
            return;
        }
        cudaGraph_t graph = nullptr;
        cudaGraphExec_t exec = nullptr;
        int err = cudaStreamBeginCapture(p.stream, cudaStreamCaptureModeGlobal);
        const int call_err = err ? err : call(p);
        const cudaError_t end = cudaStreamEndCapture(p.stream, &graph);
        err = call_err ? call_err : end ? end : cudaGraphInstantiate(&exec, graph, 0);
        for (int r = 0; r < REPLAYS && !err && why.empty(); ++r) {
            if (!reset_c(p) || (err = cudaGraphLaunch(exec, p.stream)) != cudaSuccess || !read_c(p, got, why))
                break;
            why = differs(got, direct);
            if (!why.empty())
                why = "replay " + std::to_string(r) + ": " + why;
        }
        result(!err && why.empty(), what, err ? "capture: " + error_name(err) : why);
        cudaGetLastError(); // a failed capture's, for the next shape
        if (exec)
            cudaGraphExecDestroy(exec);
        if (graph)
            cudaGraphDestroy(graph);
        release(p);
    }
}

// The device's default pool, as the program left it: it holds POOL_HELD
// bytes of the program's, and the call must leave its release threshold and
// its reserved and used memory as they were. The shape copies A and B for
// TMA and splits its tiles (steps 11 and up): all the memory a call takes.
constexpr size_t POOL_HELD = (size_t)256 << 20;
static void case_pool()
{
    int device = 0;
    cudaMemPool_t pool;
    cudaGetDevice(&device);
    cudaDeviceGetDefaultMemPool(&pool, device);
    problem p;
    void *held = nullptr;
    std::vector<float> got;
    std::string why;
    if (!make(p, 128, 4100, 4100, 1.0f, 0.0f, 10000) ||
        cudaMallocAsync(&held, POOL_HELD, p.stream) != cudaSuccess || cudaStreamSynchronize(p.stream) != cudaSuccess) {
        result(false, "pool: set up", error_name(cudaGetLastError()));
        return;
    }
    // The high-water marks, set back to the pool's use now, show any memory the call took from it and gave back.
    const cudaMemPoolAttr ATTRS[] = { cudaMemPoolAttrReleaseThreshold, cudaMemPoolAttrReservedMemCurrent,
                                      cudaMemPoolAttrUsedMemCurrent, cudaMemPoolAttrReservedMemHigh,
                                      cudaMemPoolAttrUsedMemHigh };
    const char *const NAMES[] = { "release threshold", "reserved", "used", "most reserved", "most used" };
    constexpr int COUNT = sizeof ATTRS / sizeof ATTRS[0];
    uint64_t before[COUNT], after[COUNT], zero = 0;
    cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &zero);
    cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero);
    for (int i = 0; i < COUNT; ++i)
        cudaMemPoolGetAttribute(pool, ATTRS[i], &before[i]);
    const bool ran = run(p, got, why) && (why = wrong_against_reference(p, got)).empty();
    for (int i = 0; i < COUNT; ++i)
        cudaMemPoolGetAttribute(pool, ATTRS[i], &after[i]);
    for (int i = 0; i < COUNT; ++i)
        if (after[i] != before[i])
            why += (why.empty() ? "" : ", ") + std::string(NAMES[i]) + " " + std::to_string(before[i]) + " -> " +
                   std::to_string(after[i]);
    result(ran && why.empty(),
           "pool: the program holds " + std::to_string(POOL_HELD >> 20) + " MB of the default pool; a call of " +
               shape_name(p.M, p.N, p.K) + " takes none of it and leaves its release threshold as it was",
           why);
    cudaFreeAsync(held, p.stream);
    release(p);
}

// alpha = 0 with NaN in every element of A and B: BLAS reads neither, and C = beta * C.
static void case_alpha0()
{
    for (const float beta : { 0.5f, 0.0f }) {
        problem p;
        std::vector<float> got;
        std::string why;
        const std::string what = "alpha0: " + shape_name(300, 1000, 520) + ", alpha=0, beta=" + std::to_string(beta) +
                                 ", A and B all NaN: C = beta * C";
        if (!make(p, 300, 1000, 520, 0.0f, beta, 11000) ||
            cudaMemset(p.A, 0xff, (size_t)p.M * p.K * sizeof(input_t)) != cudaSuccess ||
            cudaMemset(p.B, 0xff, (size_t)p.K * p.N * sizeof(input_t)) != cudaSuccess) {
            result(false, what, "set up: " + error_name(cudaGetLastError()));
            return;
        }
        std::vector<float> want(p.c0.size() ? p.c0.size() : (size_t)p.M * p.N, 0.0f);
        for (size_t i = 0; i < p.c0.size(); ++i)
            want[i] = beta * p.c0[i];
        const bool ran = run(p, got, why);
        result(ran && differs(got, want).empty(), what, ran ? differs(got, want) : why);
        release(p);
    }
}

// An error an earlier CUDA call of this thread left unread (cudaSetDevice
// of a device that is not there) is the call's answer: C untouched, the
// error read; the next call runs.
static void case_earlier()
{
    problem p;
    std::vector<float> got, after;
    std::string why;
    const std::string what = "earlier: an error left unread by cudaSetDevice(-1): returned, C untouched; the next "
                             "call runs";
    if (!make(p, 513, 1025, 257, 1.0f, 0.5f, 12000) || !reset_c(p)) {
        result(false, what, "set up: " + error_name(cudaGetLastError()));
        return;
    }
    const cudaError_t left = cudaSetDevice(-1);
    const int err = call(p);
    const bool untouched = read_c(p, got, why) && got == p.c0;
    const bool ran = run(p, after, why) && (why = wrong_against_reference(p, after)).empty();
    result(left != cudaSuccess && err == left && untouched && ran, what,
           "left " + error_name(left) + ", returned " + error_name(err) + (untouched ? "" : ", C changed") +
               (ran ? "" : ", then " + why));
    release(p);
}

// FP8's scales where gemm.h allows them, a float past a 16-byte boundary (TMA
// reads from one: the call copies them): the bits of the call with them on it.
static void case_scales()
{
    problem p;
    std::vector<float> aligned, off;
    std::string why;
    const std::string what = "scales: " + shape_name(300, 1000, 520) + ", sa and sb a float past 16 bytes: the bits "
                             "of the call with them on 16";
    float *sa = nullptr, *sb = nullptr; // copies of p's, a float in
    const bool made = make(p, 300, 1000, 520, 1.0f, 0.5f, 13000) &&
                      cudaMalloc(&sa, (p.a_scales.size() + 1) * sizeof(float)) == cudaSuccess &&
                      cudaMalloc(&sb, (p.b_scales.size() + 1) * sizeof(float)) == cudaSuccess &&
                      cudaMemcpy(sa + 1, p.sa, p.a_scales.size() * sizeof(float), cudaMemcpyDefault) == cudaSuccess &&
                      cudaMemcpy(sb + 1, p.sb, p.b_scales.size() * sizeof(float), cudaMemcpyDefault) == cudaSuccess;
    problem q = p; // the same call, with the copies
    q.sa = sa + 1, q.sb = sb + 1;
    if (!made)
        result(false, what, "set up: " + error_name(cudaGetLastError()));
    else if (!run(p, aligned, why) || !(why = wrong_against_reference(p, aligned)).empty() || !run(q, off, why))
        result(false, what, why);
    else
        result(differs(aligned, off).empty(), what, differs(aligned, off));
    cudaFree(sa), cudaFree(sb);
    release(p);
}

// The elements of C[0 .. n) that hold NaN, added into *count.
__global__ void count_nan(const float *C, long long n, unsigned long long *count)
{
    unsigned long long mine = 0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        mine += isnan(C[i]);
    atomicAdd(count, mine);
}

// Element i of a matrix of the large case (seed: which one): a multiple of
// 2^-10 in [-1, 1), exact in half and float, from a hash of i, so that no
// stretch of the matrix repeats another and a wrong offset reads other values.
__host__ __device__ float hashed(uint64_t i, uint64_t seed)
{
    uint64_t z = i * 0x9E3779B97F4A7C15ull + seed; // splitmix64's finish
    z = (z ^ z >> 30) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ z >> 27) * 0x94D049BB133111EBull;
    return (float)((z ^ z >> 31) >> 53) * 0x1p-10f - 1.0f;
}

__global__ void fill_hashed(input_t *X, long long n, uint64_t seed)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        X[i] = (input_t)hashed(i, seed);
}

// Element i of X as the GPU holds it: hashed, rounded to input_t (fill_hashed) where that is FP8 (else exact).
static double held(uint64_t i, uint64_t seed)
{
    return FP8 ? e4m3_to_float(float_to_e4m3(hashed(i, seed))) : hashed(i, seed);
}

// FP8's scales of the large case: all 1.
__global__ void fill_ones(float *x, long long n)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        x[i] = 1.0f;
}

// A large C, A or B, the other sizes small; A and B made on the GPU
// (hashed). Past 2^32 elements, whose last rows lie past 32-bit offsets,
// signed or not, where the step takes it (C 32800 x 131072 with K = 64, A
// 65601 x 65536, B 65536 x 65601); else just below 2^31 (16383 rows of C,
// 32767 of A or columns of B). Every element of C written, and blocks of its
// first, middle and last rows and columns right against a double-precision
// sum. Skipped on a GPU with too little memory for it.
static void case_large(char which)
{
    const int most = gemm_max_elements > 1LL << 32 ? 32800 : 16383; // rows of C; twice that of A, columns of B
    const int M = which == 'C' ? most : which == 'A' ? 2 * most + 1 : 64, N = which == 'C' ? 131072 : which == 'B' ? 2 * most + 1 : 64,
              K = which == 'C' ? 64 : 65536, SIDE = 16; // rows and columns of each block checked
    const long long elements = which == 'C' ? (long long)M * N : which == 'A' ? (long long)M * K : (long long)K * N;
    const std::string what = std::string("large ") + which + ": " + shape_name(M, N, K) + ", " +
                             std::to_string(elements) + " elements of " + which +
                             ": all of C written, its first, middle and last rows and columns right";
    constexpr uint64_t SEED_A = 1, SEED_B = 2;
    const double bytes = ((double)M * K + (double)K * N) * sizeof(input_t) + 4.0 * M * N;
    size_t free_bytes = 0, total_bytes = 0;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess && bytes > 0.95 * free_bytes) {
        printf("SKIP  %s: needs %.1f GB of GPU memory, %.1f GB free\n", what.c_str(), bytes / 1e9, free_bytes / 1e9);
        return;
    }
    problem p;
    p.M = M, p.N = N, p.K = K;
    unsigned long long *count = nullptr, nan = 0;
    int err = -1;
    const long long a_scales = FP8 ? (K + 127) / 128 * (long long)M : 1, b_scales = FP8 ? (K + 127) / 128 * ((N + 127) / 128LL) : 1;
    if (cudaStreamCreateWithFlags(&p.stream, cudaStreamNonBlocking) != cudaSuccess ||
        cudaMalloc(&p.A, (size_t)M * K * sizeof(input_t)) != cudaSuccess ||
        cudaMalloc(&p.B, (size_t)K * N * sizeof(input_t)) != cudaSuccess ||
        cudaMalloc(&p.sa, a_scales * sizeof(float)) != cudaSuccess ||
        cudaMalloc(&p.sb, b_scales * sizeof(float)) != cudaSuccess ||
        cudaMalloc(&p.C, (size_t)M * N * sizeof(float)) != cudaSuccess || cudaMalloc(&count, sizeof *count) != cudaSuccess) {
        result(false, what, "not enough GPU memory");
        cudaFree(count);
        release(p);
        return;
    }
    fill_hashed<<<4096, 256, 0, p.stream>>>((input_t *)p.A, (long long)M * K, SEED_A);
    fill_hashed<<<4096, 256, 0, p.stream>>>((input_t *)p.B, (long long)K * N, SEED_B); // FP8: N x K
    fill_ones<<<4096, 256, 0, p.stream>>>(p.sa, a_scales);
    fill_ones<<<4096, 256, 0, p.stream>>>(p.sb, b_scales);
    if ((err = launch(p)) != cudaSuccess || cudaMemsetAsync(count, 0, sizeof *count, p.stream) != cudaSuccess) {
        result(false, what, err > 0 ? "gemm_launch returned " + error_name(err) : "C not reset");
        cudaFree(count);
        release(p);
        return;
    }
    count_nan<<<4096, 256, 0, p.stream>>>(p.C, (long long)M * N, count);
    const cudaError_t e = cudaStreamSynchronize(p.stream);
    cudaMemcpy(&nan, count, sizeof nan, cudaMemcpyDeviceToHost);
    double worst = 0.0; // the error over its allowance (check.c: truncated or FP8 sums of K products, each |x| <= 1)
    const double allowance = tolerance_factor(FP8 ? SUM_FP8 : SUM_TRUNCATED, K) * 0x1p-24 * K;
    std::vector<float> row(SIDE);
    for (int r0 : { 0, M / 2, M - SIDE })
        for (int c0 : { 0, N / 2, N - SIDE })
            for (int r = r0; e == cudaSuccess && r < r0 + SIDE; ++r) {
                cudaMemcpy(row.data(), p.C + (size_t)r * N + c0, SIDE * sizeof(float), cudaMemcpyDeviceToHost);
                for (int c = c0; c < c0 + SIDE; ++c) {
                    double ref = 0.0;
                    for (int k = 0; k < K; ++k)
                        ref += held((uint64_t)r * K + k, SEED_A) *
                               held(FP8 ? (uint64_t)c * K + k : (uint64_t)k * N + c, SEED_B);
                    worst = std::fmax(worst, std::fabs(row[c - c0] - ref) / allowance);
                }
            }
    result(e == cudaSuccess && nan == 0 && worst <= 1.0, what,
           e != cudaSuccess ? error_name(e)
                            : std::to_string(nan) + " elements not written (NaN), worst error " +
                                  std::to_string(worst) + " of the allowance");
    cudaFree(count);
    release(p);
}

int main(int argc, char **argv)
{
    const std::string name = argc > 1 ? argv[1] : "";
    const int first = name == "busy" ? 4 : 2; // the first size of the shapes that end the command line
    std::vector<shape> shapes;
    for (int i = first; i + 2 < argc; i += 3)
        shapes.push_back({ atoi(argv[i]), atoi(argv[i + 1]), atoi(argv[i + 2]), 1.0f, 0.5f });
    const bool sized = argc > first && (argc - first) % 3 == 0;
    if (name == "threads" && argc == 2)
        case_threads();
    else if (name == "streams" && argc == 2)
        case_streams();
    else if (name == "graph" && argc == 2)
        case_graph();
    else if (name == "pool" && argc == 2)
        case_pool();
    else if (name == "alpha0" && argc == 2)
        case_alpha0();
    else if (name == "earlier" && argc == 2)
        case_earlier();
    else if (name == "scales" && argc == 2 && FP8)
        case_scales();
    else if (name == "busy" && sized)
        case_busy(atof(argv[2]), atof(argv[3]), shapes);
    else if (name == "reset" && argc == 2)
        case_reset();
    else if (name == "zero" && argc == 2)
        case_zero();
    else if (name == "limits" && argc == 2)
        case_limits();
    else if (name == "oom" && argc == 5)
        case_oom(shapes[0]);
    else if (name == "large" && argc == 3 && strlen(argv[2]) == 1 && strchr("CAB", argv[2][0]))
        case_large(argv[2][0]);
    else {
        fprintf(stderr, "usage: test_launch threads | streams | graph | pool | alpha0 | earlier | scales (FP8) | "
                        "busy SECONDS HOLD M N K [M N K ...] | reset | zero | limits | oom M N K | large C|A|B\n");
        return 2;
    }
    return failures > 0;
}
