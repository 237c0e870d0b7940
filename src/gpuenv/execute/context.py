"""What every step handler works with: the root, the runner, the files, and what the run
learned so far (the dpkg database read once, verified keys, the steps that changed something).

A dry run builds it with a ``SimulatingRunner`` and ``ReadOnlyFiles``, apply with the real ones:
the handlers never ask which mode they are in.
"""

from __future__ import annotations

from collections.abc import Callable

from gpuenv.execute import apt
from gpuenv.execute.files import Files
from gpuenv.execute.runner import Result, Runner
from gpuenv.exitcodes import Exit
from gpuenv.plan.plan import Step
from gpuenv.standins.record import field, record

Event = Callable[[str, Step | None, str], None]  # (event, step, detail)


class Refused(RuntimeError):
    def __init__(self, exit: Exit, message: str) -> None:
        super().__init__(message)
        self.exit = exit


@record
class Context:
    root: str
    runner: Runner
    files: Files
    allow: frozenset[str] = frozenset()
    on_event: Event | None = None
    keys: dict[str, bytes] = field(default_factory=dict)  # step id -> verified keyring bytes
    fetch: Callable[[str], bytes] | None = None  # key download (apply only)
    changed: set[str] = field(default_factory=set)  # steps that changed something (dry run: would)
    _installed: dict[str, str] | None = None

    def emit(self, event: str, step: Step | None, detail: str = "") -> None:
        if self.on_event:
            self.on_event(event, step, detail)

    def installed(self) -> dict[str, str]:
        if self._installed is None:
            res = self.runner.run(
                ["dpkg-query", "-W", "-f", "${Package}\\t${Version}\\t${db:Status-Abbrev}\\n"], check=False
            )
            self._installed = apt.parse_dpkg_query(res.output)
        return self._installed

    def forget(self) -> None:
        self._installed = None

    def simulate(self, args: list[str]) -> apt.Simulation:
        # apt -s as root still writes its binary caches and its planner log (eipp.log.xz):
        # switched off, so that a simulation leaves /var/cache and /var/log as it found them.
        no_cache = ["-o", "Dir::Cache::pkgcache=", "-o", "Dir::Cache::srcpkgcache="]
        no_cache += ["-o", "Dir::Log::Planner=/dev/null"]
        res = self.runner.run(["apt-get", "-s", "-q", *no_cache, *args], check=False)
        return apt.parse_simulation(res.output, res.returncode)


def apt_result(sim: apt.Simulation) -> Result:
    """A failed simulation as the CommandError a failed apt-get would raise."""
    text = sim.error or ("apt cannot find: " + " ".join(sim.missing))
    return Result(("apt-get", "-s"), 100, "E: " + text)


def collateral_message(step: Step, collateral: tuple[str, ...]) -> str:
    return (
        f"step {step.id}: apt would also remove {', '.join(collateral)}, which the plan does not name. "
        f"Nothing was changed by this step. If that is what you want, run again with "
        + " ".join(f"--allow-removal {p}" for p in collateral)
    )


def path_of(step: Step) -> str:
    """The file a file or key step acts on. A Step of those kinds cannot be made without one
    (its __post_init__ checks each kind's fields), so this never fails for a plan that loaded."""
    if step.path is None:
        raise ValueError(f"step {step.id}: a {step.kind.value} step without a path")
    return step.path
