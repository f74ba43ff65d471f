// Write bandwidth of the H200: cudaMemset, a linear float4 stream, and 64 x 256 tiles of C (row pitch N floats).
#include <cstdio>
#include <cuda_runtime.h>
__global__ void linear(float4 *p, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = make_float4(1, 2, 3, 4);
}
// each block: tiles of BMxBN, a warp 16 rows, passes of 32 columns (8 lanes a row, 4 rows at once) as step 14
template <int BM, int BN>
__global__ void tiles(float *C, int M, int N) {
    int tn = N / BN, tm = M / BM, lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    for (int t = blockIdx.x; t < tm * tn; t += gridDim.x) {
        int m0 = t / tn * BM, n0 = t % tn * BN;
        for (int rw = warp * 16; rw < BM; rw += blockDim.x / 32 * 16)
        for (int c0 = 0; c0 < BN; c0 += 32)
            for (int r = lane / 8; r < 16; r += 4)
                *reinterpret_cast<float4 *>(&C[(size_t)(m0 + rw + r) * N + n0 + c0 + lane % 8 * 4]) = make_float4(1, 2, 3, 4);
    }
}
int main() {
    int shapes[3][2] = { {8192, 8192}, {10000, 10000}, {16384, 16384} };
    float *p; cudaMalloc(&p, 16384ull * 16384 * 4);
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    for (auto &s : shapes) {
        size_t bytes = (size_t)s[0] * s[1] * 4; float ms;
        auto run = [&](const char *name, auto f) {
            for (int w = 0; w < 3; ++w) f();
            cudaEventRecord(a); for (int i = 0; i < 20; ++i) f(); cudaEventRecord(b); cudaEventSynchronize(b);
            cudaEventElapsedTime(&ms, a, b); ms /= 20;
            printf("%dx%d %-22s %8.1f us  %5.2f TB/s\n", s[0], s[1], name, ms * 1e3, bytes / ms / 1e9);
        };
        run("memset", [&] { cudaMemsetAsync(p, 0, bytes); });
        run("linear float4", [&] { linear<<<132 * 8, 256>>>((float4 *)p, bytes / 16); });
        run("tiles 64x256 1 wg/SM", [&] { tiles<64, 256><<<132, 128>>>(p, s[0] / 64 * 64, s[1] / 256 * 256); });
        run("tiles 64x256 2 wg/SM", [&] { tiles<64, 256><<<264, 128>>>(p, s[0] / 64 * 64, s[1] / 256 * 256); });
        run("tiles 128x256 8 warps", [&] { tiles<128, 256><<<132, 256>>>(p, s[0] / 128 * 128, s[1] / 256 * 256); });
    }
    printf("%s\n", cudaGetErrorString(cudaGetLastError()));
}
