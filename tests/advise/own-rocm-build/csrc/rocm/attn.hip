#include <hip/hip_runtime.h>
__global__ void attn_fwd(float* out) { out[threadIdx.x] = __lane_id(); }
