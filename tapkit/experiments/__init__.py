"""Experiment-level code: the quick and paper protocols (:mod:`.protocols`), each chapter's list
of runs (:mod:`.plans`) and the notebooks' parameter parsing (:mod:`.params`). The core library
(contamination, data, models, losses, training, metrics, ...) knows nothing of this package."""
