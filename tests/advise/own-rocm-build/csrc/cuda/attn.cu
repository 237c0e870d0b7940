// Hopper path: inline PTX, as flash-attention 3 writes it.
__global__ void attn_fwd(float* out) {
    unsigned r;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(r));
    out[threadIdx.x] = r;
}
