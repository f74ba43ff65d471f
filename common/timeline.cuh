/*
 * Stamps for scripts/timeline.sh: where each consumer of each block spent
 * its time. Built with -DGEMM_TIMELINE (make stepNN_name/timeline), a kernel's
 * TIMELINE(kind) lines record the SM, the block, the consumer, the phase that
 * starts and the %globaltimer; in every other build they are nothing. From
 * step 10 on each kernel has four, the same in each, left out of the lessons
 * (scripts/lesson.sh): a part's multiply starts, its fixup, its store, done.
 * A stamp costs a fraction of a microsecond (an atomic add on one counter,
 * from every SM): a phase with nothing in it, as step 10's fixup, shows as
 * that sliver.
 */
#ifndef TIMELINE_CUH
#define TIMELINE_CUH

#ifdef GEMM_TIMELINE
#include <cuda_runtime.h>

enum { timeline_multiply, timeline_fixup, timeline_store, timeline_done };
constexpr unsigned TIMELINE_MOST = 1u << 22; // stamps kept per call: more tiles than any timeline draws
constexpr unsigned TIMELINE_WARPGROUP = 128;    // threads that issue one wgmma: a consumer

struct timeline_stamp { unsigned long long ns; unsigned sm, block, phase; }; // phase: consumer * 4 + kind
__device__ timeline_stamp timeline_stamps[TIMELINE_MOST];
__device__ unsigned timeline_count;

// A warpgroup's first thread stamps for the warpgroup (its consumer).
__device__ __forceinline__ void timeline_mark(int kind)
{
    if (threadIdx.x % TIMELINE_WARPGROUP != 0)
        return;
    unsigned long long ns;
    unsigned sm;
    asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(ns));
    asm volatile("mov.u32 %0, %%smid;\n" : "=r"(sm));
    const unsigned i = atomicAdd(&timeline_count, 1);
    if (i < TIMELINE_MOST)
        timeline_stamps[i] = { ns, sm, blockIdx.x, (threadIdx.x / TIMELINE_WARPGROUP - 1) * 4 + kind };
}
#define TIMELINE(kind) timeline_mark(timeline_##kind)

// The stamps since the last read, at most `most`, into `out` (host memory); the count starts again. -1 on an error.
extern "C" int timeline_read(timeline_stamp *out, int most)
{
    unsigned n = 0, zero = 0;
    if (cudaDeviceSynchronize() != cudaSuccess || cudaMemcpyFromSymbol(&n, timeline_count, sizeof n) != cudaSuccess)
        return -1;
    n = n < TIMELINE_MOST ? n : TIMELINE_MOST;
    n = n < (unsigned)most ? n : (unsigned)most;
    if (cudaMemcpyFromSymbol(out, timeline_stamps, n * sizeof *out) != cudaSuccess ||
        cudaMemcpyToSymbol(timeline_count, &zero, sizeof zero) != cudaSuccess)
        return -1;
    return (int)n;
}
#else
#define TIMELINE(kind) ((void)0)
#endif

#endif
