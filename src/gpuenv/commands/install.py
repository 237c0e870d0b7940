"""`gpuenv install|uninstall|plan`: make a plan, show it, apply it (`apply` is commands/apply.py).

The plan is made by the pure planner from the facts of the machine it changes (probed now, of
``--root``) or, to be shown only, from ``--facts FILE``. Applying is the executor's business.

A saved plan is untrusted input: reviewed (`plan show FILE`, `apply FILE --dry-run`), then
applied later, maybe by a script. `apply` never trusts what the file says it does: the rules
that admit it are ``gpuenv.plan.admission``. The request itself (stack, versions, venv, user)
is what the file could widen, so it is shown again and confirmed at the terminal, or, with
``--yes``, must be repeated with ``--expect`` (``gpuenv plan`` prints the exact line).

The vendor repositories and keys come from the matrices in effect (``gpuenv.plan.repos``): no
option or environment variable changes them.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from gpuenv.commands import Command, Usage, add_facts, add_json, add_root, probe_facts, read_facts
from gpuenv.exitcodes import Exit
from gpuenv.plan.admission import Refusal as _Stop

TYPE_CHECKING = False  # typing's flag without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Callable

    from gpuenv.execute.executor import Outcome
    from gpuenv.facts import Facts
    from gpuenv.matrices import Matrices
    from gpuenv.plan.plan import Plan, Request
    from gpuenv.plan.repos import Repos
    from gpuenv.render.console import Console

# -- options -----------------------------------------------------------------------------------


def _stack(p: argparse.ArgumentParser, auto: bool) -> None:
    choices = ("rocm", "cuda", "auto") if auto else ("rocm", "cuda")
    p.add_argument(
        "stack",
        choices=choices,
        metavar="|".join(choices),
        help="the GPU stack" + ("; auto: the one the GPUs need" if auto else ""),
    )


def _target_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--version", metavar="VER", help="ROCm or CUDA release (default: the matrices' choice)")
    p.add_argument("--torch", metavar="VER", help="also install this PyTorch release into --venv")
    p.add_argument("--venv", metavar="DIR", help="virtualenv for --torch (made and filled as --user)")
    p.add_argument(
        "--user",
        metavar="NAME",
        help="the account added to render/video and owning the venv (default: SUDO_USER)",
    )
    p.add_argument("--trust-unconfirmed-key", dest="trust_key", metavar="FINGERPRINT",
                   help="pin this repository key although no vendor page confirms its fingerprint (repeat it in full)")  # fmt: skip


def _apply_options(p: argparse.ArgumentParser) -> None:
    add_root(p, "change")
    p.add_argument("--yes", "-y", action="store_true", help="apply without asking")
    p.add_argument(
        "--force", action="store_true", help="apply despite blockers (never despite a stale or edited plan)"
    )
    p.add_argument(
        "--allow-removal",
        dest="allow",
        metavar="PKG",
        action="append",
        default=[],
        help="let apt remove this package too (repeatable)",
    )


def configure_install(p: argparse.ArgumentParser) -> None:
    _stack(p, auto=True)
    _target_options(p)
    p.add_argument("--dry-run", action="store_true", help="show the plan and apt's simulation; change nothing")
    add_json(p, "the plan (gpuenv.plan/1) and stop")
    add_facts(p)
    _apply_options(p)


def configure_uninstall(p: argparse.ArgumentParser) -> None:
    _stack(p, auto=False)
    p.add_argument("--dry-run", action="store_true", help="show the purge and apt's simulation; change nothing")
    add_json(p, "the plan (gpuenv.plan/1) and stop")
    add_facts(p)
    _apply_options(p)


def configure_plan(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "stack",
        choices=("rocm", "cuda", "auto", "show"),
        metavar="rocm|cuda|auto|show",
        help="the GPU stack to plan for (auto: the one the GPUs need); show FILE: a saved plan, as the dry run shows it",
    )
    p.add_argument("plan_file", nargs="?", metavar="FILE", help="with show: the saved plan to show")
    p.add_argument("--out", metavar="FILE", help="write the plan here (required, except for show)")
    _target_options(p)
    p.add_argument("--uninstall", action="store_true", help="plan the purge of STACK instead")
    add_facts(p)
    add_root(p, "plan for")
    add_json(p, "with show: the saved plan (gpuenv.plan/1)")


def configure_apply(p: argparse.ArgumentParser) -> None:
    from gpuenv.commands import apply

    apply.configure(p)


# -- making plans ------------------------------------------------------------------------------


def _matrices() -> Matrices:
    from gpuenv.matrices import MatrixError, load

    try:
        return load()
    except MatrixError as exc:
        raise _Stop(Exit.USAGE, f"cannot read the matrices: {exc}") from None


def _repos() -> Repos:
    from gpuenv.plan import repos
    from gpuenv.plan.plan import PlanError

    try:
        return repos.load()
    except PlanError as exc:
        raise _Stop(Exit.USAGE, str(exc)) from exc


def _facts_of(facts_file: str | None, root: str, user: str | None) -> Facts:
    if facts_file:
        return read_facts(facts_file)
    return probe_facts(None if root == "/" else root, user)


def _default_user(args: argparse.Namespace) -> str | None:
    """The account a plan is for when --user is not given: the one who ran sudo, else, planning
    for this machine as a normal user (the README's `gpuenv plan` before `sudo ... apply`), that
    user."""
    if os.environ.get("SUDO_USER"):
        return os.environ["SUDO_USER"]
    if os.geteuid() == 0 or getattr(args, "facts_file", None) or (args.root or "/") != "/":
        return None
    import pwd

    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:  # an account without a name: nobody to add to the groups
        return None


def _planned_facts(args: argparse.Namespace) -> tuple[Facts, str | None]:
    """The facts a plan is made from, probed for the plan's user (as `apply` probes them again).

    A --user the machine (or --root) has no account for is refused; the default user missing
    there (sudo's user under a --root image) means no user. A facts file describes one user:
    the planner notes that it could not check another."""
    explicit = getattr(args, "user", None)
    user = explicit or _default_user(args)
    facts = _facts_of(args.facts_file, args.root or "/", user)
    if user is None or args.facts_file or (facts.user is not None and facts.user.name == user):
        return facts, user
    if not any(e.probe == "users" for e in facts.errors):
        return facts, user
    if explicit:
        where = "this machine" if (args.root or "/") == "/" else args.root
        raise Usage(f"--user {explicit!r}: {where} has no such account (nothing was planned)")
    return _facts_of(None, args.root or "/", None), None


def _request(action: str, args: argparse.Namespace, facts: Facts, user: str | None) -> Request:
    from gpuenv import __version__
    from gpuenv.plan import planner
    from gpuenv.plan.plan import Action, PlanError, Request, trusted_fingerprint

    stack = args.stack
    if stack == "auto":
        stack = planner.choose_stack(facts, _matrices())
        if stack is None:
            raise Usage("auto: cannot choose (no NVIDIA or AMD GPU a stack could use, or both): say rocm or cuda")
    try:
        return Request(
            action=Action(action),
            stack=stack,
            version=getattr(args, "version", None),
            torch=getattr(args, "torch", None),
            venv=getattr(args, "venv", None),
            user=user,
            trust_key=trusted_fingerprint(args.trust_key) if getattr(args, "trust_key", None) else None,
            created_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            gpuenv_version=__version__,
        )
    except PlanError as exc:
        raise Usage(str(exc)) from None


def _make(req: Request, facts: Facts) -> Plan:
    from gpuenv.plan import planner
    from gpuenv.plan.plan import KeyNotTrusted, PlanError

    try:
        return planner.make_plan(facts, _matrices(), _repos(), req)
    except KeyNotTrusted as exc:  # a key no vendor page confirms: refused, not a usage error (#42)
        raise _Stop(Exit.REFUSED, f"{exc}. Nothing was planned.") from None
    except PlanError as exc:
        raise Usage(str(exc)) from None


# -- showing and applying ----------------------------------------------------------------------


def _err(message: str) -> None:
    from gpuenv.render.plan import console

    console(stderr=True).print(f"[red]error:[/red] {_escape(message)}", markup=True, highlight=False)


def _escape(text: str) -> str:
    from gpuenv.render.plan import escape

    return escape(text)


def _confirm(plan: Plan, args: argparse.Namespace, saved: bool) -> None:
    """The user's yes to what the plan was asked to do: at the terminal, or --yes (and, for a
    saved plan, --expect naming its request)."""
    from gpuenv.plan import admission

    line = admission.request_line(plan)
    if args.yes:
        if saved and not admission.expected(plan, args.expect or ""):
            import shlex

            raise _Stop(
                Exit.REFUSED,
                f"with --yes, a saved plan is applied only when --expect names its request: --expect "
                f"{shlex.quote(line)} (what you reviewed). Nothing was changed.",
            )
        return
    if not sys.stdin.isatty():
        raise _Stop(Exit.REFUSED, "not confirmed: no terminal to ask on; pass --yes (nothing was changed)")
    from gpuenv.render.plan import console

    con = console()
    con.print(f"[bold]This plan does:[/bold] {_escape(line)}")
    answer = input("Apply this plan? [y/N] ").strip().lower()
    if answer not in ("y", "yes"):
        raise _Stop(Exit.REFUSED, "not confirmed; nothing was changed")


def _execute(plan: Plan, facts_now: Facts | None, args: argparse.Namespace, resume: bool = False) -> Exit:
    from gpuenv.execute import executor
    from gpuenv.render.plan import console, progress, show_outcome

    con = console()
    opts = executor.Options(
        allow_removal=frozenset(args.allow),
        force=args.force,
        resume=resume,
        facts_now=facts_now,
        on_event=progress(con),
        loopback_http=_repos().loopback_keys,
    )
    outcome = executor.apply(plan, args.root or "/", opts)
    show_outcome(con, outcome)
    return outcome.exit


def _show_or_apply(plan: Plan, facts: Facts, args: argparse.Namespace) -> Exit:
    """install/uninstall: print the plan (JSON, or with apt's simulation), then apply unless
    --dry-run. A plan with blockers is shown and exits 3 (refused), --force aside."""
    from gpuenv.render.plan import console, plan_json, show_plan

    blocked = Exit.REFUSED if plan.blockers and not args.force else Exit.OK
    if args.json_out:
        sys.stdout.write(plan_json(plan) + "\n")
        return blocked

    root = args.root or "/"
    con = console()
    # A facts file describes some machine, maybe not this one: apt's view of this one says nothing.
    dry = None if args.facts_file else _dry(plan, root)
    show_plan(con, plan, dry)
    if dry is None:
        why = "the plan comes from a facts file" if args.facts_file else "apt is not usable for this root"
        con.print(f"[dim]no apt simulation: {why}[/dim]")
    if args.dry_run:
        con.print("[dim]dry run: nothing was changed[/dim]")
        return blocked
    if args.facts_file:
        raise Usage(
            "--facts plans are for showing (--dry-run, --json) or saving (gpuenv plan): an apply is made "
            "from the facts of the machine it changes"
        )
    if dry is not None and not dry.pending:
        con.print("[green]Nothing to do: the machine already matches this plan.[/green]")
        return Exit.OK
    if blocked:
        raise _Stop(Exit.REFUSED, f"the plan has blockers ({', '.join(plan.blockers)}); nothing was changed. --force overrides.")
    _confirm(plan, args, saved=False)
    return _execute(plan, facts, args)


def _apt_usable(root: str) -> bool:
    from gpuenv.probe.host import which

    if root == "/":
        return which("apt-get") is not None and which("dpkg-query") is not None
    return os.path.exists(os.path.join(root, "usr/bin/apt-get")) and os.geteuid() == 0


def _guard(fn: Callable[[], Exit]) -> int:
    try:
        return int(fn())
    except _Stop as exc:
        _err(str(exc))
        return int(exc.code)


# -- the commands ------------------------------------------------------------------------------


def run_install(args: argparse.Namespace) -> int:
    def go() -> Exit:
        facts, user = _planned_facts(args)
        return _show_or_apply(_make(_request("install", args, facts, user), facts), facts, args)

    return _guard(go)


def run_uninstall(args: argparse.Namespace) -> int:
    def go() -> Exit:
        facts, user = _planned_facts(args)
        return _show_or_apply(_make(_request("uninstall", args, facts, user), facts), facts, args)

    return _guard(go)


def run_plan(args: argparse.Namespace) -> int:
    from gpuenv.plan import planfile

    def go() -> Exit:
        if args.stack == "show":
            return _show_file(args)
        if args.plan_file:
            raise Usage(f"plan {args.stack}: unexpected argument {args.plan_file!r} (FILE goes with --out FILE)")
        if not args.out:
            raise Usage(f"plan {args.stack}: --out FILE is required (where to save the plan)")
        if args.json_out:
            raise Usage("plan: --json goes with show FILE; for a plan as JSON: gpuenv install STACK --json")
        facts, user = _planned_facts(args)
        plan = _make(_request("uninstall" if args.uninstall else "install", args, facts, user), facts)
        try:
            planfile.save(plan, args.out)
        except OSError as exc:
            raise Usage(f"cannot write {args.out}: {exc.strerror or exc}") from None
        from gpuenv.render.plan import console, show_plan

        con = console()
        show_plan(con, plan)
        con.print(f"[green]plan saved to {_escape(args.out)}[/green]")
        _say_request(con, plan, args.out, args.root)
        return Exit.REFUSED if plan.blockers else Exit.OK

    return _guard(go)


def _show_file(args: argparse.Namespace) -> Exit:
    """`plan show FILE`: the saved plan as the dry run shows it (or its JSON), the request it
    records and the apply line. Nothing is checked against this machine: `apply FILE --dry-run`
    does that."""
    from gpuenv.plan import planfile
    from gpuenv.plan.plan import PlanError

    if not args.plan_file:
        raise Usage("plan show: which plan? gpuenv plan show FILE")
    if args.out:
        raise Usage("plan show: --out goes with a stack (gpuenv plan rocm --out FILE)")
    try:
        plan = planfile.load(args.plan_file)
    except PlanError as exc:
        raise Usage(str(exc)) from None
    blocked = Exit.REFUSED if plan.blockers else Exit.OK
    from gpuenv.render.plan import console, plan_json, show_plan

    if args.json_out:
        sys.stdout.write(plan_json(plan) + "\n")
        return blocked
    con = console()
    show_plan(con, plan)
    _say_request(con, plan, args.plan_file, args.root)
    con.print(f"[dim]check it against this machine: {_escape(_apply_words(args.plan_file, args.root, '--dry-run'))}[/dim]")
    return blocked


def _say_request(con: Console, plan: Plan, plan_file: str, root: str | None) -> None:
    import shlex

    line = plan.request.line() if plan.request else ""
    con.print(
        f"apply it with: {_escape(apply_line(plan_file, root))}"
        + (f"    (unattended: --yes --expect {_escape(shlex.quote(line))})" if line else "")
    )


def _dry(plan: Plan, root: str) -> Outcome | None:
    """The executor's dry run of ``plan`` on ``root``; None where apt cannot simulate."""
    if not _apt_usable(root):
        return None
    from gpuenv.execute import executor
    from gpuenv.execute.runner import Untrusted
    from gpuenv.rootpath import PathEscape

    try:
        return executor.dry_run(plan, root)
    except (PathEscape, Untrusted) as exc:
        raise _Stop(Exit.REFUSED, f"the dry run refused: {exc} (nothing was changed)") from exc
    except (OSError, RuntimeError) as exc:  # RuntimeError: DryRunViolation, a bug, said plainly
        raise _Stop(Exit.PROBLEMS, f"the dry run stopped: {exc} (nothing was changed)") from exc


def _apply_words(plan_file: str, root: str | None, *more: str) -> str:
    words = [*_this_gpuenv(), "apply", plan_file, *more]
    if root and root != "/":
        words += ["--root", os.path.abspath(root)]
    import shlex

    return ("" if os.geteuid() == 0 else "sudo ") + shlex.join(words)


def apply_line(plan_file: str, root: str | None) -> str:
    """The `apply` command line that works as printed: this very gpuenv by its absolute path
    (sudo's secure_path holds no venv, and a bare `gpuenv` could be another one), through sudo
    only for a user who is not root (minimal images and containers have no sudo)."""
    return _apply_words(plan_file, root)


def _this_gpuenv() -> list[str]:
    """The command that started this process: its console script, else the interpreter's own
    (`python -m gpuenv` has no script of its own to name)."""
    script = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if os.path.basename(script) == "gpuenv" and os.path.isfile(script):
        return [script]
    return [sys.executable, "-m", "gpuenv"]


def run_apply(args: argparse.Namespace) -> int:
    from gpuenv.commands import apply

    return apply.run(args)


COMMANDS = {
    "install": Command(
        "install",
        "plan and install a GPU stack (rocm, cuda or auto); --dry-run shows the plan",
        configure_install,
        run_install,
        "Exit status: 0 done (or nothing to do), 1 a step failed, 2 usage error, 3 refused before any\n"
        "change (blockers, not confirmed, collateral removal, a bad key), 4 another apply or dpkg\n"
        "holds the lock. A --dry-run or --json of a plan with blockers exits 3 too.",
    ),
    "uninstall": Command(
        "uninstall",
        "purge a GPU stack: its packages, sources, pins, keys and gpuenv's files",
        configure_uninstall,
        run_uninstall,
        "Exit status as for install.",
    ),
    "plan": Command(
        "plan",
        "save an install (or --uninstall) plan to a file, to review now and apply later",
        configure_plan,
        run_plan,
        "Prints the plan and the exact `gpuenv apply` line. Exit 0, or 3 when the plan has blockers.",
    ),
    "apply": Command(
        "apply",
        "apply a saved plan, refused when the machine or the file changed since it was made",
        configure_apply,
        run_apply,
        "The request the plan records is confirmed at the terminal, or with --yes --expect REQUEST.\n"
        "--resume continues an interrupted apply (after a crash or the reboot a plan asks for).\n"
        "Exit status as for install.",
    ),
}
