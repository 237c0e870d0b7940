"""A stand-in for PyTorch, as much of it as gpuenv's verify script uses (src/gpuenv/verify/script.py).

It plays a machine described by ``config.json`` beside it, which the tests write for each case:
a healthy CUDA or ROCm box, a build without the GPU's architecture, a GPU that computes wrong, no
GPU visible, an import that fails, hangs or crashes. Its tensors are lists of rows, multiplied in
plain Python: the same numbers on the "CPU" and on the "GPUs" unless the case says otherwise.
"""

import json
import os
import time
import warnings

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "config.json")) as _f:
    _C = json.load(_f)


def _act(where):
    """A case's misbehaviour at ``where``: hang, crash (SIGABRT, as rocBLAS does) or raise."""
    if _C.get("hang") == where:
        if _C.get("pidfile"):
            with open(_C["pidfile"], "w") as f:
                f.write(str(os.getpid()))
        time.sleep(3600)
    if _C.get("crash") == where:
        os.abort()
    raised = (_C.get("raise") or {}).get(where)
    if raised:
        kind, _, message = raised.partition(": ")
        raise {"OSError": OSError, "RuntimeError": RuntimeError, "ModuleNotFoundError": ModuleNotFoundError}[
            kind
        ](message)


_act("import")

__version__ = _C["version"]
float32 = "float32"


class version:  # noqa: N801 - torch.version is a module; a class stands in for it
    cuda = _C.get("cuda")
    hip = _C.get("hip")


_GPUS = _C.get("gpus", [])


class _Props:
    def __init__(self, gpu):
        self.name = gpu["name"]
        self.major, self.minor = gpu.get("capability", [9, 4] if version.hip else [0, 0])
        self.total_memory = gpu.get("memory_mib", 1024) << 20
        if version.hip:
            self.gcnArchName = gpu["gcn_arch"]


class cuda:  # noqa: N801 - torch.cuda
    @staticmethod
    def get_arch_list():
        return list(_C.get("arch_list", []))

    @staticmethod
    def is_available():
        if _C.get("warning"):
            warnings.warn(_C["warning"], UserWarning, stacklevel=2)
        return bool(_GPUS)

    @staticmethod
    def device_count():
        return len(_GPUS)

    @staticmethod
    def init():
        if not _GPUS:
            raise RuntimeError(_C.get("init_error") or "No CUDA GPUs are available")

    @staticmethod
    def get_device_properties(i):
        _act("properties")
        return _Props(_GPUS[i])


class Tensor:
    def __init__(self, rows, device):
        self.rows, self.device = rows, device

    def __matmul__(self, other):
        if self.device != "cpu":
            _act("matmul")
        cols = list(zip(*other.rows, strict=True))
        out = [[sum(x * y for x, y in zip(row, col, strict=True)) for col in cols] for row in self.rows]
        index = None if self.device == "cpu" else int(self.device.split(":")[1])
        if index is not None and index in _C.get("wrong_on", []):
            out[0][0] += _C.get("wrong_by", 0.01)
        return Tensor(out, self.device)

    def tolist(self):
        return [list(r) for r in self.rows]


def tensor(data, dtype=None, device="cpu"):
    if device != "cpu":
        kind, _, index = device.partition(":")
        if kind != "cuda" or not index.isdigit() or int(index) >= len(_GPUS):
            raise RuntimeError("CUDA error: invalid device ordinal")
    return Tensor([[float(x) for x in row] for row in data], device)
