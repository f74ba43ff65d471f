/*
 * step07_pipeline: a multi-stage cp.async pipeline, and the next fragments
 * loaded while the current ones multiply.
 *
 * What changed: in step 06 each thread carried the next tile through its
 * registers (a global load, and a store to shared memory one iteration
 * later), and only one tile was ever on its way. Here `cp.async` copies
 * 16 bytes from global straight into shared memory, no registers involved:
 * a thread issues the copies and goes on computing. Shared memory holds
 * STAGES tiles of A and B: while the block computes on one, the next ones
 * are landed or in flight. Each thread closes its copies of one tile with
 * `cp.async.commit_group`; `cp.async.wait_group STAGES - 3` at the top of
 * each iteration waits until only the newest STAGES - 3 groups are still on
 * their way, that is, until tile t + 1 has landed, and a barrier makes that
 * true for every thread's copies.
 *
 *   k-tile:    t        t+1      t+2      t+3      t+4          (STAGES = 5)
 *   stage:   t % 5    (t+1)%5  (t+2)%5  (t+3)%5  (t+4)%5 = (t-1)%5
 *            compute  landed   in flight in flight copies issued during t,
 *                                                  into the stage t-1 left
 *
 * The fragments are double-buffered too: while the tensor cores multiply
 * the fragments of one MMA_K-deep slice, the warp's ldmatrix for the next
 * slice are already issued, into the other half of a[2] and b[2]. At the
 * last slice of a tile the next slice is the first of tile t + 1, which is
 * why that tile must have landed when the iteration starts. The barrier
 * also tells every warp that the others are done reading tile t - 1, whose
 * stage this iteration's copies overwrite.
 *
 * Where the instructions go matters as much as what they are. A warp can
 * issue an mma.sync only every few cycles, and the other warp on its
 * scheduler fills the gaps; the copies' address arithmetic fits in those
 * gaps if the compiler can put it there. So the copies are spread over the
 * slices (A's tile in the first, B's in the last), each after the slice's
 * fragment loads: the compiler keeps shared-memory operations in program
 * order, and fragment loads queued behind copies came too late for the
 * next slice. With the copies of a tile in one block at the top of the
 * iteration, and the wait and barrier before the last slice, this loop ran
 * at 58% of cuBLAS with 4 stages; as it is, 61% with 4 stages and 64% with
 * 5, measured in the same run.
 *
 * With no registers spent on staging and several tiles in flight, a block
 * can be twice step 06's: 256 x 128 (8 warps, one block per SM), so each
 * byte copied feeds 85 flops instead of 64. Step 06's 128 x 128 tiles, two
 * blocks per SM, measured 56.5% of cuBLAS with an earlier version of this
 * pipeline, against 59.2% for these tiles in the same run. Five tiles of
 * this size take 120 KB, more than the 48 KB a block gets without asking,
 * so the kernel takes its shared memory as dynamic and the launcher raises
 * the limit; where a block cannot have 120 KB (compute capability 8.6 and
 * 8.9 allow 99 KB), it runs with four stages.
 *
 * Blocks run roughly in the order of their numbers. Row by row, the blocks
 * in flight at one time would span a few whole rows of C: all of B and a
 * little of A. Numbered down columns of GROUP_M tile rows, they cover a
 * squarer patch and share more of what they read in L2. That pays only once
 * B outgrows L2: at 4096^3 it measured the same as row by row, at 8192^3 2%
 * faster.
 *
 * Why it is faster: global memory latency is now hidden by several tiles
 * of work instead of part of one, no registers are spent on staging, and
 * ldmatrix latency hides behind the previous slice's mma.sync. The
 * profiler: the tensor pipe is busy 79% of the time (step 06: 54%); per
 * instruction issued, warps wait 0.23 cycles at the barrier (0.50) and 0.11
 * for ldmatrix results (1.46), and 1.68 cycles because the tensor pipe is
 * busy with the other warp's work, the one wait that is welcome. L2
 * delivers 5.2 TB/s, well below the 8 TB/s a plain cp.async copy kernel
 * draws from it on this GPU. The shape of the warp tile, the swizzle and
 * the fragments are step 06's.
 *
 * What is left: cuBLAS reaches its speed with Hopper's own warpgroup
 * instructions (wgmma), twice mma.sync's rate per cycle; the stores of C,
 * which no block overlaps with math, cost about 5% in an earlier version.
 *
 * The element-wise path (K or N not a multiple of 8) cannot use 16-byte
 * copies; it loads with bounds checks and stores to shared memory itself,
 * in the same place of the same pipeline.
 *
 * Launch: a 1-D grid with one block of THREADS threads per BM x BN tile of C,
 * smem_bytes(STAGES) of dynamic shared memory. Warps sit (BM / WM) x
 * (BN / WN) over the tile.
 *
 * Measured on the reference GPU (H200, CUDA 13.0, 4096^3, scripts/run_all.sh):
 * 470.63 TFLOPS, 64.3% of cuBLAS GemmEx (half in, float out), 1.40x step 06.
 */
#include "gemm.h"

#include <cuda_fp16.h>
#include <stdint.h>

constexpr int BM = 256; // rows of C per block
constexpr int BN = 128; // columns of C per block
constexpr int BK = 32;  // depth of the shared tiles
constexpr int WM = 64;  // rows of C per warp
constexpr int WN = 64;  // columns of C per warp
constexpr int GROUP_M = 8; // tile rows in one group of the block order
constexpr int MMA_M = 16, MMA_N = 8, MMA_K = 16; // mma.sync.m16n8k16

constexpr int WARPS_N = BN / WN;
constexpr int THREADS = 32 * (BM / WM) * WARPS_N;
constexpr int FM = WM / MMA_M, FN = WN / MMA_N;  // mma tiles per warp tile
constexpr int A_CHUNKS = BK / 8, B_CHUNKS = BN / 8; // 16-byte pieces per shared row
constexpr int A_LOADS = BM * BK / 8 / THREADS;   // 16-byte pieces of A's tile per thread
constexpr int B_LOADS = BK * BN / 8 / THREADS;   // 16-byte pieces of B's tile per thread
constexpr int KSLICES = BK / MMA_K;           // fragment loads per k-tile
// k-tiles in shared memory at once: launch() picks 5, or 4 where a block
// cannot have the shared memory for 5
constexpr int STAGES_MOST = 5, STAGES_FEWER = 4;

static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles cover the block tile");
static_assert(WM % MMA_M == 0 && WN % (2 * MMA_N) == 0 && BK % MMA_K == 0,
              "mma tiles cover the warp tile; B's are loaded in pairs");
static_assert(A_LOADS * 8 * THREADS == BM * BK && B_LOADS * 8 * THREADS == BK * BN,
              "each thread loads whole 16-byte pieces of each tile");
static_assert(KSLICES % 2 == 0, "slices alternate between the fragment buffers across tiles");

// Shared memory for STAGES tiles of A and B.
constexpr int smem_bytes(int stages)
{
    return stages * (BM * BK + BK * BN) * (int)sizeof(__half);
}

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

// Copies 16 bytes from global to shared memory in the background. With
// src_bytes == 0 it reads nothing and writes 16 zero bytes.
__device__ void cp_async16(__half *dst, const __half *src, int src_bytes)
{
    const uint32_t addr = (uint32_t)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
                 :
                 : "r"(addr), "l"(__cvta_generic_to_global(src)), "r"(src_bytes));
}

// Closes this thread's copies issued since the last commit into a group.
__device__ void cp_async_commit()
{
    asm volatile("cp.async.commit_group;\n");
}

// Waits until at most PENDING of this thread's groups are still in flight.
template <int PENDING>
__device__ void cp_async_wait()
{
    asm volatile("cp.async.wait_group %0;\n" : : "n"(PENDING) : "memory");
}

// Eight consecutive halves (r, c..c+7) of the rows x cols matrix X, zero
// outside it, loaded one by one: the path for any shape.
__device__ uint4 load8(const __half *X, int rows, int cols, int r, int c)
{
    uint32_t w[4] = {};
    if (r < rows)
#pragma unroll
        for (int i = 0; i < 8; ++i)
            if (c + i < cols)
                w[i / 2] |= (uint32_t)__half_as_ushort(X[r * cols + c + i]) << (16 * (i % 2));
    return make_uint4(w[0], w[1], w[2], w[3]);
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

// Shared 16-byte piece dst = halves (r, c..c+7) of the rows x cols matrix X,
// zero outside it. VEC: a cp.async, which completes in the background (needs
// cols % 8 == 0 and an aligned X, so that c..c+7 are all inside or all
// outside); otherwise element-wise loads and a plain store. Outside X the
// copy reads nothing but still gets a valid address, X itself: choosing the
// offset (0) rather than the pointer leaves one 64-bit add per copy, where
// choosing between two pointers cost registers the compiler then refilled
// from constant memory in the loop (59% of cuBLAS against 64%).
template <bool VEC>
__device__ void copy8(__half *dst, const __half *X, int rows, int cols, int r, int c)
{
    if constexpr (VEC) {
        const bool inside = r < rows && c < cols;
        cp_async16(dst, X + (inside ? (unsigned)(r * cols + c) : 0u), inside ? 16 : 0);
    } else {
        *reinterpret_cast<uint4 *>(dst) = load8(X, rows, cols, r, c);
    }
}

// ---- load tiles: this thread's 16-byte pieces of the tile of X whose
// top-left element is (r0, c0), global -> shared, swizzled, with CHUNKS
// pieces per row and LOADS pieces per thread. As in step 06, a thread's
// pieces sit in one column of pieces, THREADS / CHUNKS rows apart.
template <bool VEC, int CHUNKS, int LOADS>
__device__ void load_tile(__half *Xs, const __half *X, int rows, int cols, int r0, int c0)
{
    const int r = threadIdx.x / CHUNKS, c = threadIdx.x % CHUNKS;
#pragma unroll
    for (int i = 0; i < LOADS; ++i) {
        const int ri = r + i * (THREADS / CHUNKS);
        copy8<VEC>(&Xs[swizzle<CHUNKS>(ri, c)], X, rows, cols, r0 + ri, c0 + c * 8);
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

template <bool VEC, int STAGES>
__global__ void __launch_bounds__(THREADS, 1)
gemm_kernel(int M, int N, int K, float alpha, const __half *__restrict__ A,
            const __half *__restrict__ B, float beta, float *__restrict__ C)
{
    static_assert(STAGES >= 3, "tile t computing, tile t + 1 landed, at least one in flight");
    extern __shared__ __align__(128) unsigned char smem[];
    __half (*As)[BM * BK] = reinterpret_cast<__half (*)[BM * BK]>(smem);
    __half (*Bs)[BK * BN] = reinterpret_cast<__half (*)[BK * BN]>(smem + STAGES * sizeof *As);

    // Blocks are numbered on a 1-D grid (a 2-D grid allows only 65535 block
    // rows, too few for a tall C), down the columns of groups of GROUP_M
    // tile rows; the last group may have fewer rows.
    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    const int first_row = blockIdx.x / (GROUP_M * tiles_n) * GROUP_M;
    const int group_rows = min(tiles_m - first_row, GROUP_M);
    const int in_group = blockIdx.x % (GROUP_M * tiles_n);
    const int m0 = (first_row + in_group % group_rows) * BM, n0 = in_group / group_rows * BN;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wm = warp / WARPS_N * WM, wn = warp % WARPS_N * WN; // warp tile in the block tile
    const int tiles_k = (K + BK - 1) / BK;

    // ---- load tiles: the first STAGES - 1 tiles on their way, a group each
    // (empty groups past the end of K keep the counting simple)
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < tiles_k) {
            load_tile<VEC, A_CHUNKS, A_LOADS>(As[s], A, M, K, m0, s * BK);
            load_tile<VEC, B_CHUNKS, B_LOADS>(Bs[s], B, K, N, s * BK, n0);
        }
        cp_async_commit();
    }
    cp_async_wait<STAGES - 2>();
    __syncthreads(); // tile 0 has landed, for every thread's copies

    float acc[FM][FN][4] = {};
    uint32_t a[2][FM][4], b[2][FN][2]; // fragments: this slice's and the next one's
    load_fragments(a[0], b[0], As[0], Bs[0], wm, wn, 0);
    for (int t = 0; t < tiles_k; ++t) {
        const int cur = t % STAGES, next = t + STAGES - 1;

        // Tile t + 1 must have landed: its first fragments load during this
        // iteration. Of the groups committed so far (tiles up to t + STAGES
        // - 2), the newest STAGES - 3 may still be on their way. The barrier
        // makes that true for every thread's copies, and tells every warp
        // that the others are done reading tile t - 1, whose stage the
        // copies below overwrite.
        cp_async_wait<STAGES - 3>();
        __syncthreads();

        // ---- compute: per MMA_K-deep slice, FM fragments of A times FN of
        // B, with the next slice's fragments loading meanwhile
#pragma unroll
        for (int s = 0; s < KSLICES; ++s) {
            if (s + 1 < KSLICES)
                load_fragments(a[(s + 1) % 2], b[(s + 1) % 2], As[cur], Bs[cur], wm, wn,
                               (s + 1) * MMA_K);
            else if (t + 1 < tiles_k)
                load_fragments(a[0], b[0], As[(t + 1) % STAGES], Bs[(t + 1) % STAGES], wm, wn, 0);

            // ---- load tiles: tile t + STAGES - 1, A's pieces in the first
            // slice and B's in the last, after the fragment loads. Spread
            // out like this, the address arithmetic of the copies fills the
            // gaps between this slice's mma.sync instead of holding them
            // up, and the fragment loads of the last slice do not queue
            // behind the copies. Past the end of K the copies fill zeros
            // that no one reads, so the loop needs no branch.
            if (s == 0)
                load_tile<VEC, A_CHUNKS, A_LOADS>(As[next % STAGES], A, M, K, m0, next * BK);
            if (s == KSLICES - 1) {
                load_tile<VEC, B_CHUNKS, B_LOADS>(Bs[next % STAGES], B, K, N, next * BK, n0);
                cp_async_commit();
            }
#pragma unroll
            for (int i = 0; i < FM; ++i)
#pragma unroll
                for (int j = 0; j < FN; ++j)
                    mma_16x8x16(acc[i][j], a[s % 2][i], b[s % 2][j]);
        }
    }

    // The last copies (zeros past the end of K) must not land in shared
    // memory after the block has left it.
    cp_async_wait<0>();

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

template <bool VEC, int STAGES>
static void launch_stages(int M, int N, int K, float alpha, const void *A, const void *B,
                          float beta, float *C)
{
    // A block may use more than 48 KB of shared memory only if asked; an
    // error here makes the launch fail, which the caller sees.
    cudaFuncSetAttribute(gemm_kernel<VEC, STAGES>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                         smem_bytes(STAGES));
    const int tiles = ((M + BM - 1) / BM) * ((N + BN - 1) / BN);
    gemm_kernel<VEC, STAGES><<<tiles, THREADS, smem_bytes(STAGES)>>>(
        M, N, K, alpha, (const __half *)A, (const __half *)B, beta, C);
}

template <bool VEC>
static void launch(int M, int N, int K, float alpha, const void *A, const void *B, float beta,
                   float *C)
{
    // Five stages take 120 KB. A block may have 227 KB on compute capability
    // 9.0 and 163 KB on 8.0, but only 99 KB on 8.6 and 8.9: there, four.
    int device = 0, room = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&room, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
    if (room >= smem_bytes(STAGES_MOST))
        launch_stages<VEC, STAGES_MOST>(M, N, K, alpha, A, B, beta, C);
    else
        launch_stages<VEC, STAGES_FEWER>(M, N, K, alpha, A, B, beta, C);
}

extern "C" void gemm_launch(int M, int N, int K, float alpha, const void *A,
                            const void *B, float beta, float *C)
{
    // 16-byte accesses need every row of A, B and C to start 16-byte aligned.
    const bool vec = K % 8 == 0 && N % 8 == 0 &&
                     ((uintptr_t)A | (uintptr_t)B | (uintptr_t)C) % 16 == 0;
    if (vec)
        launch<true>(M, N, K, alpha, A, B, beta, C);
    else
        launch<false>(M, N, K, alpha, A, B, beta, C);
}
