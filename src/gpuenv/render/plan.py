"""Human output of plans, dry runs and applies (the only rich user for install/apply)."""

from __future__ import annotations

from gpuenv.plan.plan import Action, Kind, Plan, Step
from gpuenv.standins import jsonout

TYPE_CHECKING = False  # typing's flag without importing typing, nor the executor for a dry run
if TYPE_CHECKING:
    from collections.abc import Callable

    from rich.console import Console

    from gpuenv.execute.executor import Outcome, StepReport

_SIGN = {
    Kind.APT_PURGE: ("-", "red"),
    Kind.REMOVE_FILE: ("-", "red"),
    Kind.APT_INSTALL: ("+", "green"),
    Kind.PIP_INSTALL: ("+", "green"),
    Kind.APT_KEY: ("+", "green"),
    Kind.APT_SOURCE: ("w", "cyan"),
    Kind.APT_PIN: ("w", "cyan"),
    Kind.WRITE_FILE: ("w", "cyan"),
    Kind.GROUP_ADD: ("g", "cyan"),
    Kind.APT_UPDATE: ("~", "blue"),
    Kind.COMMAND: ("$", "blue"),
    Kind.REBOOT: ("!", "yellow"),
    Kind.CHECK: ("?", "dim"),
}


def console(stderr: bool = False) -> Console:
    from gpuenv.render.console import make_console

    return make_console(stderr=stderr)


def escape(text: str) -> str:
    """Text from a plan or the user, made inert for rich markup (it could hide or fake output)."""
    from gpuenv.render.term import markup_safe

    return markup_safe(text)


def plan_json(plan: Plan) -> str:
    return jsonout.dumps(plan.to_dict())


def _what(step: Step) -> str:
    if step.packages:
        return " ".join(step.packages)
    if step.kind is Kind.APT_KEY:
        return f"{step.path}  ← {step.url}  (fingerprint {step.fingerprint})"
    if step.path:
        return step.path + (f" (mode {step.mode})" if step.mode else "")
    if step.argv:
        return " ".join(step.argv)
    return ""


def show_plan(con: Console, plan: Plan, dry: Outcome | None = None) -> None:
    from gpuenv.render.term import markup_safe as escape

    t = plan.target
    # Everything from the plan is escaped: a plan file is untrusted, and markup in it could hide text.
    head = f"[bold]{plan.action.value} {t.stack}{' ' + escape(t.version) if t.version else ''}[/bold]"
    if t.driver:
        head += f"  driver: {escape(t.driver)}"
    if t.torch:
        head += escape(f"  torch {t.torch.version} ({t.torch.variant}) into {t.torch.venv}")
    con.print(head)
    for code in plan.blockers:
        con.print(f"[bold red]BLOCKER[/bold red] {escape(code)}")
    for note in plan.notes:
        con.print(f"[yellow]note[/yellow] {escape(note)}")
    if dry is not None and not dry.pending and plan.action is Action.UNINSTALL:
        # Every step of the purge finds its end state already: a list of "(already done)" says
        # less than this.
        con.print(
            f"[green]Nothing to remove: no package, apt source, pin, key or gpuenv file of {escape(t.stack)} "
            f"is on this machine[/green] [dim]({len(plan.steps)} steps checked)[/dim]"
        )
        return
    reports = {r.step.id: r for r in dry.reports} if dry else {}
    vendor = any(s.kind is Kind.APT_SOURCE for s in plan.steps)  # the plan adds an apt source
    runs = [s for s in plan.steps if s.id not in reports or reports[s.id].state != "done"]
    for i, step in enumerate(plan.steps, 1):
        sign, color = _SIGN.get(step.kind, ("·", "white"))
        rep = reports.get(step.id)
        state = _state(step, rep)
        reboot = "  [bold yellow]⟳ reboot after[/bold yellow]" if step.reboot_after and step in runs else ""
        con.print(f"[{color}]{sign}[/{color}] {i:2}. {escape(step.title)}{state}{reboot}")
        what = _what(step)
        if what and what not in step.title:
            con.print(f"       [dim]{escape(what)}[/dim]")
        if step.why:
            con.print(f"       [dim italic]why: {escape(step.why)}[/dim italic]")
        if rep is not None:
            _show_simulation(con, rep, vendor)
    if plan.reboot_required and (dry is None or any(s.reboot_after for s in runs)):
        con.print("[bold yellow]A reboot is needed after this plan (marked ⟳).[/bold yellow]")


def _state(step: Step, rep: StepReport | None) -> str:
    """What the dry run found for a step: nothing to say (it runs), its end state reached
    already, or, for a command, why it is not needed (it was never done: nothing calls for it)."""
    from gpuenv.render.term import markup_safe as escape

    if rep is None or rep.state != "done":
        return ""
    if step.kind is Kind.COMMAND and rep.detail:
        # Machine readers (the Ansible role) count a step line with neither this nor
        # "(already done)" as a change.
        return f" [dim](not needed: {escape(_NOT_NEEDED.get(rep.detail, rep.detail))})[/dim]"
    return " [dim](already done)[/dim]"


# A command's dry-run detail (gpuenv.execute.steps.commands), as a reader of the plan takes it.
_NOT_NEEDED = {"nothing it follows changed": "the steps it follows change nothing"}


def _missing(names: tuple[str, ...], vendor: bool) -> str:
    """Why apt's lists lack these packages. A kernel's headers come from the distribution, never
    from the vendor source a plan adds: a linux-headers package apt cannot find means a kernel
    that is not a distribution kernel."""
    headers = [n for n in names if n.startswith("linux-headers-")]
    others = [n for n in names if n not in headers]
    said = []
    for name in headers:
        release = name.removeprefix("linux-headers-")
        said.append(
            f"{name} (no such package: the running kernel {release} is not a distribution kernel, so DKMS "
            f"can build the driver only against its own build tree at /lib/modules/{release}/build)"
        )
    if others:
        why = "not in apt's lists yet: the vendor source is added by this plan" if vendor else "not in apt's lists"
        said.append(f"{' '.join(others)} ({why})")
    return "; ".join(said)


def _show_simulation(con: Console, rep: StepReport, vendor: bool = False) -> None:
    from gpuenv.render.term import markup_safe as escape

    sim = rep.simulation
    if sim is None:
        return
    if sim.missing:
        con.print(f"       [yellow]apt could not simulate: {escape(_missing(sim.missing, vendor))}[/yellow]")
    elif sim.error:
        con.print(f"       [yellow]apt could not simulate: {escape(sim.error)}[/yellow]")
    else:
        if sim.removes:
            planned = set(rep.step.packages or ())
            names = " ".join(
                f"[bold red]{escape(p)} (COLLATERAL)[/bold red]" if p in rep.collateral else escape(p)
                for p in sim.removes
                if p in planned or p in rep.collateral or rep.step.autoremove
            )
            con.print(f"       apt would remove: {names}")
        if sim.installs:
            con.print(f"       apt would install: {escape(' '.join(sim.installs))}")
    if rep.collateral:
        con.print(
            f"       [bold red]collateral removal: {escape(', '.join(rep.collateral))} is not in the plan; "
            "apply refuses unless --allow-removal names it[/bold red]"
        )
    if rep.kept:
        con.print(f"       [dim]autoremove leaves (not this stack's): {escape(' '.join(rep.kept))}[/dim]")


def progress(con: Console) -> Callable[[str, Step | None, str], None]:
    """An executor event sink that prints each step as it runs, and apt's own progress."""
    last = {"pct": -1.0}

    def on_event(event: str, step: Step | None, detail: str) -> None:
        from gpuenv.render.term import markup_safe as escape

        if event == "step-start":
            con.print(f"[bold]→[/bold] {escape(detail)}")
        elif event == "step-done":
            con.print(f"  [green]✓[/green] {escape(detail)}")
        elif event == "step-skip":
            con.print(f"  [dim]✓ {escape(step.title if step else '')}: already done ({escape(detail)})[/dim]")
        elif event == "apt-status":
            parts = detail.split(":", 3)
            if len(parts) == 4 and parts[0] == "pmstatus":
                try:
                    pct = float(parts[2])
                except ValueError:
                    return
                if pct - last["pct"] >= 10 or pct >= 100:
                    last["pct"] = pct
                    con.print(f"    [dim]{pct:5.1f}% {escape(parts[3])}[/dim]")

    return on_event


def show_outcome(con: Console, outcome: Outcome) -> None:
    from gpuenv.render.term import markup_safe as escape

    counts: dict[str, int] = {}
    for r in outcome.reports:
        counts[r.state] = counts.get(r.state, 0) + 1
    summary = ", ".join(f"{n} {state}" for state, n in counts.items())
    color = "green" if outcome.exit == 0 else "red"
    con.print(f"[{color}]{escape(outcome.message)}[/{color}]" + (f"  ({summary})" if summary else ""))
    if outcome.collateral:
        con.print(f"[bold red]collateral removal refused: {escape(', '.join(outcome.collateral))}[/bold red]")
    if outcome.log_path:
        con.print(f"[dim]log: {escape(outcome.log_path)}[/dim]")
