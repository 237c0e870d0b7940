// Hopper-only path, built for CUDA only: nothing on the ROCm side replaces it.
__global__ void fa3_fwd(float* out, unsigned a) {
    unsigned r;
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\n" : "=r"(r) : "r"(a));
    out[0] = 0.f;
}
