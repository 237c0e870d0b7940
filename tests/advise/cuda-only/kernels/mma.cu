// Tensor-core tile product in inline PTX, and a Hopper warpgroup MMA.
#include <cuda_fp16.h>

__device__ void mma_16816(float* d, const unsigned* a, const unsigned* b) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

__device__ void hopper_tile(float* acc, unsigned long long desc_a, unsigned long long desc_b) {
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

__global__ void tile(float* out, const unsigned* a, const unsigned* b) {
    mma_16816(out + threadIdx.x * 4, a, b);
}
