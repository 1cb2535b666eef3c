"""A cluster executor: submitit's job arrays behind the same ``map(fn, items)`` as
:class:`tapkit.runner.LocalExecutor` (``pip install tapkit[slurm]``).

``SubmititExecutor(folder)`` submits to Slurm where there is one and runs local processes
elsewhere (submitit's ``AutoExecutor``); ``cluster="debug"`` runs the jobs in this process, for
tests. Runs are keyed and locked by :class:`tapkit.runner.ResultStore`, so an array that is
resubmitted or overlaps another reads what is done and trains the rest.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence


class SubmititExecutor:
    """``map(fn, items)`` as one submitit job array; ``params`` go to ``update_parameters``
    (e.g. ``timeout_min=120, gpus_per_node=1, slurm_partition="gpu"``)."""

    def __init__(self, folder: str, cluster: str | None = None, **params: Any):
        try:
            import submitit
        except ImportError as exc:
            raise ImportError("the submitit executor needs submitit: pip install 'tapkit[slurm]'") from exc
        self.executor = submitit.AutoExecutor(folder=folder, cluster=cluster)
        if params:
            self.executor.update_parameters(**params)

    def map(self, fn: Callable, items: Sequence) -> list:
        jobs = self.executor.map_array(fn, list(items))
        return [job.result() for job in jobs]
