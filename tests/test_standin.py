"""The stand-ins' calibration table and figure for the data page (tapkit.book.standin)."""

import pandas as pd

from tapkit.book import standin


def _frame() -> pd.DataFrame:
    rows = []
    for seed, (base, rel) in enumerate([(0.90, 0.95), (0.92, 0.61), (0.88, 1.0)]):
        rows.append({"task": "pneu", "model": "resnet18", "label_noise": 0.05, "seed": seed,
                     "base_clean": base, "noxs_reliance": rel})
    for seed, (base, rel) in enumerate([(0.82, 1.0), (0.83, 1.0)]):
        rows.append({"task": "pneu", "model": "resnet18", "label_noise": 0.1, "seed": seed,
                     "base_clean": base, "noxs_reliance": rel})
    return pd.DataFrame(rows)


def test_the_table_checks_every_seed_against_the_targets_and_marks_the_profiles_noise():
    t = standin.calibration_table(_frame())
    chosen = t.loc[("PNEU", "ResNet-18", 0.05)]
    # Base 0.90 within [0.85, 0.97]; the smallest reliance 0.61 above 0.3
    assert chosen["Base clean"] == "0.900" and chosen["targets met"] == "yes"
    assert chosen["No XS reliance (mean; smallest)"] == "+0.853; +0.610"
    assert chosen["the profile's"] == "◀"
    other = t.loc[("PNEU", "ResNet-18", 0.1)]
    assert other["targets met"] == "no" and other["the profile's"] == ""  # Base 0.825 < 0.85


def test_the_measured_calibration_covers_both_stand_ins_at_the_profiles_noise():
    frame = standin.calibration()
    chosen = standin.protocols.medical("quick").label_noise
    for task, p in chosen.items():
        assert (frame[(frame.task == task) & (frame.label_noise == p)].seed.nunique()) >= 2
