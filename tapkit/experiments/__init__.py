"""The experiments layer: the protocols (:mod:`.protocols`) and the profiles that set them, one
file each (:mod:`.profiles`), each chapter's list of
runs (:mod:`.plans`, :mod:`.medical_plans`), one run given its teacher and masks (:mod:`.run`),
the results store (:mod:`.store`), executors (:mod:`.executors`), waves (:mod:`.planner`), sweeps
(:mod:`.sweep`), the medical chapters' runs (:mod:`.medical_runs`) and their trained models and
maps (:mod:`.medical_maps`). The core library knows nothing of this package; it knows nothing of
:mod:`tapkit.book`."""

from . import profiles  # noqa: E402,F401 (registers the quick, paper and smoke profiles)
