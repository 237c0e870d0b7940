"""How long `gpuenv advise` takes on a generated 100,000-line C++/CUDA tree (budget: 2 s).

    python3 bench/bench_advise.py [RUNS] [LINES]

Generates, in a temporary directory, a tree shaped like a kernels project: .cu/.cuh/.cpp/.h files
of ~1,000 lines (kernels with shuffle reductions, runtime and cuBLAS calls, a little inline PTX),
a few Python files and manifests. Times ``python -m gpuenv advise DIR`` (rich output) and
``--json`` in fresh processes, and prints the medians in seconds beside ``python -c pass``.
Exits 1 when a median is over the budget.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BUDGET_S = 2.0

KERNEL = """\
__global__ void reduce_{n}(const float* __restrict__ in, float* __restrict__ out, int count) {{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = idx < count ? in[idx] : 0.0f;
    for (int offset = warpSize / 2; offset > 0; offset /= 2) {{
        acc += __shfl_down_sync(0xffffffff, acc, offset);
    }}
    if ((threadIdx.x & 31) == 0) atomicAdd(out, acc);
}}

"""
HOST = """\
void launch_{n}(const float* in, float* out, int count, cudaStream_t stream) {{
    // Launch one thread per element and reduce per warp.
    cudaMemsetAsync(out, 0, sizeof(float), stream);
    reduce_{n}<<<(count + 255) / 256, 256, 0, stream>>>(in, out, count);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) {{ fprintf(stderr, "%s\\n", cudaGetErrorString(err)); }}
}}

"""
GEMM = """\
void gemm_{n}(cublasHandle_t h, int m, int n, int k, const float* a, const float* b, float* c) {{
    const float alpha = 1.0f, beta = 0.0f;
    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, a, m, b, k, &beta, c, m);
}}

"""
PTX = """\
__device__ unsigned lane_id_{n}() {{
    unsigned lane;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    return lane;
}}

"""
PLAIN = """\
static inline int ceil_div_{n}(int a, int b) {{
    // Plain host arithmetic: nothing here is GPU-specific.
    return (a + b - 1) / b;
}}

"""
PY = """\
import torch
from torch.utils.cpp_extension import load


def run_{n}(x: torch.Tensor) -> torch.Tensor:
    return x.cuda().sum()

"""


def make_tree(root: Path, lines: int) -> int:
    """Write the tree; return its number of source lines."""
    (root / "requirements.txt").write_text("torch>=2.4\nnumpy\nnvidia-ml-py\n")
    (root / "Dockerfile").write_text("FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\nRUN pip install torch\n")
    written, n, f = 0, 0, 0
    suffixes = (".cu", ".cu", ".cuh", ".cpp", ".h")
    while written < lines:
        suffix = suffixes[f % len(suffixes)]
        parts = ["#include <cuda_runtime.h>\n#include <cublas_v2.h>\n#include <cstdio>\n\n"]
        size = 3
        while size < 1000:
            n += 1
            block = (KERNEL if suffix in (".cu", ".cuh") else PLAIN) if n % 4 else HOST
            if n % 9 == 0:
                block = GEMM
            if n % 97 == 0 and suffix == ".cu":
                block = PTX
            parts.append(block.format(n=n))
            size += block.count("\n")
        path = root / "csrc" / f"part{f // 40:02d}" / f"kernels_{f:04d}{suffix}"
        path.parent.mkdir(parents=True, exist_ok=True)
        text = "".join(parts)
        path.write_text(text)
        written += text.count("\n")
        f += 1
        if f % 25 == 0:
            py = root / "python" / f"ops_{f:04d}.py"
            py.parent.mkdir(exist_ok=True)
            body = "".join(PY.format(n=i) for i in range(f, f + 20))
            py.write_text(body)
            written += body.count("\n")
    return written


def wall(args: list[str]) -> tuple[float, subprocess.CompletedProcess]:
    t = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True)
    return time.perf_counter() - t, done


def main() -> int:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    lines = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
    with tempfile.TemporaryDirectory(prefix="gpuenv-advise-bench.") as tmp:
        root = Path(tmp) / "tree"
        root.mkdir()
        total = make_tree(root, lines)
        files = sum(1 for p in root.rglob("*") if p.is_file())
        print(f"tree: {total:,} source lines in {files} files ({sys.executable})")
        base = statistics.median(wall([sys.executable, "-c", "pass"])[0] for _ in range(runs))
        over = False
        for label, extra in (("advise", []), ("advise --json", ["--json"])):
            times = []
            for _ in range(runs):
                seconds, done = wall([sys.executable, "-m", "gpuenv", "advise", str(root), *extra])
                if done.returncode not in (0, 1, 6):  # portable, portable-with-work, cuda-only (this tree's PTX)
                    print(done.stderr, file=sys.stderr)
                    return 2
                times.append(seconds)
            median = statistics.median(times)
            over |= median > BUDGET_S
            print(f"{label:14} {median:6.3f} s (median of {runs}; min {min(times):.3f} s) "
                  f"vs python -c pass {base:.3f} s: ratio {median / base:.1f}")  # fmt: skip
        doc = json.loads(done.stdout)
        print(f"verdict: {doc['verdict']}; {len(doc['findings'])} findings; {doc['lines']['need_person']:,} of "
              f"{doc['lines']['source']:,} source lines need a person ({doc['lines']['share']:.2%})")  # fmt: skip
        print(f"budget {BUDGET_S:.1f} s: {'OVER' if over else 'met'}")
        return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
