"""One file per profile (nanoGPT's configs): :mod:`.quick` (a laptop CPU, the embedded data),
:mod:`.paper` (the authors' experiment on a GPU) and :mod:`.smoke` (quick, trimmed to seconds by
a function). Each builds a :class:`~tapkit.experiments.protocols.Profile` and registers it;
:mod:`tapkit.experiments` imports this package, so every profile is registered before any
chapter asks for one. A new profile is one more file here and its import below."""

# the order of registration is PROFILES' order (the parameters' help, the tests' ids)
from . import quick  # noqa: F401, I001 (each module registers its profile)
from . import paper  # noqa: F401
from . import smoke  # noqa: F401
