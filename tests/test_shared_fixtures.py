"""`make test` schedules tests one by one on two xdist workers, except the files listed in
conftest.SHARED_FIXTURE_FILES, which stay whole on one worker. A file with a module- or
session-scoped fixture missing from that list would build its fixture once per worker."""

import re
from pathlib import Path

from conftest import SHARED_FIXTURE_FILES, _scope

TESTS = Path(__file__).parent


def test_every_file_with_a_shared_fixture_stays_on_one_worker():
    shared = sorted(p.name for p in TESTS.glob("test_*.py")
                    if re.search(r"scope=\"(module|session|package)\"", p.read_text()))
    assert shared == sorted(SHARED_FIXTURE_FILES)


def test_a_shared_fixture_file_is_one_unit_of_work_and_other_tests_are_their_own():
    assert _scope("tests/test_browser.py::test_chapter_renders[book/intro]") == \
        "tests/test_browser.py"
    assert _scope("tests/test_data.py::test_embedded_decoy_mnist_splits") == \
        "tests/test_data.py::test_embedded_decoy_mnist_splits"
