"""tapkit: Targeted Activation Penalties (Zhang, Williams & Toni, AAAI-24), reproducibly.

Modules follow the paper: contamination -> data -> models -> losses -> teachers -> training ->
metrics -> benchmark -> widgets.
"""

__version__ = "0.1.0"

from .losses import downscale_mask, downscale_masks, rbr, rrr, tap  # noqa: E402
from .models import capture, get_model, list_models, target_layers  # noqa: E402

__all__ = ["tap", "rrr", "rbr", "downscale_mask", "downscale_masks", "capture", "get_model", "list_models",
           "target_layers", "__version__"]
