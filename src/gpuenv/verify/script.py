"""The text of the script ``gpuenv verify`` feeds to the target interpreter (``python -``).

It runs in the user's environment, not gpuenv's, so it imports nothing from gpuenv and keeps to
Python 3.6 syntax. What it promises:

- nothing from the current directory runs: ``sys.path[0]`` (the cwd entry for a script read from
  standard input) is removed before any import, and the runner starts it in ``/``;
- its records go to a private copy of file descriptor 1, made before torch is imported; fd 1 is
  then pointed at stderr, so whatever torch or a C library prints cannot corrupt them;
- one JSON object per line, flushed at once, and a ``begin`` record before each step. One JSON
  document at the end would be simpler, but the failures verify exists to catch kill the process
  (a segfault in the driver, rocBLAS aborting on a GPU it has no kernels for, a hang until the
  timeout): line by line, what came before survives and the last ``begin`` names the step;
- every Python exception becomes a record (``error``: its type and first line); it exits 0;
- steps come in order of risk: import, build, the ROCm device nodes, the GPUs' properties, and the
  matmuls last (the step that can abort the process).

What it asks of torch is deliberately little (the tests' stand-in implements exactly this):
``__version__``, ``version.cuda``/``version.hip``, ``cuda.get_arch_list``, ``cuda.is_available``,
``cuda.device_count``, ``cuda.init`` (only to learn why no GPU is seen),
``cuda.get_device_properties(i)`` (``name``, ``major``, ``minor``, ``gcnArchName`` on ROCm,
``total_memory``), ``torch.tensor(rows, dtype=torch.float32, device=...)``, ``@`` and
``tolist()``.

The matmul: SIZE x SIZE float32 inputs from ``random.Random(0)`` in [-1, 1) (the same numbers on
every machine, made without torch), multiplied on the CPU and on each GPU, with TF32 switched off
where this torch has the switch. It reports the largest absolute difference from the CPU product
(null with ``finite: false`` for NaN or infinity); the tolerance is the judge's
(``gpuenv.verify.results.TOLERANCE``). ``.tolist()`` copies the result back, which also waits for
the kernel: no ``synchronize`` is needed.

``sys.argv[1:]`` are the device nodes to open read-write on a ROCm build (``/dev/kfd`` and the
render nodes): gpuenv lists them (``gpuenv.verify.run.device_nodes``) so that the script holds no
path of its own.
"""

from __future__ import annotations

SIZE = 64  # the matmul's matrices are SIZE x SIZE: a real GEMM kernel, and quick for a stand-in

SCRIPT = r"""
import sys
if sys.path and sys.path[0] in ("", "."):
    del sys.path[0]
import json, os, platform, random, warnings

_records = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)
NODES = sys.argv[1:]
SIZE = @SIZE@
VISIBLE = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
           "HSA_OVERRIDE_GFX_VERSION", "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE")


def emit(**record):
    _records.write(json.dumps(record) + "\n")
    _records.flush()


def begin(what):
    emit(step="begin", what=what)


def error(exc):
    text = str(exc).strip().splitlines()
    return (type(exc).__name__ + (": " + text[0] if text else ""))[:500]


try:
    import pwd
    user = pwd.getpwuid(os.getuid()).pw_name
except BaseException:
    user = str(os.getuid())
emit(step="start", executable=sys.executable, version=platform.python_version(), user=user,
     env=dict((k, os.environ[k]) for k in VISIBLE if k in os.environ))
begin("import torch")
try:
    import torch
except BaseException as exc:
    # Missing means torch itself is not there; a ModuleNotFoundError for one of its dependencies
    # (numpy, typing_extensions) is a broken install, not a missing one.
    missing = isinstance(exc, ImportError) and getattr(exc, "name", None) == "torch"
    emit(step="torch", ok=False, missing=missing, error=error(exc))
    emit(step="done")
    sys.exit(0)

build = {"step": "torch", "ok": True}
for key, read in (("version", lambda: torch.__version__), ("cuda", lambda: torch.version.cuda),
                  ("hip", lambda: torch.version.hip)):
    try:
        value = read()
        build[key] = None if value is None else str(value)
    except BaseException as exc:
        build[key] = None
        build[key + "_error"] = error(exc)
try:
    build["arch_list"] = [str(a) for a in torch.cuda.get_arch_list()]
except BaseException as exc:
    build["arch_list"] = None
    build["arch_list_error"] = error(exc)
emit(**build)

if build.get("hip"):
    begin("open the ROCm device nodes")
    results = []
    for path in NODES:
        try:
            os.close(os.open(path, os.O_RDWR | os.O_CLOEXEC))
            results.append({"path": path, "ok": True})
        except OSError as exc:
            results.append({"path": path, "ok": False,
                            "error": os.strerror(exc.errno) if exc.errno else error(exc)})
    emit(step="nodes", results=results)

begin("count the GPUs")
count = 0
devices = {"step": "devices"}
with warnings.catch_warnings(record=True) as said:
    warnings.simplefilter("always")
    try:
        devices["available"] = bool(torch.cuda.is_available())
        count = int(torch.cuda.device_count())
        devices["count"] = count
    except BaseException as exc:
        devices["error"] = error(exc)
# torch reports why it sees no GPU ("the NVIDIA driver on your system is too old") as a warning
# of is_available(), or as the exception of an explicit init.
warned = [str(w.message).strip() for w in said if str(w.message).strip()]
if warned:
    devices["warning"] = warned[0].splitlines()[0][:500]
if not count and (build.get("cuda") or build.get("hip")):
    try:
        torch.cuda.init()
    except BaseException as exc:
        devices["init_error"] = error(exc)
emit(**devices)

for i in range(count):
    begin("read GPU %d" % i)
    gpu = {"step": "gpu", "index": i}
    try:
        props = torch.cuda.get_device_properties(i)
        gpu["name"] = str(props.name)
        gpu["capability"] = [int(props.major), int(props.minor)]
        gcn = getattr(props, "gcnArchName", None)
        if gcn:
            gpu["gcn_arch"] = str(gcn)
        memory = getattr(props, "total_memory", None)
        if memory is not None:
            gpu["memory_mib"] = int(memory) // (1 << 20)
    except BaseException as exc:
        gpu["error"] = error(exc)
    emit(**gpu)

if count:
    begin("multiply on the CPU")
    try:
        try:
            torch.backends.cuda.matmul.allow_tf32 = False
        except BaseException:
            pass  # an old or stand-in torch without the switch: its float32 matmuls are float32
        rng = random.Random(0)
        a = [[rng.uniform(-1.0, 1.0) for _ in range(SIZE)] for _ in range(SIZE)]
        b = [[rng.uniform(-1.0, 1.0) for _ in range(SIZE)] for _ in range(SIZE)]
        want = (torch.tensor(a, dtype=torch.float32) @ torch.tensor(b, dtype=torch.float32)).tolist()
    except BaseException as exc:
        emit(step="inputs", error=error(exc))
        count = 0
for i in range(count):
    begin("matmul on GPU %d" % i)
    try:
        device = "cuda:%d" % i
        got = (torch.tensor(a, dtype=torch.float32, device=device)
               @ torch.tensor(b, dtype=torch.float32, device=device)).tolist()
        worst, finite = 0.0, True
        for row_got, row_want in zip(got, want):
            for x, y in zip(row_got, row_want):
                d = abs(float(x) - float(y))
                if d != d or d == float("inf"):
                    finite = False
                elif d > worst:
                    worst = d
        shape = len(got) == SIZE and all(len(r) == SIZE for r in got)
        emit(step="matmul", index=i, max_abs_err=worst if finite else None, finite=finite, shape_ok=shape)
    except BaseException as exc:
        emit(step="matmul", index=i, error=error(exc))
emit(step="done")
""".replace("@SIZE@", str(SIZE))
