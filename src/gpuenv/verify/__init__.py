"""`gpuenv verify`: prove an installed PyTorch stack works, in a subprocess of the target Python.

``script`` is the text that runs there (it imports torch, reads the GPUs, opens the ROCm device
nodes, runs a matmul per GPU and prints one JSON record per step); ``run`` is the only module
that starts the process (timeout, process group, what came back); ``machine`` is what the probe
sees of the machine (its GPUs, driver, stack); ``judge`` turns the records into findings (pure:
no I/O, tested without any interpreter), reading them with ``records``, holding the results in
``results``, and taking the findings from ``run_findings`` (the run itself), ``torch_findings``
(torch and its build) and ``gpu_findings`` (device nodes, visible GPUs, architectures,
matmuls). ``verify`` below is the one function the command calls.
gpuenv itself never imports torch: the torch that matters is the target interpreter's.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from gpuenv.verify.machine import Machine
    from gpuenv.verify.results import Verification


def verify(python: str, timeout: float | None = None, root: str | None = None) -> Verification:
    """Verify ``python``'s PyTorch on this machine; a ``results.Verification``.

    ``root``: where the machine's /sys and /dev are (``--root``; None: /). The probe reads the
    GPUs on the PCI bus there, and the script opens that tree's device nodes. The probe never
    fails verify: a machine it cannot read is simply not compared with what torch sees."""
    import datetime
    import socket

    from gpuenv import __version__
    from gpuenv.verify.judge import judge
    from gpuenv.verify.run import TIMEOUT, device_nodes, run_script

    outcome = run_script(python, device_nodes(root), TIMEOUT if timeout is None else timeout)
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return judge(
        outcome, _machine(root), host=socket.gethostname(), collected_at=now, gpuenv_version=__version__
    )


def _machine(root: str | None) -> Machine | None:
    from gpuenv.probe import collect
    from gpuenv.verify.machine import machine_of

    try:
        facts = collect(root=root)
    except Exception:  # noqa: BLE001 - the comparison is a bonus; torch's own view still counts
        return None
    try:
        from gpuenv.matrices import load

        matrices = load()
    except Exception:  # noqa: BLE001 - unreadable matrices: names from pci.ids, every AMD GPU counts
        matrices = None
    return machine_of(facts, matrices)
