// Block-wide sum: a warp shuffle reduction, written for 32-wide warps.
#include <cuda_runtime.h>

#define WARP_SIZE 32

__device__ float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset /= 2) {
        v += __shfl_down_sync(0xffffffff, v, offset);
    }
    return v;
}

__global__ void block_sum(const float* in, float* out, int n) {
    __shared__ float partial[WARP_SIZE];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    int warp = threadIdx.x / WARP_SIZE;
    float v = i < n ? in[i] : 0.0f;
    v = warp_sum(v);
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < blockDim.x / WARP_SIZE ? partial[lane] : 0.0f;
        v = warp_sum(v);
        unsigned active = __ballot_sync(0xffffffff, v != 0.0f);
        if (lane == 0 && active) atomicAdd(out, v);
    }
}

void launch_block_sum(const float* in, float* out, int n, cudaStream_t stream) {
    cudaMemsetAsync(out, 0, sizeof(float), stream);
    block_sum<<<(n + 255) / 256, 256, 0, stream>>>(in, out, n);
    cudaGetLastError();
}
