/*
 * What every step's gemm_launch does before its product (gemm.h): it returns
 * an error an earlier CUDA call left unread, refuses sizes out of range, and
 * does itself what BLAS does where there is nothing to multiply. And how a
 * step keeps what it looks up once per CUDA context. The same in every step,
 * so it lives here.
 */
#ifndef LAUNCH_CUH
#define LAUNCH_CUH

#include "gemm.h"
#include "timeline.cuh"

#include <cuda.h>
#include <cuda_runtime.h>

#include <deque>
#include <mutex>
#include <utility>

// A planner's candidate's time, us, with its terms (steps 11 on): its tile (rows x cols, blocks a cluster), units,
// the busiest unit's k-tiles, stores and parts, and its modelled microseconds: the multiply, with the stores and the
// fixup, memory's. In a step's build the time alone, the terms never evaluated; common/plan_terms.cuh, for
// scripts/plan.sh and make test, also keeps the terms.
#ifndef PLAN_TERMS
#define PLAN_TERMS(rows, cols, cluster, units, k_tiles, stores, parts, multiply_us, compute_us, memory_us, us) (us)
#endif

constexpr int SCALE_THREADS = 256, SCALE_BLOCKS_MOST = 65536;

// C = beta * C over its n elements, C not read when beta == 0: the product of
// an M x 0 and a 0 x N matrix, or one scaled by alpha = 0.
__global__ void scale_kernel(float *C, long long n, float beta)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        C[i] = beta == 0.0f ? 0.0f : beta * C[i];
}

// gemm_launch's answer where it has no product to compute: an earlier call's
// unread error, an error for sizes out of range, success for M or N = 0, and
// success once C = beta * C is queued for K = 0 or alpha = 0 (A and B unread).
// -1 where there is a product to compute.
static int no_product(int M, int N, int K, float alpha, float beta, float *C, cudaStream_t stream)
{
    if (const cudaError_t earlier = cudaGetLastError(); earlier != cudaSuccess)
        return earlier;
    if (M < 0 || N < 0 || K < 0 || M > GEMM_MAX_SIDE || N > GEMM_MAX_SIDE || K > GEMM_MAX_SIDE ||
        (long long)M * K > gemm_max_elements || (long long)K * N > gemm_max_elements ||
        (long long)M * N > gemm_max_elements)
        return cudaErrorInvalidValue;
    if (M == 0 || N == 0)
        return cudaSuccess;
    if (K > 0 && alpha != 0.0f)
        return -1;
    const long long n = (long long)M * N, blocks = (n + SCALE_THREADS - 1) / SCALE_THREADS;
    scale_kernel<<<(unsigned)(blocks < SCALE_BLOCKS_MOST ? blocks : SCALE_BLOCKS_MOST), SCALE_THREADS, 0, stream>>>(
        C, n, beta);
    return cudaGetLastError();
}

// A driver function, from the runtime (no link to libcuda): null if the driver has none.
template <typename F>
static F driver_function(const char *name, int version)
{
    void *f = nullptr;
    cudaDriverEntryPointQueryResult found;
    return cudaGetDriverEntryPointByVersion(name, &f, version, cudaEnableDefault, &found) == cudaSuccess &&
                   found == cudaDriverEntryPointSuccess
               ? (F)f
               : nullptr;
}

// The id of this thread's CUDA context, which CUDA never gives another: a
// cudaDeviceReset ends the context, and the next call's is a new one. 0 if
// the driver cannot say.
static unsigned long long context_id()
{
    static const auto current = driver_function<decltype(&cuCtxGetCurrent)>("cuCtxGetCurrent", 4000);
    static const auto id_of = driver_function<decltype(&cuCtxGetId)>("cuCtxGetId", 12000);
    CUcontext context = nullptr;
    unsigned long long id = 0;
    if (current && current(&context) == CUDA_SUCCESS && !context) { // none yet in this thread: the runtime's own
        int device = 0;
        cudaGetDevice(&device);
        cudaSetDevice(device);
        current(&context);
    }
    return context && id_of && id_of(context, &id) == CUDA_SUCCESS ? id : 0;
}

// What a step looks up once per context (Facts: its own struct, filled by
// find(Facts &) at the context's first call, under a lock): kernel
// attributes, how many blocks fit, the SMs. Read without the lock after
// that; it never changes while the context lives.
template <typename Facts, typename Find>
static const Facts &per_context(Find find)
{
    static std::mutex lock;
    static std::deque<std::pair<unsigned long long, Facts>> known; // a deque: what it holds never moves
    const unsigned long long id = context_id();
    std::lock_guard<std::mutex> hold(lock);
    for (const auto &k : known)
        if (k.first == id)
            return k.second;
    known.emplace_back(id, Facts{});
    find(known.back().second);
    return known.back().second;
}

#endif
