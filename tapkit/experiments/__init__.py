"""The experiments layer: the quick and paper protocols (:mod:`.protocols`), each chapter's list of
runs (:mod:`.plans`, :mod:`.medical_plans`), one run given its teacher and masks (:mod:`.run`),
the results store (:mod:`.store`), executors (:mod:`.executors`), waves (:mod:`.planner`), sweeps
(:mod:`.sweep`), the medical chapters' runs and models (:mod:`.medical_runs`) and the notebooks'
parameter parsing (:mod:`.params`). The core library knows nothing of this package; it knows
nothing of :mod:`tapkit.book`."""
