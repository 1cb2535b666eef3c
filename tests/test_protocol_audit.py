"""The protocol audit (issue 37, item 1): one row per setting, each with the paper's LaTeX line
and quote, the released code's place, both profiles' values read live, and a verdict; rows whose
profile changed since their verdict was written are stale."""

import dataclasses
import functools
import os
from pathlib import Path

import pandas as pd
import pytest

from tapkit.book import protocol_audit as pa
from tapkit.experiments import protocols
from tapkit.experiments.setting2_protocols import Threshold

ROOT = Path(__file__).resolve().parents[1]
TEX = Path(os.environ.get("TAPKIT_PAPER_TEX", ROOT.parent / "shared" / "paper" / "tap-aaai24.tex"))
NEAR = 3  # a quote may start up to this many lines from its line (LaTeX wraps long sentences)


@functools.cache
def _table() -> pd.DataFrame:
    """The audit as the profiles stand, built once per process (a fixture of module scope would
    put this file in conftest.SHARED_FIXTURE_FILES)."""
    return pa.audit_table()


@pytest.fixture
def table() -> pd.DataFrame:
    return _table().copy()


def _normal(text: str) -> str:
    return " ".join(text.split())


def test_at_least_forty_settings_in_every_group_with_the_columns(table):
    assert len(table) >= 40
    assert list(table.columns) == list(pa.COLUMNS)
    assert table.setting.is_unique
    assert set(table.group) == set(pa.GROUPS)
    assert table.released.str.len().gt(0).all()


@pytest.mark.skipif(not TEX.exists(), reason=f"the paper's LaTeX is not at {TEX}")
def test_every_row_quotes_the_paper_at_its_line(table):
    lines = TEX.read_text().splitlines()
    for row in table.itertuples():
        assert isinstance(row.paper_line, int) and 1 <= row.paper_line <= len(lines), row.setting
        window = " ".join(lines[max(0, row.paper_line - 1 - NEAR): row.paper_line + NEAR])
        assert _normal(row.paper_quote) in _normal(window), \
            f"{row.setting}: {row.paper_quote!r} is not near LaTeX line {row.paper_line}"


def test_verdicts_are_the_four_and_the_departures_say_why(table):
    assert set(table.verdict) <= {v.value for v in pa.Verdict}
    needs = table.verdict.isin([pa.Verdict.DEVIATION.value, pa.Verdict.STANDIN.value])
    assert table[needs].reason.str.strip().str.len().gt(0).all()
    counts = pa.verdict_counts(table)
    assert sum(counts.values()) == len(table) and all(counts.values())
    with pytest.raises(ValueError, match="needs its reason"):
        pa.Entry("x", "data", 1, "q", "—", lambda p: 0, pa.Verdict.DEVIATION)


def test_the_known_differences_are_read_from_the_profiles(table):
    row = table.set_index("setting")
    assert row.loc["Threshold rule", "paper_profile"] == "quantile"
    assert row.loc["Threshold rule", "quick_profile"] == "MNIST: quantile; medical: absolute"
    assert row.loc["Class weights (PNEU)", ["paper_profile", "quick_profile"]].tolist() == [
        "released", "none"]
    assert row.loc["VGG-16 classifier head", "paper_profile"] == "vgg16_authors"
    assert row.loc["KD temperature", ["paper_profile", "quick_profile"]].tolist() == ["1", "4"]
    assert row.loc["Epochs", "paper_profile"] == "50"
    assert "7 px in from" in row.loc["Tag placement and mask", "paper_profile"]
    assert row.loc["DNC rule", "paper_profile"] == "DNC when 3, 4, 5 of 5 fail"


def test_the_audit_is_current():
    stale = pa.stale_rows()
    changed = stale[["setting", "recorded_paper", "paper_profile", "recorded_quick",
                     "quick_profile"]].to_dict("records")
    assert stale.empty, (f"profile values changed since their verdicts were written: {changed}; "
                         "look at each verdict, then run tapkit.book.protocol_audit.record()")


def test_a_changed_profile_makes_its_rows_stale(monkeypatch):
    quick = protocols.MEDICAL["quick"]
    monkeypatch.setitem(protocols.MEDICAL, "quick", dataclasses.replace(quick, epochs=7))
    assert "Epochs" in pa.stale_rows().setting.tolist()
    monkeypatch.setitem(protocols.MEDICAL, "quick", quick)
    teachers = protocols.MEDICAL_TEACHERS["paper"]
    monkeypatch.setitem(protocols.MEDICAL_TEACHERS, "paper",
                        dataclasses.replace(teachers, threshold=Threshold.ABSOLUTE))
    stale = pa.stale_rows()
    assert stale.setting.tolist() == ["Threshold rule"]
    assert stale.loc[0, "recorded_paper"] == "quantile"
    assert stale.loc[0, "paper_profile"] == "MNIST: quantile; medical: absolute"


def test_written_atomically_and_shown_with_human_labels(tmp_path, table):
    written = pa.write_protocol_audit(tmp_path)
    saved = pd.read_csv(tmp_path / "tables" / "protocol_audit.csv", dtype=str,
                        keep_default_na=False)
    assert len(saved) == len(written) and saved.setting.tolist() == written.setting.tolist()
    assert not list((tmp_path / "tables").glob("*.tmp"))
    html = pa.to_html(table.head(3))
    assert "tapkit, paper profile" in html and "paper_profile" not in html
    assert pa.humanised("vgg16: 32; resnet18_x") == "VGG-16: 32; resnet18_x"
    assert "white-space: normal" in html
    assert "are deliberate deviations" in pa.opening(table) and str(len(table)) in pa.opening(table)


def test_the_papers_formulas_are_quoted_as_mathjax_renders_them():
    """Issue 39: no raw ``\\mathcal`` on a page. A quote that is a formula goes whole into
    ``\\(…\\)`` (an array row's ``&`` would be a MathJax error outside its array), inline ``$…$``
    becomes ``\\(…\\)``, both marked for MathJax (myst-nb marks a notebook's section
    ``mathjax_ignore``); prose stays as it is."""
    from tapkit.book.protocol_audit import math_quote

    def marked(tex: str) -> str:
        return f'<span class="mathjax_process">{tex}</span>'

    assert math_quote(r"\mathcal{D}(M, l) = \text{AvgPool}(M)") == \
        marked(r"\(\mathcal{D}(M, l) = \text{AvgPool}(M)\)")
    assert math_quote(r"1 & \text{if $E_{ij} < \tau$}") == \
        marked(r"\(1 \quad \text{if $E_{ij} &lt; \tau$}\)")
    assert math_quote(r"at different thresholds $\tau$ and $\lambda$") == \
        marked(r"at different thresholds \(\tau\) and \(\lambda\)")
    assert math_quote("batch size 16") == "batch size 16"
    assert math_quote(r"MNIST & - & $10^{-3}$") == marked(r"MNIST | - | \(10^{-3}\)")


def test_the_timed_rounds_row_names_each_architectures_own_rounds(monkeypatch):
    """A profile that times its architectures a different number of paired rounds shows each
    count on the audit's row (it once showed the default of 24 where 64-320 ran), and one
    number where they agree."""
    from tapkit.book import audit_reads

    bench = protocols.BenchProtocol(batch_size=4, image_size=32, steps=3, warmup=1, threads=1,
                                    paired_steps=24, model_paired_steps={"resnet18": 96},
                                    models=("resnet18", "densenet121@2x16"))
    monkeypatch.setitem(protocols.BENCH, "quick", bench)
    assert audit_reads.bench_rounds("quick") == (
        "3 rounds after 1 warm-up; No XS and TAP resnet18 96, densenet121 24 paired rounds; "
        "memory 1 passes")
    monkeypatch.setitem(protocols.BENCH, "quick",
                        dataclasses.replace(bench, model_paired_steps={}))
    assert "No XS and TAP 24 paired rounds" in audit_reads.bench_rounds("quick")
