"""Every exit status gpuenv returns, in one table (scripts and fleets depend on them)."""

from __future__ import annotations

import enum


class Exit(enum.IntEnum):
    OK = 0
    PROBLEMS = 1  # doctor found errors; no torch wheel fits; an applied step failed
    USAGE = 2  # bad option, unreadable or malformed input (facts, plan, matrices)
    REFUSED = 3  # a plan was refused before any change: blockers, stale plan, collateral removal, bad key,
    # a repository key no vendor page confirms and --trust-unconfirmed-key did not repeat
    BUSY = 4  # another gpuenv apply, or dpkg/apt, holds the lock
    NOT_JUDGED = 5  # doctor found no error, but could not judge part of the machine (its findings say what);
    # advise: a tree with nothing to judge (verdict unknown)
    CUDA_ONLY = 6  # advise: the tree is cuda-only as written (3 already means REFUSED)
    WRITE_FAILED = 120  # the output could not be written (a full disk), as Python itself exits then
    INTERRUPTED = 130
    PIPE_CLOSED = 141  # the reader closed the pipe (`gpuenv doctor | head`): 128 + SIGPIPE
