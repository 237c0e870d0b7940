"""`gpuenv install|uninstall|plan|apply`: make a plan, show it, apply it.

The plan is made by the pure planner from the facts of the machine it changes (probed now, of
``--root``) or, to be shown only, from ``--facts FILE``. Applying is the executor's business.

A saved plan is untrusted input: reviewed, then applied later, maybe by a script. `apply` never
trusts what the file says it does. It probes the machine now, refuses when the machine changed
since the plan was made, makes the plan again from those facts and the request the file records,
and refuses unless the two are the same to the byte. The request itself (stack, versions, venv,
user) is what the file could widen, so it is shown again and confirmed at the terminal, or, with
``--yes``, must be repeated with ``--expect`` (``gpuenv plan`` prints the exact line). As root, a
plan file that an account other than root (and the sudo user) could write is refused.

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

PLAN_MAX = 4 << 20


class _Stop(Exception):
    def __init__(self, code: Exit, message: str) -> None:
        super().__init__(message)
        self.code = code


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
    _stack(p, auto=True)
    p.add_argument("--out", metavar="FILE", required=True, help="write the plan here")
    _target_options(p)
    p.add_argument("--uninstall", action="store_true", help="plan the purge of STACK instead")
    add_facts(p)
    add_root(p, "plan for")


def configure_apply(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "plan_file",
        nargs="?",
        metavar="FILE",
        help="a plan saved by `gpuenv plan` (with --resume: default, the plan the journal holds)",
    )
    p.add_argument("--resume", action="store_true", help="continue an interrupted apply of this plan")
    p.add_argument(
        "--expect",
        metavar="REQUEST",
        help="with --yes: the request you reviewed, as `gpuenv plan` printed it "
        "(e.g. 'install rocm --user alice'); the plan's must be the same",
    )
    _apply_options(p)


# -- making plans ------------------------------------------------------------------------------


def _matrices():
    from gpuenv.matrices import MatrixError, load

    try:
        return load()
    except MatrixError as exc:
        raise _Stop(Exit.USAGE, f"cannot read the matrices: {exc}") from None


def _repos():
    from gpuenv.plan import repos
    from gpuenv.plan.plan import PlanError

    try:
        return repos.load()
    except PlanError as exc:
        raise _Stop(Exit.USAGE, str(exc)) from exc


def _facts_of(facts_file: str | None, root: str, user: str | None):
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


def _planned_facts(args: argparse.Namespace):
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


def _request(action: str, args: argparse.Namespace, facts, user: str | None):
    from gpuenv import __version__
    from gpuenv.plan import planner
    from gpuenv.plan.plan import Action, PlanError, Request

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
            created_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            gpuenv_version=__version__,
        )
    except PlanError as exc:
        raise Usage(str(exc)) from None


def _make(req, facts):
    from gpuenv.plan import planner
    from gpuenv.plan.plan import PlanError

    try:
        return planner.make_plan(facts, _matrices(), _repos(), req)
    except PlanError as exc:
        raise Usage(str(exc)) from None


# -- showing and applying ----------------------------------------------------------------------


def _err(message: str) -> None:
    from gpuenv.render.plan import console

    console(stderr=True).print(f"[red]error:[/red] {_escape(message)}", markup=True, highlight=False)


def _escape(text: str) -> str:
    from gpuenv.render.plan import escape

    return escape(text)


def _expected(plan, line: str, expect: str) -> bool:
    """Whether --expect names what the saved plan was asked to do, word for word."""
    return plan.request.named_by(expect) if plan.request else " ".join(expect.split()) == line


def _confirm(plan, args: argparse.Namespace, saved: bool) -> None:
    """The user's yes to what the plan was asked to do: at the terminal, or --yes (and, for a
    saved plan, --expect naming its request)."""
    line = plan.request.line() if plan.request else f"{plan.action.value} {plan.target.stack}"
    if args.yes:
        if saved and not _expected(plan, line, args.expect or ""):
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


def _execute(plan, facts_now, args: argparse.Namespace, resume: bool = False):
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


def _show_or_apply(plan, facts, args: argparse.Namespace) -> Exit:
    """install/uninstall: print the plan (JSON, or with apt's simulation), then apply unless
    --dry-run. A plan with blockers is shown and exits 3 (refused), --force aside."""
    from gpuenv.render.plan import console, plan_json, show_plan

    blocked = Exit.REFUSED if plan.blockers and not args.force else Exit.OK
    if args.json_out:
        sys.stdout.write(plan_json(plan) + "\n")
        return blocked
    from gpuenv.execute import executor

    root = args.root or "/"
    con = console()
    # A facts file describes some machine, maybe not this one: apt's view of this one says nothing.
    inspect = not args.facts_file and _apt_usable(root)
    from gpuenv.execute.runner import Untrusted
    from gpuenv.rootpath import PathEscape

    try:
        dry = executor.dry_run(plan, root) if inspect else None
    except (PathEscape, Untrusted) as exc:
        raise _Stop(Exit.REFUSED, f"the dry run refused: {exc} (nothing was changed)") from exc
    except (OSError, RuntimeError) as exc:  # RuntimeError: DryRunViolation, a bug, said plainly
        raise _Stop(Exit.PROBLEMS, f"the dry run stopped: {exc} (nothing was changed)") from exc
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


def _guard(fn) -> int:
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
        line = plan.request.line() if plan.request else ""
        import shlex

        con.print(
            f"apply it with: {_escape(apply_line(args.out, args.root))}"
            + (f"    (unattended: --yes --expect {_escape(shlex.quote(line))})" if line else "")
        )
        return Exit.REFUSED if plan.blockers else Exit.OK

    return _guard(go)


def apply_line(plan_file: str, root: str | None) -> str:
    """The `apply` command line that works as printed: this very gpuenv by its absolute path
    (sudo's secure_path holds no venv, and a bare `gpuenv` could be another one), through sudo
    only for a user who is not root (minimal images and containers have no sudo)."""
    words = [*_this_gpuenv(), "apply", plan_file]
    if root and root != "/":
        words += ["--root", os.path.abspath(root)]
    import shlex

    return ("" if os.geteuid() == 0 else "sudo ") + shlex.join(words)


def _this_gpuenv() -> list[str]:
    """The command that started this process: its console script, else the interpreter's own
    (`python -m gpuenv` has no script of its own to name)."""
    script = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if os.path.basename(script) == "gpuenv" and os.path.isfile(script):
        return [script]
    return [sys.executable, "-m", "gpuenv"]


def run_apply(args: argparse.Namespace) -> int:
    def go() -> Exit:
        if args.resume:
            return _resume(args)
        if not args.plan_file:
            raise Usage("apply needs FILE (a plan saved by gpuenv plan), or --resume")
        plan = _load_plan(args.plan_file)
        if _already_applied(args.root or "/", plan):
            sys.stdout.write("this plan was already applied: nothing to do\n")
            return Exit.OK
        facts_now = _probe_now(args.root or "/", plan.user)
        if facts_now.digest() != plan.facts_digest:
            raise _Stop(
                Exit.REFUSED,
                "stale plan: this machine changed since the plan was made "
                f"(facts now {facts_now.digest()[:19]}…, plan {plan.facts_digest[:19]}…). Nothing was changed. "
                "Make a new plan: gpuenv plan ... --out FILE",
            )
        _refuse_edited(plan, facts_now)
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


def _load_plan(path: str):
    from gpuenv.plan import planfile
    from gpuenv.plan.plan import PlanError

    if os.geteuid() == 0:
        from gpuenv.trust import untrusted

        why = untrusted(path, trusted_uids=_trusted_uids())
        if why:
            raise _Stop(
                Exit.REFUSED,
                f"refusing the plan {path}: {why}. As root, gpuenv applies only a plan that no other account "
                "could have changed (move it somewhere only root, or you, can write). Nothing was changed.",
            )
    try:
        return planfile.load(path)
    except PlanError as exc:
        raise Usage(str(exc)) from None


def _already_applied(root: str, plan) -> bool:
    """The journal says this very plan ran to its end (a second apply changes nothing)."""
    from gpuenv.execute.journal import Journal, JournalError
    from gpuenv.plan import planfile

    try:
        state = Journal(root).read()
    except JournalError:
        return False  # the executor says what is wrong with it
    return state.finished and state.plan_digest == planfile.digest(plan)


def _trusted_uids() -> frozenset[int]:
    """root, and the account that ran sudo (it could become root anyway)."""
    uids = {0}
    sudo_uid = os.environ.get("SUDO_UID", "")
    if sudo_uid.isdigit():
        uids.add(int(sudo_uid))
    return frozenset(uids)


def _probe_now(root: str, user: str | None):
    try:
        return probe_facts(None if root == "/" else root, user)
    except Usage as exc:
        raise _Stop(Exit.REFUSED, f"cannot probe {root} ({exc}): whether the plan is stale is unknown; nothing was changed") from None


def _refuse_edited(plan, facts_now) -> None:
    """The plan gpuenv makes now, from the facts probed now and the request the file records,
    must be the file's plan to the byte (its creation time aside). Anything else, a step, path,
    content, key or command changed after planning, is refused before any change; --force does
    not override it."""
    from gpuenv import __version__
    from gpuenv.plan import planfile, planner
    from gpuenv.plan.plan import PlanError
    from gpuenv.record import replace

    if plan.request is None:
        raise _Stop(
            Exit.REFUSED,
            "this plan records no request (made by gpuenv 0.1.0): make a new plan with gpuenv plan ... --out FILE",
        )
    req = replace(plan.request, created_at=plan.created_at, gpuenv_version=__version__)
    try:
        fresh = planner.make_plan(facts_now, _matrices(), _repos(), req)
    except PlanError:
        fresh = None
    if fresh is None or planfile.digest(fresh) != planfile.digest(plan):
        raise _Stop(
            Exit.REFUSED,
            "this plan is not the one gpuenv makes from this machine and the request it records: the file "
            "was edited after it was made, or gpuenv or its matrices changed since. "
            "Nothing was changed. Make a new plan (gpuenv plan ... --out FILE) and review it.",
        )


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
