"""`gpuenv apply FILE` and `apply --resume`: a saved plan, admitted, then applied (or, with
--dry-run, shown with apt's simulation of this machine now).

What admits a saved plan (a file only root could have written, a machine that has not changed,
a plan gpuenv would make again to the byte) is ``gpuenv.plan.admission``; this module asks it,
confirms the request, and hands the plan to the executor.
"""

from __future__ import annotations

import argparse
import sys

from gpuenv.commands import Usage, probe_facts
from gpuenv.commands.install import (
    _apply_options,
    _confirm,
    _dry,
    _execute,
    _guard,
    _matrices,
    _repos,
)
from gpuenv.exitcodes import Exit
from gpuenv.plan.admission import Refusal as _Stop

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from gpuenv.facts import Facts
    from gpuenv.plan.plan import Plan


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "plan_file",
        nargs="?",
        metavar="FILE",
        help="a plan saved by `gpuenv plan`, or - for standard input (with --resume: default, the plan the "
        "journal holds)",
    )
    p.add_argument("--resume", action="store_true", help="continue an interrupted apply of this plan")
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="check the plan against this machine now (stale? edited?) and show what would run; change nothing",
    )
    p.add_argument(
        "--expect",
        metavar="REQUEST",
        help="with --yes: the request you reviewed, as `gpuenv plan` printed it "
        "(e.g. 'install rocm --user alice'); the plan's must be the same",
    )
    _apply_options(p)


def run(args: argparse.Namespace) -> int:
    def go() -> Exit:
        if args.resume:
            if args.dry_run:  # a resume continues a run that changed the machine already
                raise Usage("--dry-run and --resume do not go together: review the plan with apply FILE --dry-run")
            return _resume(args)
        if not args.plan_file:
            raise Usage("apply needs FILE (a plan saved by gpuenv plan), or --resume")
        plan = _load_plan(args.plan_file)
        if _already_applied(args.root or "/", plan):
            sys.stdout.write("this plan was already applied: nothing to do\n")
            return Exit.OK
        facts_now = _admit(plan, args.root or "/")
        if args.dry_run:
            return _show_saved(plan, args)
        from gpuenv.render.plan import console, show_plan

        show_plan(console(), plan)
        if plan.blockers and not args.force:
            raise _Stop(
                Exit.REFUSED,
                f"the plan has blockers ({', '.join(plan.blockers)}); nothing was changed. --force overrides.",
            )
        _confirm(plan, args, saved=True)
        return _execute(plan, facts_now, args)

    return _guard(go)


def _load_plan(path: str) -> Plan:
    from gpuenv.plan import admission

    if path == "-":  # never a file named "-" in the working directory (root's may be anyone's)
        return _plan_from_stdin()
    try:
        return admission.load(path)
    except admission.Refusal as exc:
        if exc.code is Exit.USAGE:  # not a plan: said as every usage error is
            raise Usage(str(exc)) from None
        raise


def _plan_from_stdin() -> Plan:
    """`apply -`: the plan from standard input, which whoever runs gpuenv chose as it chooses
    FILE. It is admitted as a file is (same machine, made again to the byte); confirmed with
    --yes, since the terminal cannot be asked once standard input is the plan."""
    from gpuenv.plan import planfile
    from gpuenv.plan.plan import PlanError

    data = sys.stdin.buffer.read(planfile.MAX_BYTES + 1)
    if len(data) > planfile.MAX_BYTES:
        raise Usage(f"plan on standard input: larger than {planfile.MAX_BYTES} bytes")
    try:
        return planfile.loads(data)
    except PlanError as exc:
        raise Usage(f"plan on standard input: {str(exc).removeprefix('plan: ')}") from None


def _already_applied(root: str, plan: Plan) -> bool:
    from gpuenv.execute.journal import Journal, JournalError
    from gpuenv.plan import admission

    try:
        state = Journal(root).read()
    except JournalError:
        return False  # the executor says what is wrong with it
    return admission.already_applied(plan, state.finished, state.plan_digest)


def _admit(plan: Plan, root: str) -> Facts:
    """The facts of the machine now, once the saved plan is admitted to it (not stale, not
    edited); a Refusal otherwise."""
    from gpuenv.plan import admission

    facts_now = _probe_now(root, plan.user)
    admission.admit(plan, facts_now, _matrices(), _repos())
    return facts_now


def _probe_now(root: str, user: str | None) -> Facts:
    try:
        return probe_facts(None if root == "/" else root, user)
    except Usage as exc:
        raise _Stop(Exit.REFUSED, f"cannot probe {root} ({exc}): whether the plan is stale is unknown; nothing was changed") from None


def _resume(args: argparse.Namespace) -> Exit:
    """Continue the journal's plan (the one this root's last apply began), after a crash or a
    reboot. A FILE given must be that same plan."""
    from gpuenv.execute.journal import Journal, JournalError
    from gpuenv.plan import planfile

    root = args.root or "/"
    try:
        plan = Journal(root).saved_plan()
    except JournalError as exc:
        raise _Stop(Exit.REFUSED, str(exc)) from None
    if plan is None:
        if args.plan_file:
            raise _Stop(Exit.REFUSED, "nothing to resume: the journal holds no unfinished apply")
        # The boot-time unit of the provisioning hook asks after every reboot: a finished (or
        # never started) apply is the good answer, not an error.
        sys.stdout.write("nothing to resume: no apply is unfinished\n")
        return Exit.OK
    if args.plan_file and planfile.digest(_load_plan(args.plan_file)) != planfile.digest(plan):
        raise _Stop(Exit.REFUSED, f"{args.plan_file} is not the plan the journal is applying; nothing was changed")
    facts_now = None
    try:
        facts_now = probe_facts(None if root == "/" else root, plan.user)
    except Usage:
        pass  # a resume continues what was checked when it began
    return _execute(plan, facts_now, args, resume=True)


def _show_saved(plan: Plan, args: argparse.Namespace) -> Exit:
    """`apply FILE --dry-run`, once the plan is admitted: the plan with apt's simulation of this
    machine now, as install --dry-run shows it. Nothing is changed, nothing is confirmed."""
    from gpuenv.render.plan import console, show_plan

    con = console()
    dry = _dry(plan, args.root or "/")
    show_plan(con, plan, dry)
    if dry is None:
        con.print("[dim]no apt simulation: apt is not usable for this root[/dim]")
    con.print("[green]the plan matches this machine and the request it records[/green]")
    if dry is not None and not dry.pending:
        con.print("[green]Nothing to do: the machine already matches this plan.[/green]")
    con.print("[dim]dry run: nothing was changed[/dim]")
    return Exit.REFUSED if plan.blockers and not args.force else Exit.OK
