"""The submitit executor: a list of runs as one job array on a cluster (Slurm where there is one;
submitit's ``local`` or ``debug`` cluster elsewhere). Its jobs survive the cluster: they are
checkpointable, so a job at its time limit, or preempted, is requeued and the run resumes from its
last epoch (:func:`tapkit.fit.fit`'s ``checkpoint.pt``); their time limit comes from the runs'
expected time (:func:`.planner.expected_minutes`) unless given; a job that dies fails alone.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import Any, Callable, Sequence

from . import planner
from .failures import one_line

log = logging.getLogger(__name__)


def _minutes(value: Any) -> int:
    """An explicit ``timeout_min`` as submitit takes it: whole minutes (rounded up), positive."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value) or value <= 0:
        raise ValueError(f"timeout_min must be a positive number of minutes, got {value!r}")
    return math.ceil(value)


class Requeueable:
    """``fn`` as a checkpointable submitit job: at a time limit or a preemption submitit calls
    :meth:`checkpoint` and requeues the same call, so ``fn`` must resume what it started (a
    store's run resumes from its last epoch's ``checkpoint.pt``). In the job, INFO logging goes
    to the job's log file."""

    def __init__(self, fn: Callable):
        self.fn = fn

    def __call__(self, *args: Any) -> Any:
        logging.basicConfig(level=logging.INFO,  # no-op where logging is already set up
                            format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        return self.fn(*args)

    def checkpoint(self, *args: Any) -> Any:
        from submitit.helpers import DelayedSubmission

        log.warning("time limit or preemption: the job asks to be requeued; its run resumes "
                    "from its last epoch")
        return DelayedSubmission(self, *args)


class SubmititExecutor:
    """``map(fn, items)`` as one submitit job array (Slurm where there is one; ``cluster``:
    ``local`` or ``debug``); ``params`` go to ``update_parameters`` (e.g. ``gpus_per_node=1,
    slurm_partition="gpu"``).

    - Jobs are checkpointable (:class:`Requeueable`): a job that reaches its time limit or is
      preempted is requeued and resumes.
    - Time limit: an explicit ``timeout_min`` wins; otherwise, when ``fn`` tells its items'
      expected minutes (:meth:`RunJob.expected_minutes`), each array gets
      :func:`.planner.timeout_minutes` of them (submitit's own default is 5 minutes).
    - A job that dies (killed, out of memory, out of requeues) returns its exception in its
      place; the others' results are kept.
    - submitit's executor and its folder are made at the first ``map``: nothing to run, no job.
    """

    def __init__(self, folder: str | Path, cluster: str | None = None, **params: Any):
        try:
            import submitit  # noqa: F401  (checked here, before anything runs)
        except ImportError as exc:
            raise ImportError("the submitit executor needs submitit: "
                              "pip install 'tapkit[slurm]'") from exc
        params = dict(params)
        if "timeout_min" in params:
            params["timeout_min"] = _minutes(params["timeout_min"])
        self.folder, self.cluster, self.params = Path(folder), cluster, params
        self._executor: Any = None

    @property
    def executor(self) -> Any:
        """submitit's ``AutoExecutor`` (made on first use, with ``params``)."""
        if self._executor is None:
            import submitit

            executor = submitit.AutoExecutor(folder=self.folder, cluster=self.cluster)
            try:
                executor.update_parameters(**self.params)
            except (NameError, AssertionError, TypeError, ValueError) as exc:  # submitit's checks
                raise ValueError(f"submitit rejects the parameters {self.params}: "
                                 f"{one_line(exc)}") from exc
            self._executor = executor
        return self._executor

    def gpus_requested(self) -> bool:
        gres = str(self.params.get("slurm_gres", ""))
        return bool(self.params.get("gpus_per_node")) or "gpu" in gres

    def timeout_for(self, fn: Callable, items: Sequence) -> int | None:
        """The array's ``timeout_min``: ``None`` where ``params`` give one or ``fn`` cannot tell."""
        minutes = getattr(fn, "expected_minutes", None)
        if "timeout_min" in self.params or minutes is None:
            return None
        return planner.timeout_minutes(minutes(item, self.gpus_requested()) for item in items)

    def map(self, fn: Callable, items: Sequence) -> list:
        items = list(items)
        if not items:
            return []
        timeout = self.timeout_for(fn, items)
        if timeout is not None:
            self.executor.update_parameters(timeout_min=timeout)
        jobs = self.executor.map_array(Requeueable(fn), items)
        log.info("submitted %d submitit job(s) to %s (time limit %s min; logs in %s)", len(jobs),
                 self.executor.cluster, self.executor.parameters.get("timeout_min", "default"),
                 self.folder)
        out: list = []
        for job in jobs:
            try:
                out.append(job.result())
            except Exception as exc:  # the job died: its item fails, the others go on
                log.error("submitit job %s failed: %s", job.job_id, one_line(exc))
                out.append(exc)
        return out
