"""Dry run and apply of a Plan.

Every step kind has a handler (``gpuenv.execute.steps``) with two parts: ``done`` (read-only: is
the machine already in the step's end state?) and ``act`` (make it so). A dry run calls only
``done`` and apt's simulation, and it is built with a ``SimulatingRunner`` and ``ReadOnlyFiles``:
the one place that decides dry run is ``dry_run()`` choosing those two objects, and they refuse
any change by construction.

Apply: lock and journal, refuse (before any change) a stale plan, blockers without --force, a
locked or interrupted dpkg (``preflight``), a key whose fingerprint differs from the pinned one
(``keys``), and apt removals the plan did not name; then run the steps in order, skipping those
already done, so that a second run changes nothing and --resume continues after a crash (first
clearing the lock files a killed usermod or groupadd leaves in /etc).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from gpuenv.execute import apt, keys, preflight, steps
from gpuenv.execute.context import Context, Event, Refused, collateral_message
from gpuenv.execute.files import Files, ReadOnlyFiles
from gpuenv.execute.journal import DIR as JOURNAL_DIR
from gpuenv.execute.journal import Busy, Journal, JournalError
from gpuenv.execute.runner import CommandError, Runner, SimulatingRunner, Untrusted
from gpuenv.exitcodes import Exit
from gpuenv.facts import Facts
from gpuenv.plan.plan import Kind, Plan, Step
from gpuenv.plan.planfile import digest as plan_digest
from gpuenv.plan.staleness import facts_digest
from gpuenv.rootpath import PathEscape
from gpuenv.standins.record import record

__all__ = ["Files", "Options", "Outcome", "ReadOnlyFiles", "Refused", "StepReport", "apply", "dry_run"]


# --------------------------------------------------------------------------------------------
# Reports


@record(frozen=True)
class StepReport:
    step: Step
    state: str  # done (nothing to do) | todo | ran | skipped | failed | refused | pending
    detail: str = ""
    simulation: apt.Simulation | None = None
    collateral: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()  # autoremove: orphans outside the stack, left installed


@record(frozen=True)
class Outcome:
    exit: Exit
    message: str
    reports: tuple[StepReport, ...] = ()
    changed: bool = False
    log_path: str | None = None

    @property
    def collateral(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(p for r in self.reports for p in r.collateral))

    @property
    def pending(self) -> bool:
        return any(r.state == "todo" for r in self.reports)


@record(frozen=True)
class Options:
    allow_removal: frozenset[str] = frozenset()
    force: bool = False
    resume: bool = False
    facts_now: Facts | None = None  # the machine now, to refuse a stale plan
    on_event: Event | None = None
    fetch: Callable[[str], bytes] | None = None  # key download; default: HTTPS via urllib
    # Also fetch keys over plain http from 127.0.0.1/::1: the repositories in effect name a mirror
    # on this machine (the pinned fingerprint is checked either way).
    loopback_http: bool = False


# --------------------------------------------------------------------------------------------
# The two entry points


def dry_run(plan: Plan, root: str = "/") -> Outcome:
    """What apply would do now, step by step, with apt's own simulation. Changes nothing: the
    runner runs only read-only commands and the files object refuses writes."""
    ctx = Context(root=root, runner=SimulatingRunner(root), files=ReadOnlyFiles(root))
    judged = []
    for step in plan.steps:  # in order: a step's "done" may depend on what the ones before would change
        done, detail = steps.done(ctx, plan, step)
        if not done:
            ctx.changed.add(step.id)
        judged.append((step, done, detail))
    sims = _simulate_all(ctx, [None if done else steps.sim_args(step) for step, done, _ in judged])
    reports = []
    for (step, done, detail), sim in zip(judged, sims, strict=True):
        collateral: tuple[str, ...] = ()
        kept: tuple[str, ...] = ()
        if sim is not None:
            if step.autoremove:
                kept = tuple(p for p in sim.removes if not steps.allowed_by(step, p))
            else:
                collateral = sim.collateral(step.packages or ())
        if not done and step.kind is Kind.APT_KEY:
            detail = f"would fetch {step.url} and require fingerprint {step.fingerprint}"
        reports.append(StepReport(step, "done" if done else "todo", detail, sim, collateral, kept))
    return Outcome(Exit.OK, "dry run: nothing was changed", tuple(reports))


def _simulate_all(ctx: Context, argses: list[list[str] | None]) -> list[apt.Simulation | None]:
    """apt's simulations of the steps, run side by side: each reads the machine as it is now (a
    dry run changes nothing between them), and each costs apt a full cache build (about a
    second on a desktop's package lists), so a plan's three took most of a dry run's time."""
    wanted = [(i, args) for i, args in enumerate(argses) if args is not None]
    out: list[apt.Simulation | None] = [None] * len(argses)
    if len(wanted) <= 1:
        for i, args in wanted:
            out[i] = ctx.simulate(args)
        return out
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=min(4, len(wanted))) as pool:
        for (i, _), sim in zip(wanted, pool.map(ctx.simulate, [a for _, a in wanted]), strict=True):
            out[i] = sim
    return out


def apply(plan: Plan, root: str = "/", options: Options | None = None) -> Outcome:
    opts = options or Options()
    try:
        journal = Journal(root)
        journal.acquire()
    except Busy as exc:
        return Outcome(Exit.BUSY, str(exc))
    except JournalError as exc:
        return Outcome(Exit.REFUSED, str(exc))
    except PathEscape as exc:
        return Outcome(Exit.REFUSED, f"refusing to apply: {exc}. Nothing was changed.")
    except OSError as exc:  # a read-only root, a full disk: nothing has been changed yet
        return Outcome(
            Exit.REFUSED,
            f"cannot write the journal under {root}/{JOURNAL_DIR} ({exc.strerror or exc}): nothing was changed",
        )
    try:
        outcome = _apply_locked(plan, root, opts, journal)
    except PathEscape as exc:  # a symlink loop under var/lib/dpkg, or in a path a step names
        outcome = Outcome(Exit.REFUSED, f"refusing to apply: {exc}. Nothing was changed.")
    except OSError as exc:  # the journal or the log cannot be written (a disk that filled up)
        outcome = Outcome(
            Exit.PROBLEMS,
            f"cannot write under {root} ({exc.strerror or exc}). Free space, then continue with: "
            "gpuenv apply --resume",
            changed=bool(journal.state.changed) if journal.state else False,
        )
    finally:
        journal.release()
    if outcome.exit in (Exit.REFUSED, Exit.BUSY) and not outcome.changed:
        journal.discard()  # a refused apply leaves nothing behind, not even its lock file
    return outcome


def _apply_locked(plan: Plan, root: str, opts: Options, journal: Journal) -> Outcome:
    pdigest = plan_digest(plan)
    state = journal.state
    log_path = str(journal.log_path)

    def log(line: str) -> None:
        journal.log(f"{time.strftime('%H:%M:%S')} {line}")

    runner = Runner(root, log=log)
    ctx = Context(root=root, runner=runner, files=Files(root), allow=opts.allow_removal, on_event=opts.on_event)
    ctx.fetch = opts.fetch or (lambda url: keys.default_fetch(url, loopback_http=opts.loopback_http))
    ctx.changed = set(state.changed) if state.plan_digest == pdigest else set()
    same_plan = state.plan_digest == pdigest
    if same_plan and state.finished:
        return Outcome(Exit.OK, "this plan was already applied: nothing to do", log_path=log_path)
    resuming = same_plan and bool(state.done or state.started)
    if resuming and not opts.resume:
        return Outcome(
            Exit.REFUSED,
            f"this plan was interrupted (at step {state.started or 'after ' + state.done[-1]}); "
            "continue it with: gpuenv apply PLAN --resume",
        )
    if not same_plan and state.plan_digest and not state.finished and not opts.force:
        return Outcome(
            Exit.REFUSED,
            f"another plan is half-applied (journal {journal.path}); finish it with --resume, or pass --force",
        )
    if opts.resume and not resuming:
        return Outcome(Exit.REFUSED, "nothing to resume: the journal holds no unfinished run of this plan")

    # -- refusals before any change --
    if not resuming:
        if opts.facts_now is None:
            if not opts.force:
                return Outcome(
                    Exit.REFUSED, "cannot tell whether the plan is stale (no facts of this machine)"
                )
        elif facts_digest(opts.facts_now) != plan.facts_digest:
            return Outcome(
                Exit.REFUSED,
                "stale plan: this machine changed since the plan was made "
                f"(facts now {facts_digest(opts.facts_now)[:19]}…, plan {plan.facts_digest[:19]}…). "
                "Make a new plan: gpuenv plan ... --out FILE",
            )
    if plan.blockers and not opts.force:
        return Outcome(
            Exit.REFUSED,
            "the plan has blockers: " + ", ".join(plan.blockers) + " (see its notes; --force overrides)",
        )
    if preflight.dpkg_locked(root):
        return Outcome(
            Exit.BUSY,
            "dpkg is locked by another package manager (apt, unattended-upgrades?); try again when it is done",
        )
    interrupted = preflight.dpkg_interrupted(root)
    if interrupted and not resuming:
        return Outcome(
            Exit.REFUSED, "dpkg was interrupted: run 'dpkg --configure -a' first (nothing was changed)"
        )

    reports: list[StepReport] = []
    # The journal may hold another (finished) plan: its step ids say nothing about this one.
    done_before = set(state.done) if same_plan else set()
    todo = [s for s in plan.steps if s.id not in done_before]
    step: Step | None  # the step at hand, in the checks below and in the apply after them
    try:
        for step in todo:  # keys, programs and collateral removals are checked before any change
            if step.kind in (Kind.COMMAND, Kind.PIP_INSTALL) and step.user is None:
                preflight.check_program(root, step)
            if step.kind is Kind.APT_KEY and not steps.done(ctx, plan, step)[0]:
                ctx.keys[step.id] = keys.fetch_key(ctx, step, ctx.fetch)
                keys.check_releases(ctx, plan, step, ctx.keys[step.id])
            if step.kind is Kind.APT_PURGE and not step.autoremove and not steps.done(ctx, plan, step)[0]:
                sim = ctx.simulate(steps.sim_args(step) or [])
                collateral = sim.collateral(step.packages or (), opts.allow_removal)
                if collateral:
                    reports.append(StepReport(step, "refused", "", sim, collateral))
                    raise Refused(Exit.REFUSED, collateral_message(step, collateral))
    except Refused as exc:
        return Outcome(exc.exit, str(exc), tuple(reports), log_path=log_path)
    except Untrusted as exc:
        return Outcome(Exit.REFUSED, str(exc), tuple(reports), log_path=log_path)
    except (CommandError, OSError) as exc:
        return Outcome(Exit.PROBLEMS, f"{exc}\nNothing was changed.", tuple(reports), log_path=log_path)

    if not resuming:
        journal.begin(pdigest, plan.to_dict())
    log(f"apply {pdigest} ({plan.action.value} {plan.target.stack} {plan.target.version or ''})")
    changed = False
    step = None  # None: the dpkg --configure -a that comes before the steps
    try:
        if resuming:
            preflight.clear_shadow_leftovers(root, log)
        if interrupted:  # our own run died inside dpkg: finish its configuration first
            ctx.emit("step-start", None, "dpkg --configure -a (the interrupted run)")
            runner.run(["dpkg", "--configure", "-a"])
            changed = True
        for step in plan.steps:
            if step.id in journal.state.done:
                reports.append(StepReport(step, "done", "done in an earlier run"))
                continue
            journal.mark_started(step.id)
            done, detail = steps.done(ctx, plan, step)
            if done:
                ctx.emit("step-skip", step, detail)
                reports.append(StepReport(step, "skipped", detail))
            else:
                ctx.emit("step-start", step, step.title)
                journal.mark_changed(step.id)
                detail = steps.act(ctx, step)
                ctx.changed.add(step.id)
                changed = True
                ctx.emit("step-done", step, detail)
                reports.append(StepReport(step, "ran", detail))
            log(f"step {step.id}: {reports[-1].state}: {detail}")
            journal.mark_done(step.id)
    except Untrusted as exc:
        if step:
            reports.append(StepReport(step, "refused", str(exc)))
        log(f"step {step.id if step else '-'}: refused: {exc}")
        return Outcome(Exit.REFUSED, str(exc), tuple(reports), changed, log_path)
    except Refused as exc:
        where = f"step {step.id}" if step else "dpkg --configure -a"
        if step:
            reports.append(StepReport(step, "refused", str(exc)))
        log(f"{where}: refused: {exc}")
        return Outcome(exc.exit, str(exc), tuple(reports), changed, log_path)
    except (CommandError, OSError, ValueError) as exc:
        # ValueError: what the OS refuses outright (a NUL in a path), never a traceback.
        where = f"step {step.id}" if step else "dpkg --configure -a"
        if step:
            reports.append(StepReport(step, "failed", str(exc)))
        log(f"{where}: failed: {exc}")
        return Outcome(
            Exit.PROBLEMS,
            f"{where} failed: {exc}\nFix the cause, then continue with: gpuenv apply PLAN --resume",
            tuple(reports),
            changed,
            log_path,
        )
    journal.finish()
    log("finished")
    reboot = any(r.step.reboot_after and r.state == "ran" for r in reports)
    msg = (
        "applied" + ("; reboot to load the new driver" if reboot else "") if changed else "nothing to change"
    )
    return Outcome(Exit.OK, msg, tuple(reports), changed, log_path)
