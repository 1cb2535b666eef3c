"""The book layer: what the chapters show. Tables beside the paper's values (package data in
``paper_values/``), figures, findings and notes (:mod:`.report`, :mod:`.medical`), and the
notebooks' parameters (:mod:`.params`). It may import the core and :mod:`tapkit.experiments`;
neither imports it."""
