"""tapkit: Targeted Activation Penalties (Zhang, Williams & Toni, AAAI-24), reproducibly.

Three layers, imports in one direction. The core (``tapkit/*.py``) follows the paper:
contamination -> data -> models -> losses (baselines) -> methods -> config -> fit -> teachers ->
metrics -> maps -> benchmark -> widgets. :mod:`tapkit.experiments` plans, stores and runs many
configs (protocols, plans, the results store, executors, sweeps); :mod:`tapkit.book` shows their
results in the book's chapters. :mod:`tapkit.cli` sits on top.
"""

__version__ = "0.1.0"

from .losses import downscale_mask, downscale_masks, rbr, rrr, tap  # noqa: E402
from .methods import get_method, list_methods  # noqa: E402
from .models import capture, get_model, list_models, target_layers  # noqa: E402

__all__ = ["tap", "rrr", "rbr", "downscale_mask", "downscale_masks", "capture", "get_model",
           "list_models", "target_layers", "get_method", "list_methods", "__version__"]
