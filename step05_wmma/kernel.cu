/*
 * step05_wmma: tensor cores through WMMA fragments; A and B are now half.
 *
 * What changed: the inputs are IEEE half (main.c switched them), and the
 * multiply-adds move from the FP32 units to the tensor cores. A tensor core
 * instruction is issued by a whole warp and multiplies small matrices: with
 * nvcuda::wmma a warp loads a 16 x 16 fragment of A and one of B from shared
 * memory and adds their product to a 16 x 16 accumulator fragment of float.
 * The structure is step 04's: a block stages BM x BK of A and BK x BN of B in
 * shared memory, double buffered, the next tile's 16-byte pieces waiting in
 * registers while the block computes, two blocks per SM. Each warp owns a
 * WM x WN warp tile, (WM / 16) x (WN / 16) accumulator fragments, so each
 * fragment of A it loads is used WN / 16 times and each of B WM / 16 times,
 * step 04's register reuse one level up.
 *
 * A fragment load reads 16 rows of 32 bytes at once. Unpadded, the rows of
 * the A tile (64 bytes) or the B tile (256 bytes) would put several of them on
 * the same banks; each row is padded by 16 bytes (PAD halves), which moves
 * consecutive rows to different banks.
 *
 * One thing moves in the loop. The tensor cores finish a tile so fast that
 * its loads are still on their way when the tile is done, and step 04's
 * stores at the bottom of the loop are moved by the compiler up between the
 * MMAs (the SASS shows it): a warp stalls there on loads it needs only for
 * the next tile, with half of its MMAs not yet issued. So the loop starts
 * with the stores of tile t + 1, loaded during the last iteration, and then
 * asks for tile t + 2: every load has a whole iteration to arrive, and a warp
 * that waits for one has no MMAs held up behind it.
 *
 * The epilogue cannot touch fragment elements directly (WMMA does not say
 * which thread holds which element), so each warp stores its accumulators to
 * shared memory, a 16-row strip at a time, and reads them back to apply alpha
 * and beta and write C with bounds checks.
 *
 * Why it is faster: one warp-wide 16 x 16 x 16 multiply is 4096 multiply-adds,
 * where one warp-wide FFMA of step 04 is 32, and the tensor cores get
 * through them many times faster than the FP32 units. The profiler shows
 * what holds the kernel back now: the tensor pipe is busy 50% of the time,
 * and warps wait mostly for shared memory (2.0 cycles per instruction
 * issued, for the fragment loads and behind bank conflicts: 9.3 million in a
 * 4096^3 run), then at the barrier (0.44) and for global memory (0.22).
 *
 * Loads from global memory are 16 bytes (8 halves) when K and N are multiples
 * of 8; the launcher picks that kernel or the one with element-wise,
 * bounds-checked loads and stores.
 *
 * Launch: a 1-D grid with one block of THREADS threads per BM x BN tile of C.
 * Warps sit (BM / WM) x (BN / WN) over the tile.
 *
 * Measured on the reference GPU (H200, CUDA 13.0, 4096^3, scripts/run_all.sh):
 * 313.50 TFLOPS, 42.9% of cuBLAS GemmEx (half in, float out), 6.78x step 04.
 */
#include "gemm.h"

#include <cuda_fp16.h>
#include <mma.h>
#include <stdint.h>

using namespace nvcuda;

constexpr int BM = 128; // rows of C per block
constexpr int BN = 128; // columns of C per block
constexpr int BK = 32;  // depth of the shared tiles
constexpr int WM = 64;  // rows of C per warp
constexpr int WN = 64;  // columns of C per warp
constexpr int FK = 16;  // a WMMA fragment is FK x FK (m16n16k16)

constexpr int WARPS_N = BN / WN;
constexpr int THREADS = 32 * (BM / WM) * WARPS_N;
constexpr int FM = WM / FK, FN = WN / FK;        // fragments per warp tile
constexpr int PAD = 8;                           // halves (16 bytes) per shared row
constexpr int AS_LD = BK + PAD, BS_LD = BN + PAD;
constexpr int CS_LD = WN + 4;                    // the epilogue's float rows
constexpr int A_LOADS = BM * BK / 8 / THREADS;   // 16-byte pieces of A's tile per thread
constexpr int B_LOADS = BK * BN / 8 / THREADS;   // 16-byte pieces of B's tile per thread

static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles cover the block tile");
static_assert(WM % FK == 0 && WN % FK == 0 && BK % FK == 0, "fragments cover the warp tile");
static_assert(A_LOADS * 8 * THREADS == BM * BK && B_LOADS * 8 * THREADS == BK * BN,
              "each thread loads whole 16-byte pieces of each tile");
static_assert(FK * WN / 4 % 32 == 0, "a warp's lanes share a strip's float4s evenly");
static_assert(THREADS / 32 * FK * CS_LD * sizeof(float) <= 2 * BM * AS_LD * sizeof(__half),
              "the epilogue's strips fit in the A tiles' shared memory");

// Eight consecutive halves (r, c..c+7) of the rows x cols matrix X, zero
// outside it. VEC: one 16-byte load; needs cols % 8 == 0 and an aligned X,
// so that c..c+7 are all inside or all outside.
template <bool VEC>
__device__ uint4 load8(const __half *X, int rows, int cols, int r, int c)
{
    if constexpr (VEC) {
        return r < rows && c < cols ? *reinterpret_cast<const uint4 *>(&X[r * cols + c])
                                    : make_uint4(0, 0, 0, 0);
    } else {
        uint32_t w[4] = {};
        if (r < rows)
#pragma unroll
            for (int i = 0; i < 8; ++i)
                if (c + i < cols)
                    w[i / 2] |= (uint32_t)__half_as_ushort(X[r * cols + c + i]) << (16 * (i % 2));
        return make_uint4(w[0], w[1], w[2], w[3]);
    }
}

// C(r, c..c+3) = alpha * v + beta * C(r, c..c+3), inside C only; with
// beta == 0, C is not read.
template <bool VEC>
__device__ void store4(float *C, int M, int N, int r, int c, float4 v, float alpha, float beta)
{
    if (r >= M)
        return;
    if constexpr (VEC) {
        if (c >= N)
            return;
        float4 *p = reinterpret_cast<float4 *>(&C[r * N + c]);
        float4 out = make_float4(alpha * v.x, alpha * v.y, alpha * v.z, alpha * v.w);
        if (beta != 0.0f) {
            const float4 old = *p;
            out.x += beta * old.x;
            out.y += beta * old.y;
            out.z += beta * old.z;
            out.w += beta * old.w;
        }
        *p = out;
    } else {
        const float vals[4] = { v.x, v.y, v.z, v.w };
        for (int i = 0; i < 4; ++i)
            if (c + i < N) {
                float *p = &C[r * N + c + i];
                *p = beta == 0.0f ? alpha * vals[i] : alpha * vals[i] + beta * *p;
            }
    }
}

// ---- load tiles, first half: this thread's 16-byte pieces of the tiles at
// k0, global -> registers
template <bool VEC>
__device__ void load_tiles(const __half *A, const __half *B, int M, int N, int K, int m0,
                           int n0, int k0, uint4 (&a)[A_LOADS], uint4 (&b)[B_LOADS])
{
#pragma unroll
    for (int i = 0; i < A_LOADS; ++i) {
        const int e = threadIdx.x + i * THREADS;
        a[i] = load8<VEC>(A, M, K, m0 + e / (BK / 8), k0 + e % (BK / 8) * 8);
    }
#pragma unroll
    for (int i = 0; i < B_LOADS; ++i) {
        const int e = threadIdx.x + i * THREADS;
        b[i] = load8<VEC>(B, K, N, k0 + e / (BN / 8), n0 + e % (BN / 8) * 8);
    }
}

// ---- load tiles, second half: registers -> shared
__device__ void store_tiles(__half (*As)[AS_LD], __half (*Bs)[BS_LD], const uint4 (&a)[A_LOADS],
                            const uint4 (&b)[B_LOADS])
{
#pragma unroll
    for (int i = 0; i < A_LOADS; ++i) {
        const int e = threadIdx.x + i * THREADS;
        *reinterpret_cast<uint4 *>(&As[e / (BK / 8)][e % (BK / 8) * 8]) = a[i];
    }
#pragma unroll
    for (int i = 0; i < B_LOADS; ++i) {
        const int e = threadIdx.x + i * THREADS;
        *reinterpret_cast<uint4 *>(&Bs[e / (BN / 8)][e % (BN / 8) * 8]) = b[i];
    }
}

template <bool VEC>
__global__ void __launch_bounds__(THREADS, 2)
gemm_kernel(int M, int N, int K, float alpha, const __half *__restrict__ A,
            const __half *__restrict__ B, float beta, float *__restrict__ C)
{
    __shared__ __align__(128) __half As[2][BM][AS_LD];
    __shared__ __align__(128) __half Bs[2][BK][BS_LD];

    // Blocks are numbered row by row over the tiles of C on a 1-D grid: a
    // 2-D grid allows only 65535 block rows, too few for a tall C.
    const int tiles_n = (N + BN - 1) / BN;
    const int m0 = blockIdx.x / tiles_n * BM, n0 = blockIdx.x % tiles_n * BN;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wm = warp / WARPS_N * WM, wn = warp % WARPS_N * WN; // warp tile in the block tile
    const int tiles_k = (K + BK - 1) / BK;

    // Tile 0 goes to shared memory, tile 1 waits in registers.
    uint4 a_next[A_LOADS], b_next[B_LOADS];
    load_tiles<VEC>(A, B, M, N, K, m0, n0, 0, a_next, b_next);
    store_tiles(As[0], Bs[0], a_next, b_next);
    load_tiles<VEC>(A, B, M, N, K, m0, n0, BK, a_next, b_next);
    __syncthreads();

    wmma::fragment<wmma::accumulator, FK, FK, FK, float> acc[FM][FN];
#pragma unroll
    for (int i = 0; i < FM; ++i)
#pragma unroll
        for (int j = 0; j < FN; ++j)
            wmma::fill_fragment(acc[i][j], 0.0f);

    for (int t = 0; t < tiles_k; ++t) {
        const int cur = t % 2;

        // ---- load tiles: tile t + 1, registers -> the other buffer (free
        // since the last barrier); then tile t + 2 into registers, with the
        // whole of this tile's compute to arrive in
        store_tiles(As[1 - cur], Bs[1 - cur], a_next, b_next);
        load_tiles<VEC>(A, B, M, N, K, m0, n0, (t + 2) * BK, a_next, b_next);

        // ---- compute: per FK-deep slice, FM fragments of A times FN of B
#pragma unroll
        for (int k = 0; k < BK; k += FK) {
            wmma::fragment<wmma::matrix_a, FK, FK, FK, __half, wmma::row_major> a[FM];
#pragma unroll
            for (int i = 0; i < FM; ++i)
                wmma::load_matrix_sync(a[i], &As[cur][wm + i * FK][k], AS_LD);
#pragma unroll
            for (int j = 0; j < FN; ++j) {
                wmma::fragment<wmma::matrix_b, FK, FK, FK, __half, wmma::row_major> b;
                wmma::load_matrix_sync(b, &Bs[cur][k][wn + j * FK], BS_LD);
#pragma unroll
                for (int i = 0; i < FM; ++i)
                    wmma::mma_sync(acc[i][j], a[i], b, acc[i][j]);
            }
        }

        __syncthreads(); // tile t + 1 is complete, and nobody reads tile t any more
    }

    // ---- epilogue: each warp takes its accumulators through its own FK x WN
    // strip of shared memory (the A tiles are free after the last barrier),
    // then applies alpha and beta and stores a float4 per lane and row
    float (*Cs)[CS_LD] = reinterpret_cast<float (*)[CS_LD]>(&As[0][0][0]) + warp * FK;
#pragma unroll
    for (int i = 0; i < FM; ++i) {
#pragma unroll
        for (int j = 0; j < FN; ++j)
            wmma::store_matrix_sync(&Cs[0][j * FK], acc[i][j], CS_LD, wmma::mem_row_major);
        __syncwarp();
#pragma unroll
        for (int q = 0; q < FK * WN / 4 / 32; ++q) {
            const int e = lane + q * 32;
            const int r = e / (WN / 4), c = e % (WN / 4) * 4;
            const float4 v = *reinterpret_cast<const float4 *>(&Cs[r][c]);
            store4<VEC>(C, M, N, m0 + wm + i * FK + r, n0 + wn + c, v, alpha, beta);
        }
        __syncwarp(); // the strip is read before the next fragments overwrite it
    }
}

extern "C" void gemm_launch(int M, int N, int K, float alpha, const void *A,
                            const void *B, float beta, float *C)
{
    const int tiles = ((M + BM - 1) / BM) * ((N + BN - 1) / BN);
    // 16-byte accesses need every row of A, B and C to start 16-byte aligned.
    const bool vec = K % 8 == 0 && N % 8 == 0 &&
                     ((uintptr_t)A | (uintptr_t)B | (uintptr_t)C) % 16 == 0;
    if (vec)
        gemm_kernel<true><<<tiles, THREADS>>>(M, N, K, alpha, (const __half *)A,
                                              (const __half *)B, beta, C);
    else
        gemm_kernel<false><<<tiles, THREADS>>>(M, N, K, alpha, (const __half *)A,
                                               (const __half *)B, beta, C);
}
