"""`gpuenv install|uninstall|plan|apply`: parse options, make or load a plan, show it, apply it.

Facts come from ``--facts FILE`` or the probe of ``--root``; the plan is made by the pure planner;
what runs is the executor's business. Test-only: ``GPUENV_TEST_REPO_MAP`` (vendor URL prefix ->
local URL, comma-separated ``https://repo.radeon.com=http://127.0.0.1:PORT/amd``) and
``GPUENV_TEST_KEY_FINGERPRINTS`` (``amd=HEX,nvidia=HEX``) point plans at a local signed
repository; plans made with them are marked ``test_overrides``.
"""

from __future__ import annotations

import os
import sys
import time

import typer

from gpuenv.exitcodes import Exit

TEST_REPO_MAP = "GPUENV_TEST_REPO_MAP"
TEST_KEY_FINGERPRINTS = "GPUENV_TEST_KEY_FINGERPRINTS"

_Stack = typer.Argument(..., help="rocm, cuda (or auto for install/plan)")
_Facts = typer.Option(None, "--facts", help="plan from this facts file instead of probing the machine")
_Root = typer.Option("/", "--root", help="apply into this root (a chroot): commands run inside it")
_Force = typer.Option(False, "--force", help="apply despite blockers (a container's user space, ...)")
_Allow = typer.Option([], "--allow-removal", help="let apt remove this package too (repeatable)")


class _Stop(Exception):
    def __init__(self, code: Exit, message: str) -> None:
        super().__init__(message)
        self.code = code


def _err(message: str) -> None:
    from gpuenv.render.plan import console

    console(stderr=True).print(f"[red]error:[/red] {message}", markup=True, highlight=False)


def _facts(path: str | None, root: str, user: str | None):
    from gpuenv import facts as facts_mod

    if path:
        try:
            with open(path) as fh:
                return facts_mod.loads(fh.read())
        except OSError as exc:
            raise _Stop(Exit.USAGE, f"cannot read facts {path}: {exc.strerror}") from exc
        except facts_mod.FactsError as exc:
            raise _Stop(Exit.USAGE, str(exc)) from exc
    try:
        from gpuenv.probe import collect

        return collect(root=root, user=user)
    except Exception as exc:  # noqa: BLE001 - a probe failure must not crash install; say what to do
        raise _Stop(Exit.USAGE, f"could not probe {root} ({exc}); pass --facts FILE") from exc


def _matrices():
    try:
        from gpuenv import matrices

        return matrices.load()
    except Exception:  # noqa: BLE001 - any failure means "plan without matrices", which the plan notes
        return None


def _repos():
    from gpuenv.plan import repos
    from gpuenv.plan.plan import PlanError

    try:
        overrides = repos.Overrides.parse(
            os.environ.get(TEST_REPO_MAP), os.environ.get(TEST_KEY_FINGERPRINTS)
        )
        return repos.load(overrides=overrides)
    except PlanError as exc:
        raise _Stop(Exit.USAGE, str(exc)) from exc


def _make(action: str, stack: str, version, torch, venv, facts_file, root, user):
    from gpuenv import __version__ as gv
    from gpuenv.plan import planner
    from gpuenv.plan.plan import Action, PlanError

    stack = stack.lower()
    user = user or os.environ.get("SUDO_USER") or None
    facts = _facts(facts_file, root, user)
    matrices = _matrices()
    if stack == "auto" and action == "install":
        chosen = planner.choose_stack(facts, matrices)
        if chosen is None:
            raise _Stop(
                Exit.USAGE, "auto: cannot choose (no NVIDIA or AMD discrete GPU, or both); say rocm or cuda"
            )
        stack = chosen
    if stack not in ("rocm", "cuda"):
        raise _Stop(
            Exit.USAGE,
            f"stack must be rocm or cuda{' or auto' if action == 'install' else ''}, not {stack!r}",
        )
    req = planner.Request(
        action=Action(action),
        stack=stack,
        version=version,
        torch=torch,
        venv=venv,
        user=user,
        created_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        gpuenv_version=gv,
    )
    try:
        return planner.make_plan(facts, matrices, _repos(), req), facts
    except PlanError as exc:
        raise _Stop(Exit.USAGE, str(exc)) from exc


def _refuse_edited(plan, facts) -> None:
    """A saved plan is untrusted input: reviewed, then applied later, maybe by a script with
    --yes. The planner is a pure function of facts, matrices and request, so the plan gpuenv
    would make now from these facts (the ones the plan was made from: the digests match) must be
    the file's plan, to the byte. Anything else (a step, path, content, key or command changed
    after planning) is refused before any change; there is no override."""
    from dataclasses import replace

    from gpuenv.plan import planfile, planner
    from gpuenv.plan.plan import PlanError

    t = plan.target
    req = planner.Request(
        action=plan.action,
        stack=t.stack,
        version=t.version,
        torch=t.torch.version if t.torch else None,
        venv=t.torch.venv if t.torch else None,
        user=plan.user,
        created_at=plan.created_at,
        gpuenv_version=plan.gpuenv_version,
    )
    try:
        fresh = planner.make_plan(facts, _matrices(), _repos(), req)
    except PlanError:
        fresh = None
    if fresh is None or planfile.digest(replace(fresh, created_at=plan.created_at)) != planfile.digest(plan):
        raise _Stop(
            Exit.REFUSED,
            "this plan is not the one gpuenv makes from the facts it names: the file was edited after "
            "it was made, or gpuenv, its matrices or the GPUENV_TEST_* settings changed since. Nothing "
            "was changed. Make a new plan (gpuenv plan ... --out FILE) and review it.",
        )


def _confirm(yes: bool) -> bool:
    if yes:
        return True
    if not sys.stdin.isatty():
        raise _Stop(Exit.REFUSED, "not confirmed: no terminal to ask on; pass --yes")
    return typer.confirm("Apply this plan?", default=False)


def _run_apply(plan, facts_now, root, yes, force, allow, resume=False, dry=None) -> Exit:
    from gpuenv.execute import executor
    from gpuenv.render.plan import console, progress, show_outcome

    con = console()
    if dry is not None and not dry.pending and not resume:
        con.print("[green]Nothing to do: the machine already matches this plan.[/green]")
        return Exit.OK
    if plan.blockers and not force:
        _err(
            "the plan has blockers ("
            + ", ".join(plan.blockers)
            + "); nothing was changed. --force overrides."
        )
        return Exit.REFUSED
    if not _confirm(yes):
        _err("not confirmed; nothing was changed")
        return Exit.REFUSED
    opts = executor.Options(
        allow_removal=frozenset(allow),
        force=force,
        resume=resume,
        facts_now=facts_now,
        on_event=progress(con),
        loopback_http=bool(os.environ.get(TEST_REPO_MAP)),
    )
    outcome = executor.apply(plan, root, opts)
    show_outcome(con, outcome)
    return outcome.exit


def _guard(fn) -> None:
    try:
        code = fn()
    except _Stop as exc:
        _err(str(exc))
        raise typer.Exit(int(exc.code)) from None
    except KeyboardInterrupt:
        raise typer.Exit(int(Exit.INTERRUPTED)) from None
    raise typer.Exit(int(code))


def _show_and_maybe_apply(plan, facts, root, dry_run, yes, as_json, force, allow, from_file) -> Exit:
    from gpuenv.execute import executor
    from gpuenv.render.plan import console, plan_json, show_plan

    if as_json:
        sys.stdout.write(plan_json(plan) + "\n")
        return Exit.OK
    con = console()
    # A facts file describes some machine, not necessarily this one: compare it with this machine's
    # packages and files only when the user pointed --root at the machine the plan is for.
    inspect = _apt_usable(root) and not (from_file and root == "/")
    try:
        dry = executor.dry_run(plan, root) if inspect else None
    except (OSError, RuntimeError) as exc:  # RuntimeError: DryRunViolation, a bug, said plainly
        raise _Stop(Exit.PROBLEMS, f"the dry run stopped: {exc} (nothing was changed)") from exc
    show_plan(con, plan, dry)
    if dry is None:
        why = "the plan comes from a facts file" if from_file else "apt is not usable for this root"
        con.print(f"[dim]no apt simulation: {why}[/dim]")
    if dry_run:
        con.print("[dim]dry run: nothing was changed[/dim]")
        return Exit.OK
    return _run_apply(plan, facts, root, yes, force, allow, dry=dry)


def _apt_usable(root: str) -> bool:
    import shutil

    if root == "/":
        return shutil.which("apt-get") is not None and shutil.which("dpkg-query") is not None
    return os.path.exists(os.path.join(root, "usr/bin/apt-get")) and os.geteuid() == 0


def register(app: typer.Typer) -> None:
    """Add install, uninstall, plan and apply."""

    @app.command()
    def install(
        stack: str = _Stack,
        version: str | None = typer.Option(
            None, "--version", help="ROCm or CUDA release (default: the matrices' choice)"
        ),
        torch: str | None = typer.Option(None, "--torch", help="also install this PyTorch into --venv"),
        venv: str | None = typer.Option(None, "--venv", help="virtualenv directory for --torch"),
        dry_run: bool = typer.Option(
            False, "--dry-run", help="show the plan and apt's simulation; change nothing"
        ),
        yes: bool = typer.Option(False, "--yes", "-y", help="apply without asking"),
        as_json: bool = typer.Option(False, "--json", help="print the plan as JSON (gpuenv.plan/1) and stop"),
        facts_file: str | None = _Facts,
        root: str = _Root,
        user: str | None = typer.Option(
            None, "--user", help="account to add to render/video (default: SUDO_USER)"
        ),
        force: bool = _Force,
        allow: list[str] = _Allow,
    ) -> None:
        """Plan and install a GPU stack: rocm, cuda or auto."""

        def go() -> Exit:
            plan, facts = _make("install", stack, version, torch, venv, facts_file, root, user)
            return _show_and_maybe_apply(
                plan, facts, root, dry_run, yes, as_json, force, allow, bool(facts_file)
            )

        _guard(go)

    @app.command()
    def uninstall(
        stack: str = _Stack,
        dry_run: bool = typer.Option(
            False, "--dry-run", help="show the purge and apt's simulation; change nothing"
        ),
        yes: bool = typer.Option(False, "--yes", "-y", help="apply without asking"),
        as_json: bool = typer.Option(False, "--json", help="print the plan as JSON and stop"),
        facts_file: str | None = _Facts,
        root: str = _Root,
        force: bool = _Force,
        allow: list[str] = _Allow,
    ) -> None:
        """Purge a GPU stack (rocm or cuda): its packages, sources, pins, keys and gpuenv's files."""

        def go() -> Exit:
            plan, facts = _make("uninstall", stack, None, None, None, facts_file, root, None)
            return _show_and_maybe_apply(
                plan, facts, root, dry_run, yes, as_json, force, allow, bool(facts_file)
            )

        _guard(go)

    @app.command("plan")
    def plan_cmd(
        stack: str = _Stack,
        out: str = typer.Option(..., "--out", help="write the plan here"),
        version: str | None = typer.Option(None, "--version"),
        torch: str | None = typer.Option(None, "--torch"),
        venv: str | None = typer.Option(None, "--venv"),
        facts_file: str | None = _Facts,
        root: str = _Root,
        user: str | None = typer.Option(None, "--user"),
        uninstall: bool = typer.Option(False, "--uninstall", help="plan the purge of STACK instead"),
    ) -> None:
        """Save an install (or --uninstall) plan to a file for `gpuenv apply`."""
        from gpuenv.plan import planfile

        def go() -> Exit:
            plan, _ = _make(
                "uninstall" if uninstall else "install", stack, version, torch, venv, facts_file, root, user
            )
            try:
                planfile.save(plan, out)
            except OSError as exc:
                raise _Stop(Exit.USAGE, f"cannot write {out}: {exc.strerror}") from exc
            from gpuenv.render.plan import console, show_plan

            show_plan(console(), plan)
            console().print(f"[green]plan saved to {out}[/green]")
            return Exit.OK

        _guard(go)

    @app.command()
    def apply(
        plan_file: str = typer.Argument(..., metavar="FILE", help="a plan saved by `gpuenv plan`"),
        yes: bool = typer.Option(False, "--yes", "-y"),
        resume: bool = typer.Option(False, "--resume", help="continue an interrupted apply of this plan"),
        root: str = _Root,
        facts_file: str | None = typer.Option(
            None, "--facts", help="facts of the machine now (default: probe it)"
        ),
        force: bool = _Force,
        allow: list[str] = _Allow,
    ) -> None:
        """Apply exactly the steps of a saved plan (refused when the machine changed since)."""
        from gpuenv.plan import planfile
        from gpuenv.plan.plan import PlanError

        def go() -> Exit:
            try:
                plan = planfile.load(plan_file)
            except PlanError as exc:
                raise _Stop(Exit.USAGE, str(exc)) from exc
            try:
                facts_now = _facts(facts_file, root, plan.user)
            except _Stop:
                if facts_file:
                    raise
                facts_now = None  # no probe: only --resume or --force can go on, the executor says so
            if facts_now is not None and facts_now.digest() == plan.facts_digest and not resume:
                _refuse_edited(plan, facts_now)
            from gpuenv.render.plan import console, show_plan

            show_plan(console(), plan)
            return _run_apply(plan, facts_now, root, yes, force, allow, resume=resume)

        _guard(go)
