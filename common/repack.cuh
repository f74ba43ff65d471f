/*
 * An operand that TMA can read, for the steps that load with TMA (09 on).
 * TMA reads a matrix whose rows start 16-byte aligned: its row pitch a
 * whole number of 16-byte pieces (8 halves), its address aligned. For an
 * operand whose rows do not (K or N not a multiple of 8, an unaligned
 * pointer), the launcher first makes a copy that TMA can read, in room kept
 * from call to call. A launcher may ask for the copy of rows TMA can read
 * too (`lines`): step 11 does, for B, where rows start off 32-byte sectors.
 * The same in every step that uses it, so it lives here; each launcher says
 * what the copy costs and when it pays.
 */
#ifndef REPACK_CUH
#define REPACK_CUH

#include <cuda_fp16.h>
#include <stdint.h>

// Room in GPU memory, kept from call to call (cudaMalloc waits for the GPU)
// and grown when a call needs more.
struct room {
    void *p;
    size_t bytes;
};

// Makes r at least `bytes` long, zeroed when new (step 11's flags start at
// zero); false if the GPU has too little memory.
static bool grow(room &r, size_t bytes)
{
    if (bytes <= r.bytes)
        return true;
    cudaFree(r.p);
    r = {};
    if (cudaMalloc(&r.p, bytes) != cudaSuccess)
        return false;
    r.bytes = bytes;
    return cudaMemset(r.p, 0, bytes) == cudaSuccess;
}

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

// X itself if TMA can read it (and no copy is asked for: `lines`), or a
// copy in r, its rows `pitch` halves apart (whole lines, which TMA reads
// fastest); null if the GPU has too little memory for the copy.
static const void *for_tma(const void *X, int rows, int cols, int &pitch, room &r, bool lines = false)
{
    pitch = cols;
    if (cols % REPACK_PIECE == 0 && (uintptr_t)X % 16 == 0 && !lines)
        return X;
    pitch = (cols + REPACK_LINE - 1) / REPACK_LINE * REPACK_LINE;
    if (!grow(r, (size_t)rows * pitch * sizeof(__half)))
        return nullptr;
    const long long pieces = (long long)rows * (pitch / REPACK_PIECE);
    repack_kernel<<<(unsigned)((pieces + 255) / 256), 256>>>((__half *)r.p, (const __half *)X, rows, cols, pitch);
    return r.p;
}

#endif
