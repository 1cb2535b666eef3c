# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # The protocol, line by line
#
# Every setting of the paper's protocol, one row each: what the paper says (its LaTeX line and
# words), where the authors' released code sets it, and what tapkit's two profiles do, read from
# the profiles this build ran with, not typed in. The verdict judges the *paper* profile: *same*
# as the text, *follows the released code* where the text differs or is silent, *deliberate
# deviation* with its reason, or *stand-in only* for settings of the quick profile's CPU stand-in;
# the quick column shows how far that profile scales each setting down. The paper's formulas are
# quoted as its LaTeX writes them and rendered as equations, e.g. the mask each layer's TAP term
# multiplies, {math}`\mathcal{D}(M, l)` (Eq. 7).

# %% tags=["parameters"]
profile = "quick"
results = None       # None: <repository>/results

# %% tags=["hide-input"]
from tapkit.book import chapter, protocol_audit

ch = chapter.open_chapter(globals(), "protocol", None, show=True)

# %% tags=["hide-input"]
table = protocol_audit.write_protocol_audit(ch.root)

# %% tags=["hide-input"]
protocol_audit.styled(table)

# %% tags=["hide-input"]
protocol_audit.stale_note(table)

# %% tags=["hide-input"]
protocol_audit.close_chapter(ch, table);
