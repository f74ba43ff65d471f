/*
 * step06_mma_ptx: the instructions under WMMA, ldmatrix and mma.sync, in
 * inline PTX, and a swizzled shared-memory layout.
 *
 * What changed: WMMA hid two things, and this step writes them out. A
 * fragment load is `ldmatrix`: each of a warp's 32 lanes gives the address
 * of one 16-byte row of an 8 x 8 matrix of halves, and ldmatrix.x4 loads
 * four such matrices at once, spread over the lanes in the layout the tensor
 * cores want. The multiply is `mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32`:
 * a 16 x 16 piece of A times a 16 x 8 piece of B added to a 16 x 8 float
 * accumulator. Because the layouts are now documented (the PTX ISA's
 * "Matrix Fragments for mma.m16n8k16"), the epilogue works on the
 * accumulator registers directly, with no trip through shared memory.
 *
 * The fragments, with lane = 4 * g + t (g = lane / 4, t = lane % 4); each
 * register holds two halves (or, in C, one float):
 *
 *   A, 16 x 16, four registers a0..a3     B, 16 x 8, two registers b0, b1
 *
 *            k 0..7    k 8..15                     n 0..7
 *   row g    a0        a2                 k 0..7   b0
 *   row g+8  a1        a3                 k 8..15  b1
 *
 *   with columns 2t, 2t+1 of each 8 x 8   with rows 2t, 2t+1 and column g
 *   block, so for a0:                     of each 8 x 8 block, so for b0:
 *
 *          k:  0,1  2,3  4,5  6,7                n:  0    1   ...  7
 *   row 0:     L0   L1   L2   L3          k 0,1:    L0   L4   ...  L28
 *   row 1:     L4   L5   L6   L7          k 2,3:    L1   L5   ...  L29
 *   ...                                   k 4,5:    L2   L6   ...  L30
 *   row 7:     L28  L29  L30  L31         k 6,7:    L3   L7   ...  L31
 *
 *   C, 16 x 8 floats, four registers: row g holds c0, c1 at columns 2t,
 *   2t+1, and row g+8 holds c2, c3 at the same columns.
 *
 * ldmatrix gives lane 4g + t the elements (g, 2t) and (g, 2t+1) of each 8 x 8
 * matrix: A's layout as it sits in shared memory. B sits there as K x N rows,
 * so its 8 x 8 matrices are loaded with .trans, which gives lane 4g + t the
 * elements (2t, g) and (2t+1, g): B's layout. For a 16 x 16 piece, lanes 0-7
 * point at rows 0-7 of the first 8 columns, lanes 8-15 at rows 8-15, lanes
 * 16-31 the same for the next 8 columns: lane l points at row l % 16, piece
 * l / 16, for A and for B.
 *
 * ldmatrix reads one 16-byte piece from each of 8 rows at once. Shared
 * memory serves 128 bytes per pass, 8 pieces, if they lie in 8 different
 * 16-byte columns of banks. Step 05 padded each row to get there; here the
 * rows stay dense and the piece's column is XOR-ed with bits of its row
 * number (swizzle()), which spreads any 8 consecutive rows over the 8 columns
 * and keeps every 16-byte store of the loader conflict-free too.
 *
 * One more change is in the loader: a 16-byte load outside the matrix reads
 * a global block of zeros instead of being skipped (load8()). A skipped load
 * needs its register cleared first, and the clear had to wait until the
 * store at the top of the loop had read the register's previous tile.
 *
 * What it buys: control and a clean compute loop, and a little speed: the
 * compute loop was not what held step 05 back. The epilogue no longer
 * goes through shared memory, and with the swizzle the shared-memory bank
 * conflicts of a 4096^3 run drop from 9.3 million to 183 thousand. A warp
 * tile is FM x FN mma.sync fed by FM + FN / 2 ldmatrix.x4 per slice. The
 * profiler reads much as for step 05: the tensor pipe is busy 54% of the
 * time; warps wait for ldmatrix results before their first mma.sync of a
 * slice (1.46 cycles per instruction issued), at the barrier (0.50) and for
 * global memory (0.80). A warp has nothing to do while its fragments load,
 * and a block stalls at every tile's barrier; step 07 removes both.
 *
 * Loads from global memory are 16 bytes (8 halves) when K and N are multiples
 * of 8; the launcher picks that kernel or the one with element-wise,
 * bounds-checked loads and stores.
 *
 * Launch: a 1-D grid with one block of THREADS threads per BM x BN tile of C.
 * Warps sit (BM / WM) x (BN / WN) over the tile.
 *
 * Measured on the reference GPU (H200, CUDA 13.0, 4096^3, scripts/run_all.sh):
 * 336.70 TFLOPS, 46.0% of cuBLAS GemmEx (half in, float out), 1.07x step 05.
 */
#include "gemm.h"

#include <cuda_fp16.h>
#include <stdint.h>

constexpr int BM = 128; // rows of C per block
constexpr int BN = 128; // columns of C per block
constexpr int BK = 32;  // depth of the shared tiles
constexpr int WM = 64;  // rows of C per warp
constexpr int WN = 64;  // columns of C per warp
constexpr int MMA_M = 16, MMA_N = 8, MMA_K = 16; // mma.sync.m16n8k16

constexpr int WARPS_N = BN / WN;
constexpr int THREADS = 32 * (BM / WM) * WARPS_N;
constexpr int FM = WM / MMA_M, FN = WN / MMA_N;  // mma tiles per warp tile
constexpr int A_CHUNKS = BK / 8, B_CHUNKS = BN / 8; // 16-byte pieces per shared row
constexpr int A_LOADS = BM * BK / 8 / THREADS;   // 16-byte pieces of A's tile per thread
constexpr int B_LOADS = BK * BN / 8 / THREADS;   // 16-byte pieces of B's tile per thread

static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles cover the block tile");
static_assert(WM % MMA_M == 0 && WN % (2 * MMA_N) == 0 && BK % MMA_K == 0,
              "mma tiles cover the warp tile; B's are loaded in pairs");
static_assert(A_LOADS * 8 * THREADS == BM * BK && B_LOADS * 8 * THREADS == BK * BN,
              "each thread loads whole 16-byte pieces of each tile");

// Where, in halves, 16-byte piece c of row r of a tile with CHUNKS pieces
// per row goes. A 128-byte line of banks holds 8 pieces; rows shorter than
// that share a line. XOR-ing c with the number of the row's line (or of the
// row) modulo 8 gives the 8 rows an ldmatrix reads together 8 different
// columns of banks.
template <int CHUNKS>
__device__ int swizzle(int r, int c)
{
    constexpr int ROWS_PER_LINE = CHUNKS >= 8 ? 1 : 8 / CHUNKS;
    constexpr int COLUMNS = CHUNKS >= 8 ? 8 : CHUNKS; // the XOR stays inside the row
    return (r * CHUNKS + (c ^ (r / ROWS_PER_LINE % COLUMNS))) * 8;
}

// Four 8 x 8 matrices of halves from shared memory; lane l gives the address
// of one row of matrix l / 8. .trans hands them out transposed.
__device__ void ldmatrix_x4(uint32_t (&r)[4], const __half *p)
{
    const uint32_t addr = (uint32_t)__cvta_generic_to_shared(p);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

__device__ void ldmatrix_x4_trans(uint32_t (&r)[4], const __half *p)
{
    const uint32_t addr = (uint32_t)__cvta_generic_to_shared(p);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

// d += a * b on the tensor cores: A 16 x 16, B 16 x 8, D 16 x 8 float.
__device__ void mma_16x8x16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2])
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// Sixteen zero bytes in global memory, for the 16-byte loads outside a matrix.
__device__ const uint4 zeros = {};

// Eight consecutive halves (r, c..c+7) of the rows x cols matrix X, zero
// outside it. VEC: one 16-byte load, from the zeros outside X so that the
// load needs no condition and the register is not cleared first (a clear
// would wait until the store of the tile before had read the register);
// needs cols % 8 == 0 and an aligned X, so that c..c+7 are all inside or all
// outside.
template <bool VEC>
__device__ uint4 load8(const __half *X, int rows, int cols, int r, int c)
{
    if constexpr (VEC) {
        return *(r < rows && c < cols ? reinterpret_cast<const uint4 *>(&X[r * cols + c]) : &zeros);
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

// C(r, c..c+1) = alpha * (x, y) + beta * C(r, c..c+1), inside C only; with
// beta == 0, C is not read.
template <bool VEC>
__device__ void store2(float *C, int M, int N, int r, int c, float x, float y, float alpha,
                       float beta)
{
    if (r >= M)
        return;
    if constexpr (VEC) {
        if (c >= N)
            return;
        float2 *p = reinterpret_cast<float2 *>(&C[r * N + c]);
        float2 out = make_float2(alpha * x, alpha * y);
        if (beta != 0.0f) {
            const float2 old = *p;
            out.x += beta * old.x;
            out.y += beta * old.y;
        }
        *p = out;
    } else {
        const float vals[2] = { x, y };
        for (int i = 0; i < 2; ++i)
            if (c + i < N) {
                float *p = &C[r * N + c + i];
                *p = beta == 0.0f ? alpha * vals[i] : alpha * vals[i] + beta * *p;
            }
    }
}

// ---- load tiles, first half: this thread's 16-byte pieces of the tiles at
// k0, global -> registers. Its pieces of a tile sit in one column of pieces,
// THREADS / CHUNKS rows apart, so row and column are found once and the rows
// step from there. The compiler schedules the loop better from this form
// than from threadIdx.x + i * THREADS as in store_tiles(): 46.6% of cuBLAS
// against 44.7%.
template <bool VEC>
__device__ void load_tiles(const __half *A, const __half *B, int M, int N, int K, int m0,
                           int n0, int k0, uint4 (&a)[A_LOADS], uint4 (&b)[B_LOADS])
{
    const int ar = threadIdx.x / A_CHUNKS, ac = threadIdx.x % A_CHUNKS;
    const int br = threadIdx.x / B_CHUNKS, bc = threadIdx.x % B_CHUNKS;
#pragma unroll
    for (int i = 0; i < A_LOADS; ++i)
        a[i] = load8<VEC>(A, M, K, m0 + ar + i * (THREADS / A_CHUNKS), k0 + ac * 8);
#pragma unroll
    for (int i = 0; i < B_LOADS; ++i)
        b[i] = load8<VEC>(B, K, N, k0 + br + i * (THREADS / B_CHUNKS), n0 + bc * 8);
}

// ---- load tiles, second half: registers -> shared, swizzled
__device__ void store_tiles(__half *As, __half *Bs, const uint4 (&a)[A_LOADS],
                            const uint4 (&b)[B_LOADS])
{
#pragma unroll
    for (int i = 0; i < A_LOADS; ++i) {
        const int e = threadIdx.x + i * THREADS;
        *reinterpret_cast<uint4 *>(&As[swizzle<A_CHUNKS>(e / A_CHUNKS, e % A_CHUNKS)]) = a[i];
    }
#pragma unroll
    for (int i = 0; i < B_LOADS; ++i) {
        const int e = threadIdx.x + i * THREADS;
        *reinterpret_cast<uint4 *>(&Bs[swizzle<B_CHUNKS>(e / B_CHUNKS, e % B_CHUNKS)]) = b[i];
    }
}

// The fragments of the warp tile at (wm, wn) for the MMA_K-deep slice at k:
// lane l points ldmatrix at row l % 16 and 16-byte piece l / 16 of each
// 16 x 16 piece of A and of B.
__device__ void load_fragments(uint32_t (&a)[FM][4], uint32_t (&b)[FN][2], const __half *As,
                               const __half *Bs, int wm, int wn, int k)
{
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int i = 0; i < FM; ++i)
        ldmatrix_x4(a[i], &As[swizzle<A_CHUNKS>(wm + i * MMA_M + lane % 16, k / 8 + lane / 16)]);
#pragma unroll
    for (int j = 0; j < FN; j += 2) {
        uint32_t r[4]; // k 0..7 and 8..15 of mma tile j, then of tile j + 1
        ldmatrix_x4_trans(r, &Bs[swizzle<B_CHUNKS>(k + lane % 16, (wn + j * MMA_N) / 8 + lane / 16)]);
        b[j][0] = r[0];
        b[j][1] = r[1];
        b[j + 1][0] = r[2];
        b[j + 1][1] = r[3];
    }
}

template <bool VEC>
__global__ void __launch_bounds__(THREADS, 2)
gemm_kernel(int M, int N, int K, float alpha, const __half *__restrict__ A,
            const __half *__restrict__ B, float beta, float *__restrict__ C)
{
    __shared__ __align__(128) __half As[2][BM * BK];
    __shared__ __align__(128) __half Bs[2][BK * BN];

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

    float acc[FM][FN][4] = {};
    for (int t = 0; t < tiles_k; ++t) {
        const int cur = t % 2;

        // ---- load tiles: tile t + 1, registers -> the other buffer (free
        // since the last barrier); then tile t + 2 into registers, with the
        // whole of this tile's compute to arrive in
        store_tiles(As[1 - cur], Bs[1 - cur], a_next, b_next);
        load_tiles<VEC>(A, B, M, N, K, m0, n0, (t + 2) * BK, a_next, b_next);

        // ---- compute: per MMA_K-deep slice, FM fragments of A times FN of B
#pragma unroll
        for (int k = 0; k < BK; k += MMA_K) {
            uint32_t a[FM][4], b[FN][2];
            load_fragments(a, b, As[cur], Bs[cur], wm, wn, k);
#pragma unroll
            for (int i = 0; i < FM; ++i)
#pragma unroll
                for (int j = 0; j < FN; ++j)
                    mma_16x8x16(acc[i][j], a[i], b[j]);
        }

        __syncthreads(); // tile t + 1 is complete, and nobody reads tile t any more
    }

    // ---- epilogue: alpha, beta, store, straight from the accumulators (rows
    // g and g + 8 of each mma tile, two neighbouring floats per row)
    const int g = lane / 4, tc = lane % 4 * 2;
#pragma unroll
    for (int i = 0; i < FM; ++i)
#pragma unroll
        for (int j = 0; j < FN; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h)
                store2<VEC>(C, M, N, m0 + wm + i * MMA_M + h * 8 + g, n0 + wn + j * MMA_N + tc,
                            acc[i][j][2 * h], acc[i][j][2 * h + 1], alpha, beta);
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
