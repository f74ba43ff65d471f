/*
 * step10_warp_specialized: a producer warpgroup copies, two consumer
 * warpgroups multiply, and each block stays on its SM for many tiles.
 *
 * What changed: step 09 gave every warpgroup both jobs, so the wait for a
 * tile and the block-wide barrier sat between one tile's wgmma and the
 * next. Now the jobs are split.
 * - Producer and consumers: warpgroup 0 only issues TMA copies; warpgroups 1
 *   and 2 only issue wgmma, each on 64 rows of the 128 x 256 tile. Each stage
 *   has two mbarriers: full (its tile has landed, as in step 09) and empty
 *   (both consumers are done with it: each arrives once its wgmma group for
 *   the tile has completed). The producer refills a stage as soon as it is
 *   empty; no barrier stops the whole block.
 *
 *     producer   copy 0 | copy 1 | copy 2 | copy 3 | wait empty 0, copy 4 | ...
 *     consumers         | wait full 0, wgmma 0 | wgmma 1, release 0 | ...
 *
 *   A stage's k-th use is its round: full's phase parity is the round's, and
 *   the producer waits for empty on the parity before, which a fresh barrier
 *   counts as done, so the first round needs no release. The producer
 *   leaves once the consumers have released every stage, when its last
 *   copies have landed. When it left with copies in flight, runs without
 *   tools were right, but compute-sanitizer's racecheck (make test) hung in
 *   4 of 60 runs at 136 x 264 x 72 (NVIDIA H200, CUDA 13.0, 2026-11-24);
 *   with the wait, in none of 60 (results/h200/racecheck_hangs.txt).
 * - Registers where they work: setmaxnreg.dec gives up the producer's
 *   registers (it needs few), setmaxnreg.inc hands them to the consumers,
 *   whose 128 accumulators each need them. The launcher checks that the
 *   kernel starts with the REGS per thread this arithmetic assumes: with
 *   fewer, setmaxnreg.inc would wait forever instead of failing.
 * - Persistent blocks: one block per SM walks the tiles of C, tile after
 *   tile, in step 07's GROUP_M order (tile_origin), so the tiles in flight
 *   share A and B in L2, and the producer copies the next tile's first
 *   k-tiles while the consumers store this one.
 *
 * The second idea: the epilogue passes through shared memory. Straight from
 * the accumulators, a warp's store writes two floats in each of 8 rows: 8
 * pieces of 32 bytes in 8 lines of C. Instead each warp writes its 16 rows
 * into its part of a slice of shared memory, OUT_N = 32 columns at a time,
 * and reads them back by rows, so that 8 lanes store a row's whole 128-byte
 * line in float4s (where C's rows allow them: N a multiple of 4 and C
 * 16-byte aligned; else a lane stores a float, a warp a row). Each row of
 * the slice is padded by OUT_PAD floats, so that the 4 rows a half-warp
 * writes (shared memory serves 8-byte accesses 16 lanes at a time) start
 * in different banks. Tried with the stores straight from the
 * accumulators, as in step 09, at 2048^3 (a tile per block, all stored at
 * the end):
 * Measured (scripts/try.sh 10 direct, NVIDIA H200, CUDA 13.0, 2026-11-24):
 * tried 548.39 TFLOPS (93.7% of cuBLAS), as is 580.40 (100.6%).
 *
 * Why it is faster: the tensor cores wait for nothing the producer can do
 * ahead of time, a tile's loads no longer wait for the last one's
 * epilogue, and the epilogue stores whole lines.
 *
 * What limits it now: while the consumers store a tile, they multiply
 * nothing. And the work is divided by tiles: where the tiles do not fill
 * the SMs evenly (3000^3: 24 x 12 = 288 tiles for 132 SMs, so a third round
 * of 24 tiles in which 108 SMs wait), the last round is mostly idle.
 *
 * Launch: one block per SM (fewer if C has fewer tiles), THREADS threads:
 * a producer warpgroup and CONSUMERS consumer warpgroups, STAGES *
 * STAGE_BYTES of dynamic shared memory and the epilogue's slice, BM x
 * (OUT_N + OUT_PAD) floats; before it, a repack of A or B where TMA cannot
 * read it, as in step 09.
 *
 * Measured: 606.72 TFLOPS, 113.8% of cuBLAS GemmEx, 1.02x step 09
 * (scripts/run_all.sh, NVIDIA H200, CUDA 13.0, 4096^3, 2026-12-02).
 */
#include "gemm.h"
#include "launch.cuh"
#include "repack.cuh"

#include <cuda.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include <type_traits>

// The most elements A, B or C may hold (gemm.h): TMA reads A and B, and C's offsets are 64-bit.
extern "C" const long long gemm_max_elements = GEMM_MAX_ELEMENTS_64;

constexpr int BM = 128; // rows of C per block
constexpr int BN = 256; // columns of C per block
constexpr int BK = 64;  // depth of the shared tiles: one 128-byte line of halves per row
constexpr int STAGES = 4; // tiles in shared memory
constexpr int GROUP_M = 8; // tile rows in one group of the block order
// The epilogue's pass: OUT_N columns of the tile, each row padded so that
// the 4 rows a half-warp writes start in different banks.
constexpr int OUT_N = 32, OUT_PAD = 8;
constexpr int WGMMA_M = 64, WGMMA_N = BN, WGMMA_K = 16; // wgmma.m64n256k16
constexpr int MMA_M = 16, MMA_N = 8; // a warp's accumulators come in mma.sync's 16 x 8 tiles

constexpr int WARP_SIZE = 32;
constexpr int WARPGROUP = 4 * WARP_SIZE; // the threads that issue one wgmma
constexpr int PIECE = 8; // elements per 16-byte piece: 8 halves
constexpr int LINE_PIECES = 8; // pieces per 128-byte line of shared-memory banks
constexpr int QUAD = 4; // lanes that share a row of an mma fragment

constexpr int CONSUMERS = BM / WGMMA_M;               // warpgroups that multiply
constexpr int THREADS = (1 + CONSUMERS) * WARPGROUP;    // and one that copies
// Registers per thread after setmaxnreg (multiples of 8). The block starts
// with REGS each, the most 64K registers give THREADS threads; the producer
// gives some up, and the consumers can take only what it gave: setmaxnreg.inc
// waits until the block has them.
constexpr int REGS = 65536 / THREADS / 8 * 8;
constexpr int PRODUCER_REGS = 40;
constexpr int CONSUMER_REGS = (REGS * (1 + CONSUMERS) - PRODUCER_REGS) / CONSUMERS / 8 * 8;
constexpr int FN = WGMMA_N / MMA_N;                    // 16 x 8 tiles per warp
constexpr int LINE_N = LINE_PIECES * PIECE;            // halves per line: B's columns in one column of lines
constexpr int KSLICES = BK / WGMMA_K;                  // wgmma per k-tile
constexpr int STAGE_BYTES = (BM * BK + BK * BN) * (int)sizeof(__half); // a tile of A and one of B
constexpr int SWIZZLE_ATOM = LINE_PIECES * LINE_PIECES * 16; // 8 rows of a line: tiles start on one

static_assert(BK == LINE_N && BN % LINE_N == 0 && BM % WGMMA_M == 0,
              "a row of A's tile is one line, a row of B's whole lines; warpgroups cover the tile");
static_assert(CONSUMER_REGS <= 255, "a thread holds at most 255 registers");
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

__device__ void mbar_arrive(uint64_t *bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" : : "r"(smem_addr(bar)) : "memory");
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

// The warpgroup's registers per thread from here on: fewer, or more.
template <int COUNT>
__device__ void regs_dec()
{
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" : : "n"(COUNT));
}

template <int COUNT>
__device__ void regs_inc()
{
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" : : "n"(COUNT));
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

// The same for the W floats of v (a float4, or a float) at C(r, c..c+W-1).
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

// ---- load tiles: tile k0 of A and B into one stage, by one producer
// thread: a TMA box of A and BN / LINE_N boxes of B, on a barrier armed with
// their bytes.
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
    __shared__ uint64_t full[STAGES];  // stage s's tile has landed
    __shared__ uint64_t empty[STAGES]; // every consumer is done with stage s

    // Blocks stay: block b takes tiles b, b + gridDim.x, ... of C.
    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    const int warp = threadIdx.x / WARP_SIZE, lane = threadIdx.x % WARP_SIZE;
    // the consumer warpgroup (-1: the producer); a consumer warp's rows of D
    const int wg = threadIdx.x / WARPGROUP - 1, wm = (warp - WARPGROUP / WARP_SIZE) * MMA_M;
    const int tiles_k = (K + BK - 1) / BK;

    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) { // full: the thread that arms it; empty: each consumer
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" : : "r"(smem_addr(&full[s])));
            asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" : : "r"(smem_addr(&empty[s])), "n"(CONSUMERS));
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" : : : "memory");
    }
    __syncthreads(); // the barriers exist before anyone waits

    // A k-tile's number among all this block copies or multiplies: stage
    // n % STAGES, on that stage's round n / STAGES.
    int n = 0;
    if (wg < 0) {
        regs_dec<PRODUCER_REGS>();
        // ---- load tiles: every k-tile of every tile of this block, each
        // into the next stage once the consumers have released it
        for (int tile = blockIdx.x; tile < tiles_m * tiles_n; tile += gridDim.x) {
            int m0, n0;
            tile_origin(tile, tiles_m, tiles_n, m0, n0);
            for (int t = 0; t < tiles_k; ++t, ++n) {
                mbar_wait(&empty[n % STAGES], n / STAGES % 2 ^ 1);
                load_tiles(As[n % STAGES], Bs[n % STAGES], &full[n % STAGES], &map_a, &map_b, m0, n0, t * BK);
            }
        }
        // Wait until the consumers have released every stage, when each copy
        // this thread issued has landed: compute-sanitizer's racecheck may
        // hang on a producer that stops with copies in flight (step 10's header).
        for (int i = n; i < n + STAGES; ++i)
            mbar_wait(&empty[i % STAGES], i / STAGES % 2 ^ 1);
        return;
    }

    regs_inc<CONSUMER_REGS>();
    for (int tile = blockIdx.x; tile < tiles_m * tiles_n; tile += gridDim.x) {
        int m0, n0;
        tile_origin(tile, tiles_m, tiles_n, m0, n0);
        float acc[FN][4] = {};
        TIMELINE(multiply);
        for (int t = 0; t < tiles_k; ++t, ++n) {
            mbar_wait(&full[n % STAGES], n / STAGES % 2);

            // ---- compute: a wgmma per WGMMA_K-deep slice, the tile's in one group
            asm volatile("wgmma.fence.sync.aligned;\n" : : : "memory"); // acc is ready for wgmma
#pragma unroll
            for (int s = 0; s < KSLICES; ++s)
                wgmma_64x256x16(acc,
                                descriptor(&As[n % STAGES][wg * WGMMA_M * BK + s * WGMMA_K], A_LEADING, SWIZZLE_ATOM),
                                descriptor(&Bs[n % STAGES][s * WGMMA_K * LINE_N], BK * LINE_N * (int)sizeof(__half),
                                           SWIZZLE_ATOM));
            asm volatile("wgmma.commit_group.sync.aligned;\n" : : : "memory");
            // The previous k-tile's group is done (this one may still run):
            // its stage goes back to the producer.
            wgmma_wait<1>(acc);
            if (t > 0 && threadIdx.x % WARPGROUP == 0)
                mbar_arrive(&empty[(n - 1) % STAGES]);
        }
        wgmma_wait<0>(acc);
        if (threadIdx.x % WARPGROUP == 0)
            mbar_arrive(&empty[(n - 1) % STAGES]);

        TIMELINE(fixup);
        TIMELINE(store);
        // ---- epilogue: alpha, beta, store (with beta == 0, C is not read),
        // while the producer copies the next tile. A warp's 16 rows pass
        // through shared memory OUT_N columns at a time (see the header): in
        // as the accumulators hold them, rows g and g + MMA_M / 2 of each mma
        // tile; out as whole rows, a lane's V at a time.
        using V = std::conditional_t<VEC, float4, float>;
        constexpr int W = sizeof(V) / sizeof(float), ROW = OUT_N / W; // a row's lanes
        const int g = lane / QUAD, tc = lane % QUAD * 2, c = lane % ROW * W;
        float (*out)[OUT_N + OUT_PAD] = reinterpret_cast<float (*)[OUT_N + OUT_PAD]>(smem + STAGES * STAGE_BYTES) + wm;
#pragma unroll
        for (int c0 = 0; c0 < BN; c0 += OUT_N) {
#pragma unroll
            for (int j = 0; j < OUT_N / MMA_N; ++j)
#pragma unroll
                for (int h = 0; h < 2; ++h)
                    *reinterpret_cast<float2 *>(&out[h * (MMA_M / 2) + g][j * MMA_N + tc]) =
                        make_float2(acc[c0 / MMA_N + j][2 * h], acc[c0 / MMA_N + j][2 * h + 1]);
            __syncwarp();
#pragma unroll
            for (int r = lane / ROW; r < MMA_M; r += WARP_SIZE / ROW)
                store<VEC>(C, M, N, m0 + wm + r, n0 + c0 + c, *reinterpret_cast<V *>(&out[r][c]), alpha, beta);
            __syncwarp(); // the next pass writes where this one read
        }
        TIMELINE(done);
    }
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
    int device = 0, sms = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    const bool vec = N % 4 == 0 && (uintptr_t)C % sizeof(float4) == 0; // float4 stores: rows of whole float4s, aligned
    const auto kernel = vec ? gemm_kernel<true> : gemm_kernel<false>;
    // A block may use more than 48 KB of shared memory only if asked; an
    // error here makes the launch fail, which the caller sees.
    const int smem = STAGES * STAGE_BYTES + BM * (OUT_N + OUT_PAD) * (int)sizeof(float); // and the epilogue's pass
    cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    // setmaxnreg assumes REGS per thread at the start (see the header): check ptxas gave all __launch_bounds__ allows.
    cudaFuncAttributes attr;
    if (cudaFuncGetAttributes(&attr, kernel) == cudaSuccess && attr.numRegs != REGS)
        return cudaErrorInvalidKernelImage; // a build this file does not expect: the kernel would hang
    // One block per SM, each walking its share of the tiles.
    kernel<<<min(tiles, sms), THREADS, smem, stream>>>(map_a, map_b, M, N, K, alpha, beta, C);
    return cudaGetLastError();
}
