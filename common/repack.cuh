/*
 * An operand that TMA can read, for the steps that load with TMA (09 on).
 * TMA reads a matrix whose rows start 16-byte aligned: its row pitch a
 * whole number of 16-byte pieces (8 halves), its address aligned. For an
 * operand whose rows do not (K or N not a multiple of 8, an unaligned
 * pointer), the launcher first makes a copy that TMA can read, in memory of
 * the call's own. The copy costs one read and one write of the operand
 * (4096 x 4100 halves: 67 MB, 14 us or more at 4.8 TB/s), which pays unless
 * the other side is a tile or two across, as the product reads the copy
 * once per row or column of tiles. The same in every step that uses it, so
 * it lives here.
 */
#ifndef REPACK_CUH
#define REPACK_CUH

#include "launch.cuh"

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

// This library's memory pool on the current device (gemm.h): made at the
// first call in each CUDA context, and never the device's default pool, whose
// settings are the program's. It keeps what calls hand back (its release
// threshold is the most), so that the next call finds the memory there and
// need not ask the driver for it.
struct memory_pool {
    cudaMemPool_t pool = nullptr;
};

static cudaMemPool_t library_pool()
{
    return per_context<memory_pool>([](memory_pool &m) {
        int device = 0;
        cudaGetDevice(&device);
        cudaMemPoolProps props = {};
        props.allocType = cudaMemAllocationTypePinned;
        props.location.type = cudaMemLocationTypeDevice;
        props.location.id = device;
        uint64_t keep = UINT64_MAX;
        if (cudaMemPoolCreate(&m.pool, &props) == cudaSuccess)
            cudaMemPoolSetAttribute(m.pool, cudaMemPoolAttrReleaseThreshold, &keep);
        else
            m.pool = nullptr, cudaGetLastError(); // no pool: every call that needs memory fails, none else
    }).pool;
}

// The GPU memory of one call: taken from the library's pool in stream order,
// and handed back when the call returns, in stream order too, after the
// kernels that use it. No other call or thread ever sees it, and no call
// waits for another.
struct call_memory {
    static constexpr int MOST = 5; // the copies of A and B, step 11's workspace, and step 16's of the scales
    cudaStream_t stream;
    void *taken[MOST] = {};
    int count = 0;
    cudaError_t error = cudaSuccess; // why take() last returned null

    explicit call_memory(cudaStream_t s) : stream(s) {}
    // null if the GPU has too little memory, and error says so (read, so no later call sees it as its own)
    void *take(size_t bytes)
    {
        const cudaMemPool_t pool = library_pool();
        if (count == MOST || !pool)
            error = cudaErrorMemoryAllocation;
        else if (cudaMallocFromPoolAsync(&taken[count], bytes, pool, stream) != cudaSuccess)
            error = cudaGetLastError();
        else
            return taken[count++];
        return nullptr;
    }
    ~call_memory()
    {
        while (count > 0)
            cudaFreeAsync(taken[--count], stream);
    }
};

// Elements T (half, or FP8's bytes) in a 16-byte piece and in a 128-byte line.
template <typename T> constexpr int REPACK_PIECE = 16 / sizeof(T);
template <typename T> constexpr int REPACK_LINE = 128 / sizeof(T);

// A copy of the rows x cols matrix X whose rows start every `pitch` elements
// (whole pieces): a thread per piece of the copy, zeros past the end of a
// row.
template <typename T>
__global__ void repack_kernel(T *dst, const T *X, int rows, int cols, int pitch)
{
    constexpr int PIECE = REPACK_PIECE<T>;
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long r = i / (pitch / PIECE), c = i % (pitch / PIECE) * PIECE;
    __align__(16) T v[PIECE];
#pragma unroll
    for (int j = 0; j < PIECE; ++j)
        v[j] = r < rows && c + j < cols ? X[r * cols + c + j] : T();
    if (r < rows)
        *reinterpret_cast<uint4 *>(dst + i * PIECE) = *reinterpret_cast<const uint4 *>(v);
}

// The elements from one row of the copy to the next: whole lines, or whole pieces where a row is shorter than a line.
template <typename T>
static int repacked_pitch(int cols)
{
    const int unit = cols < REPACK_LINE<T> ? REPACK_PIECE<T> : REPACK_LINE<T>;
    return (cols + unit - 1) / unit * unit;
}

// X itself if TMA can read it, or a copy
// in memory of the call's (mem), its rows `pitch` halves apart: whole lines,
// which TMA reads fastest, for rows of a line or more; whole pieces for
// shorter ones. A copy is then at most twice X's bytes, or 16 bytes a row
// where a row is shorter than a piece. Null if the GPU has too little memory.
template <typename T = __half>
static const void *for_tma(const void *X, int rows, int cols, int &pitch, call_memory &mem)
{
    pitch = cols;
    if (cols % REPACK_PIECE<T> == 0 && (uintptr_t)X % 16 == 0)
        return X;
    pitch = repacked_pitch<T>(cols);
    T *copy = (T *)mem.take((size_t)rows * pitch * sizeof(T));
    if (!copy)
        return nullptr;
    const long long pieces = (long long)rows * (pitch / REPACK_PIECE<T>);
    repack_kernel<<<(unsigned)((pieces + 255) / 256), 256, 0, mem.stream>>>(copy, (const T *)X, rows, cols, pitch);
    return copy;
}

#endif
