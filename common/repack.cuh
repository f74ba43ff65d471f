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

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

// The GPU memory of one call (gemm.h): taken from the device's default pool
// in stream order, and handed back when the call returns, in stream order too,
// after the kernels that use it. No other call or thread ever sees it, and
// no call waits for another. The pool keeps what a call hands back up to its
// release threshold, which take() raises to the pool's use, so that the next
// call finds the memory there and need not ask the driver for it.
struct call_memory {
    static constexpr int MOST = 3; // the copies of A and B, and step 11's workspace
    void *taken[MOST] = {};
    int count = 0;

    // null if the GPU has too little memory (cudaMallocAsync's error is then the thread's last error)
    void *take(size_t bytes)
    {
        int device = 0;
        cudaMemPool_t pool;
        uint64_t keep = 0, used = 0;
        cudaGetDevice(&device);
        if (count == MOST || cudaDeviceGetDefaultMemPool(&pool, device) != cudaSuccess ||
            cudaMallocAsync(&taken[count], bytes, 0) != cudaSuccess)
            return nullptr;
        cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
        cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used);
        if (keep < used)
            cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &used);
        return taken[count++];
    }
    ~call_memory()
    {
        while (count > 0)
            cudaFreeAsync(taken[--count], 0);
    }
};

constexpr int REPACK_PIECE = 8; // halves in a 16-byte piece
constexpr int REPACK_LINE = 64; // halves in a 128-byte line

// A copy of the rows x cols matrix X whose rows start every `pitch` halves
// (whole pieces): a thread per piece of the copy, zeros past the end of a
// row.
__global__ void repack_kernel(__half *dst, const __half *X, int rows, int cols, int pitch)
{
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long r = i / (pitch / REPACK_PIECE), c = i % (pitch / REPACK_PIECE) * REPACK_PIECE;
    __align__(16) __half v[REPACK_PIECE];
#pragma unroll
    for (int j = 0; j < REPACK_PIECE; ++j)
        v[j] = r < rows && c + j < cols ? X[r * cols + c + j] : __half();
    if (r < rows)
        *reinterpret_cast<uint4 *>(dst + i * REPACK_PIECE) = *reinterpret_cast<const uint4 *>(v);
}

// X itself if TMA can read it, or a copy
// in memory of the call's (mem), its rows `pitch` halves apart: whole lines,
// which TMA reads fastest, for rows of a line or more; whole pieces for
// shorter ones. A copy is then at most twice X's bytes, or 16 bytes a row
// where a row is shorter than a piece. Null if the GPU has too little memory.
static const void *for_tma(const void *X, int rows, int cols, int &pitch, call_memory &mem)
{
    pitch = cols;
    if (cols % REPACK_PIECE == 0 && (uintptr_t)X % 16 == 0)
        return X;
    const int unit = cols < REPACK_LINE ? REPACK_PIECE : REPACK_LINE;
    pitch = (cols + unit - 1) / unit * unit;
    __half *copy = (__half *)mem.take((size_t)rows * pitch * sizeof(__half));
    if (!copy)
        return nullptr;
    const long long pieces = (long long)rows * (pitch / REPACK_PIECE);
    repack_kernel<<<(unsigned)((pieces + 255) / 256), 256>>>(copy, (const __half *)X, rows, cols, pitch);
    return copy;
}

#endif
