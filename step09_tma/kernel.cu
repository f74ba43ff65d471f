/*
 * step09_tma: TMA copies the tiles, and mbarriers say when they have landed.
 *
 * What changed: step 08's every thread copied its pieces with cp.async and
 * waited for its own copies, and a barrier made that true for all. Now
 * Hopper's tensor memory accelerator (TMA) copies a whole tile.
 * - Tensor maps: the host describes A and B once (cuTensorMapEncodeTiled,
 *   reached through the runtime's driver entry point, so that the program
 *   needs no link to the driver library): address, shape, row pitch, the
 *   box one copy fetches, and the 128-byte swizzle. One thread then copies
 *   a box with one cp.async.bulk.tensor: TMA computes every address, writes
 *   shared memory in the same swizzled lines step 08 laid out by hand, and
 *   fills what lies outside A or B with zeros, so edge tiles need no code.
 *   A's tile is one box of BM x BK; B's is BN / 64 boxes of BK x 64, one
 *   per column of lines.
 * - mbarriers: each stage has a 64-bit barrier in shared memory. The thread
 *   that issues a stage's copies arrives on it once and says how many bytes
 *   are coming (arrive.expect_tx); TMA counts them off as they land, and
 *   the barrier completes a phase when both counts reach zero. A stage is
 *   filled again and again, so its phases alternate, and a waiter names
 *   the parity of the phase it wants: tile t is in stage t % STAGES, on
 *   that stage's round t / STAGES, parity (t / STAGES) % 2.
 *
 *     tile:    0  1  2  3  4  5  6  7  8 ...   (STAGES = 4)
 *     stage:   0  1  2  3  0  1  2  3  0
 *     parity:  0  0  0  0  1  1  1  1  0
 *
 *   The block-wide barrier stays for one job: the stage tile t - 2's wgmma
 *   read is refilled only once every warpgroup is done with it. TMA writes
 *   through the async proxy that wgmma reads through: no proxy fence.
 *
 * Riding along: TMA reads rows that start 16-byte aligned, so an operand
 * whose rows do not (K or N not a multiple of 8, or an unaligned pointer)
 * is first repacked by a small kernel into memory of the call's own,
 * its rows padded to whole 128-byte lines, and TMA reads that: no
 * element-wise path is left. The repack is the same in steps 09-11, so it
 * lives in common/repack.cuh; the launcher says what it costs. Step 08
 * loads such rows element by element:
 *
 * Measured at 4096 x 4096 x 4100: 622.35 TFLOPS, 254.3% of cuBLAS GemmEx,
 * 7.25x step 08 (scripts/run_all.sh -m 4096 -n 4096 -k 4100, NVIDIA H200,
 * CUDA 13.0, 2026-11-27).
 *
 * Why it is faster: one thread and one instruction per box replace 256
 * threads computing addresses for 12 copies each per tile; the warps only
 * wait and multiply.
 *
 * What limits it now: every warpgroup both waits and multiplies, and the
 * block-wide barrier still sits between one tile's wgmma and the next.
 * Step 10 gives the copies to a warpgroup of their own.
 *
 * Launch: a 1-D grid with one block of THREADS threads (two warpgroups, one
 * per 64 rows) per BM x BN tile of C, STAGES * STAGE_BYTES of dynamic shared
 * memory; before it, a repack of A or B where TMA cannot read it.
 *
 * Measured: 595.41 TFLOPS, 111.6% of cuBLAS GemmEx, 1.02x step 08
 * (scripts/run_all.sh, NVIDIA H200, CUDA 13.0, 4096^3, 2026-12-02).
 */
#include "gemm.h"
#include "launch.cuh"
#include "repack.cuh"

#include <cuda.h>
#include <cuda_fp16.h>
#include <stdint.h>

// The most elements A, B or C may hold (gemm.h): TMA reads A and B, and C's offsets are 64-bit.
extern "C" const long long gemm_max_elements = GEMM_MAX_ELEMENTS_64;

constexpr int BM = 128; // rows of C per block
constexpr int BN = 256; // columns of C per block
constexpr int BK = 64;  // depth of the shared tiles: one 128-byte line of halves per row
constexpr int STAGES = 4; // tiles in shared memory
constexpr int GROUP_M = 8; // tile rows in one group of the block order
constexpr int WGMMA_M = 64, WGMMA_N = BN, WGMMA_K = 16; // wgmma.m64n256k16
constexpr int MMA_M = 16, MMA_N = 8; // a warp's accumulators come in mma.sync's 16 x 8 tiles

constexpr int WARP_SIZE = 32;
constexpr int WARPGROUP = 4 * WARP_SIZE; // the threads that issue one wgmma
constexpr int PIECE = 8; // elements per 16-byte piece: 8 halves
constexpr int LINE_PIECES = 8; // pieces per 128-byte line of shared-memory banks
constexpr int QUAD = 4; // lanes that share a row of an mma fragment

constexpr int THREADS = BM / WGMMA_M * WARPGROUP;
constexpr int FN = WGMMA_N / MMA_N;                    // 16 x 8 tiles per warp
constexpr int LINE_N = LINE_PIECES * PIECE;            // halves per line: B's columns in one column of lines
constexpr int KSLICES = BK / WGMMA_K;                  // wgmma per k-tile
constexpr int STAGE_BYTES = (BM * BK + BK * BN) * (int)sizeof(__half); // a tile of A and one of B
constexpr int SWIZZLE_ATOM = LINE_PIECES * LINE_PIECES * 16; // 8 rows of a line: tiles start on one

static_assert(BK == LINE_N && BN % LINE_N == 0 && BM % WGMMA_M == 0,
              "a row of A's tile is one line, a row of B's whole lines; warpgroups cover the tile");
static_assert(BM * BK % (SWIZZLE_ATOM / 2) == 0 && STAGE_BYTES % SWIZZLE_ATOM == 0, "tiles start on atoms");

__device__ uint32_t smem_addr(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

// ---- mbarriers (see the header): arrive, expecting `bytes` from TMA.
__device__ void mbar_arrive_expect(uint64_t *bar, int bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n"
                 : : "r"(smem_addr(bar)), "r"(bytes) : "memory");
}

// Waits until the phase with this parity has completed.
__device__ void mbar_wait(uint64_t *bar, int parity)
{
    asm volatile("{ .reg .pred done;\n"
                 "WAIT_%=: mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 "@!done bra WAIT_%=; }\n" : : "r"(smem_addr(bar)), "r"(parity) : "memory");
}

// ---- TMA: the box of the tensor map whose first element is (c0, c1)
// (innermost coordinate first) into shared memory; its bytes count down bar.
__device__ void tma_load(__half *dst, const CUtensorMap *map, int c0, int c1, uint64_t *bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];\n"
                 : : "r"(smem_addr(dst)), "l"(map), "r"(c0), "r"(c1), "r"(smem_addr(bar)) : "memory");
}

// The descriptor of a matrix in shared memory (see the header). A K-major
// swizzled operand has no leading offset: the PTX ISA takes it as 1 (16 bytes).
constexpr int A_LEADING = 16;
__device__ uint64_t descriptor(const __half *p, int leading_bytes, int stride_bytes)
{
    const uint32_t addr = (uint32_t)__cvta_generic_to_shared(p);
    return (uint64_t)((addr & 0x3FFFF) >> 4) | (uint64_t)(leading_bytes >> 4) << 16 |
           (uint64_t)(stride_bytes >> 4) << 32 | 1ull << 62;
}

// Waits until at most PENDING of this warpgroup's wgmma groups are in flight.
template <int PENDING>
__device__ void wgmma_wait(float (&d)[FN][4])
{
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" : : "n"(PENDING) : "memory");
    // The accumulators are the wgmma's until here: tell the compiler so.
#pragma unroll
    for (int j = 0; j < FN; ++j)
#pragma unroll
        for (int i = 0; i < 4; ++i)
            asm volatile("" : "+f"(d[j][i]) : : "memory");
}

// The four accumulators of 16 x 8 tile j, as asm operands.
#define D4(j) "+f"(d[j][0]), "+f"(d[j][1]), "+f"(d[j][2]), "+f"(d[j][3])

// d += a * b, issued by the whole warpgroup: A 64 x 16 (K-major), B 16 x 256
// (N-major, read transposed: the last 1), D 64 x 256 float (kept: the first 1).
__device__ void wgmma_64x256x16(float (&d)[FN][4], uint64_t a, uint64_t b)
{
    asm volatile("wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, "
                 "%21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, "
                 "%40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, "
                 "%59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, "
                 "%78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, "
                 "%97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, "
                 "%113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
                 "}, %128, %129, 1, 1, 1, 0, 1;\n"
                 : D4(0), D4(1), D4(2), D4(3), D4(4), D4(5), D4(6), D4(7),
                   D4(8), D4(9), D4(10), D4(11), D4(12), D4(13), D4(14), D4(15),
                   D4(16), D4(17), D4(18), D4(19), D4(20), D4(21), D4(22), D4(23),
                   D4(24), D4(25), D4(26), D4(27), D4(28), D4(29), D4(30), D4(31)
                 : "l"(a), "l"(b));
}

// C(r, c) = alpha * v + beta * C(r, c), inside C only; with beta == 0, C is
// not read.
__device__ void store(float *C, int M, int N, int r, int c, float v, float alpha, float beta)
{
    if (r >= M || c >= N)
        return;
    float *p = &C[(size_t)r * N + c];
    *p = beta == 0.0f ? alpha * v : alpha * v + beta * *p;
}

// The same for the W floats of v (a float4 or a float2) at C(r, c..c+W-1).
// VEC: one W-float access; needs N % W == 0 and an aligned C, so that all W
// are inside or all outside.
template <bool VEC, typename V>
__device__ void store(float *C, int M, int N, int r, int c, V v, float alpha, float beta)
{
    constexpr int W = sizeof(V) / sizeof(float);
    float *x = reinterpret_cast<float *>(&v);
    if constexpr (VEC) {
        if (r >= M || c >= N)
            return;
        V *p = reinterpret_cast<V *>(&C[(size_t)r * N + c]);
#pragma unroll
        for (int i = 0; i < W; ++i)
            x[i] *= alpha;
        if (beta != 0.0f) {
            const V old = *p;
#pragma unroll
            for (int i = 0; i < W; ++i)
                x[i] += beta * reinterpret_cast<const float *>(&old)[i];
        }
        *p = v;
    } else {
        for (int i = 0; i < W; ++i)
            store(C, M, N, r, c + i, x[i], alpha, beta);
    }
}

// ---- load tiles: tile k0 of A and B into one stage, by one thread: a TMA
// box of A and BN / LINE_N boxes of B, on a barrier armed with their bytes.
__device__ void load_tiles(__half *As, __half *Bs, uint64_t *bar, const CUtensorMap *map_a,
                           const CUtensorMap *map_b, int m0, int n0, int k0)
{
    if (threadIdx.x == 0) {
        mbar_arrive_expect(bar, STAGE_BYTES);
        tma_load(As, map_a, k0, m0, bar);
#pragma unroll
        for (int j = 0; j < BN / LINE_N; ++j)
            tma_load(Bs + j * BK * LINE_N, map_b, n0 + j * LINE_N, k0, bar);
    }
}

// The top-left element of tile number `tile` of C. A row of the numbering
// is GROUP_M tile rows, numbered down its columns, so that the tiles in
// flight share more of A and B in L2 (the last row may have fewer).
__device__ void tile_origin(int tile, int tiles_m, int tiles_n, int &m0, int &n0)
{
    const int first_row = tile / (GROUP_M * tiles_n) * GROUP_M;
    const int group_rows = min(tiles_m - first_row, GROUP_M);
    const int in_group = tile % (GROUP_M * tiles_n);
    m0 = (first_row + in_group % group_rows) * BM;
    n0 = in_group / group_rows * BN;
}

template <bool VEC>
__global__ void __launch_bounds__(THREADS, 1)
gemm_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
            int M, int N, int K, float alpha, float beta, float *__restrict__ C)
{
    extern __shared__ __align__(SWIZZLE_ATOM) unsigned char smem[];
    __half (*As)[BM * BK] = reinterpret_cast<__half (*)[BM * BK]>(smem);
    __half (*Bs)[BK * BN] = reinterpret_cast<__half (*)[BK * BN]>(smem + STAGES * sizeof *As);
    __shared__ uint64_t full[STAGES]; // stage s's tile has landed

    // Blocks are numbered row by row over the tiles of C on a 1-D grid: a
    // 2-D grid allows only 65535 block rows, too few for a tall C.
    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    int m0, n0;
    tile_origin(blockIdx.x, tiles_m, tiles_n, m0, n0);
    const int warp = threadIdx.x / WARP_SIZE, lane = threadIdx.x % WARP_SIZE;
    const int wg = threadIdx.x / WARPGROUP, wm = warp * MMA_M; // the warpgroup; the warp's rows of D
    const int tiles_k = (K + BK - 1) / BK;

    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) // one arrival a phase: the thread that arms it
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" : : "r"(smem_addr(&full[s])));
        asm volatile("fence.mbarrier_init.release.cluster;\n" : : : "memory");
    }
    __syncthreads(); // the barriers exist before anyone waits

    // ---- load tiles: the first STAGES - 2 tiles on their way
    for (int s = 0; s < STAGES - 2 && s < tiles_k; ++s)
        load_tiles(As[s], Bs[s], &full[s], &map_a, &map_b, m0, n0, s * BK);

    // Threads past the edge of C stay: like all threads, they must reach
    // every barrier.
    float acc[FN][4] = {};
    for (int t = 0; t < tiles_k; ++t) {
        const int t_copy = t + STAGES - 2; // the k-tile whose copies this iteration issues

        // Tile t has landed once its stage's barrier completes this round's
        // phase; the barrier below frees the stage tile t - 2's wgmma read.
        mbar_wait(&full[t % STAGES], t / STAGES % 2);
        __syncthreads();

        // ---- compute: a wgmma per WGMMA_K-deep slice, the tile's in one group
        asm volatile("wgmma.fence.sync.aligned;\n" : : : "memory"); // acc is ready for wgmma
#pragma unroll
        for (int s = 0; s < KSLICES; ++s)
            wgmma_64x256x16(acc,
                            descriptor(&As[t % STAGES][wg * WGMMA_M * BK + s * WGMMA_K], A_LEADING, SWIZZLE_ATOM),
                            descriptor(&Bs[t % STAGES][s * WGMMA_K * LINE_N], BK * LINE_N * (int)sizeof(__half),
                                       SWIZZLE_ATOM));
        asm volatile("wgmma.commit_group.sync.aligned;\n" : : : "memory");

        // ---- load tiles: tile t_copy, into the stage tile t - 2 left, while the wgmma run
        if (t_copy < tiles_k)
            load_tiles(As[t_copy % STAGES], Bs[t_copy % STAGES], &full[t_copy % STAGES], &map_a, &map_b, m0, n0,
                       t_copy * BK);
        wgmma_wait<1>(acc); // tile t - 1's group is done; tile t's may still run
    }
    wgmma_wait<0>(acc);

    // ---- epilogue: alpha, beta, store (with beta == 0, C is not read),
    // straight from the accumulators: rows g and g + MMA_M / 2 of each mma
    // tile, two neighbouring floats per row
    const int g = lane / QUAD, tc = lane % QUAD * 2;
#pragma unroll
    for (int j = 0; j < FN; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h)
            store<VEC>(C, M, N, m0 + wm + h * (MMA_M / 2) + g, n0 + j * MMA_N + tc,
                       make_float2(acc[j][2 * h], acc[j][2 * h + 1]), alpha, beta);
}

// The tensor map of a rows x cols matrix of halves whose rows start every
// `pitch` halves, read in boxes of box_rows x box_cols with the 128-byte
// swizzle (sizes innermost first); parts of a box outside it arrive as zeros.
// False if the driver cannot describe it. L2 fetches a missed line alone,
// not with its neighbour: where rows do not start on lines, a box's row spans
// two, and a 256-byte fetch would bring in lines no box needs.
static bool tensor_map(CUtensorMap &map, const void *X, int rows, int cols, int pitch, int box_rows, int box_cols)
{
    static const auto encode = driver_function<decltype(&cuTensorMapEncodeTiled)>("cuTensorMapEncodeTiled", 12000);
    const cuuint64_t dims[2] = { (cuuint64_t)cols, (cuuint64_t)rows }, row_bytes[1] = { pitch * sizeof(__half) };
    const cuuint32_t box[2] = { (cuuint32_t)box_cols, (cuuint32_t)box_rows }, steps[2] = { 1, 1 };
    return encode && encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, const_cast<void *>(X), dims, row_bytes, box,
                          steps, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                          CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

extern "C" int gemm_launch(int M, int N, int K, float alpha, const void *A,
                           const void *B, float beta, float *C, cudaStream_t stream)
{
    if (const int done = no_product(M, N, K, alpha, beta, C, stream); done >= 0)
        return done; // an earlier error, sizes out of range, or nothing to multiply (launch.cuh)
    const int tiles = ((M + BM - 1) / BM) * ((N + BN - 1) / BN);
    call_memory mem(stream); // this call's memory, on its stream, for copies of operands TMA cannot read (repack.cuh)
    int lda, ldb; // halves from one row of A, and of B, to the next
    A = for_tma(A, M, K, lda, mem);
    B = for_tma(B, K, N, ldb, mem);
    if (!A || !B)
        return mem.error; // out of GPU memory
    CUtensorMap map_a, map_b;
    if (!tensor_map(map_a, A, M, K, lda, BM, BK) || !tensor_map(map_b, B, K, N, ldb, BK, LINE_N))
        return cudaErrorInvalidValue; // the driver cannot describe an operand to TMA
    const bool vec = N % 2 == 0 && (uintptr_t)C % sizeof(float2) == 0; // float2 stores: even rows, aligned
    const auto kernel = vec ? gemm_kernel<true> : gemm_kernel<false>;
    // A block may use more than 48 KB of shared memory only if asked; an
    // error here makes the launch fail, which the caller sees.
    const int smem = STAGES * STAGE_BYTES;
    cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    kernel<<<tiles, THREADS, smem, stream>>>(map_a, map_b, M, N, K, alpha, beta, C);
    return cudaGetLastError();
}
