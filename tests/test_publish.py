"""The published book: its GitHub Pages workflow and build script, its bibliography, its
"Cite this book" file and the links that open a chapter's tracked notebook.

The rendered pages (references, API, launch buttons) are checked in a real browser at the end of
``tests/test_browser.py``, on the same smoke book. ``TAPKIT_PAGES_BUILD=1`` also runs the Pages
build script for real on a smoke-profile book (``scripts/pages_build.sh --no-install --smoke``,
several minutes).
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "book.yml"
SCRIPT = ROOT / "scripts" / "pages_build.sh"
CITE = re.compile(r"\{cite(?::[pt])?\}`([^`]+)`")
# the paper and the works it builds on that the bibliography must hold (issue 22, item 5)
REQUIRED = {"zhang2024tap", "ross2017rrr", "shao2021rbr", "hinton2015kd", "zagoruyko2017at",
            "srinivas2018jt", "kokhlikyan2020captum", "lecun1998mnist", "kermany2018pneumonia",
            "chen2018kneedata", "simonyan2015vgg", "he2016resnet", "huang2017densenet"}


def load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


links = load("tapkit_links", ROOT / "book" / "_ext" / "tapkit_links.py")
pages_check = load("pages_check", ROOT / "scripts" / "pages_check.py")
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())


# --------------------------------------------------------------------------- the workflow

def steps(job: dict) -> list[dict]:
    return job["steps"]


def test_workflow_builds_with_the_script_and_deploys_to_pages():
    wf = yaml.safe_load(WORKFLOW.read_text())
    triggers = wf.get("on", wf.get(True))  # PyYAML reads the bare key `on` as True
    assert triggers["push"]["branches"] == ["main"]
    assert wf["permissions"]["pages"] == "write" and wf["permissions"]["id-token"] == "write"
    build, deploy = wf["jobs"]["build"], wf["jobs"]["deploy"]
    assert build["runs-on"] == "ubuntu-latest"
    uses = {s.get("uses", "").split("@")[0]: s for s in steps(build)}
    assert uses["actions/setup-python"]["with"]["python-version"] == "3.11"
    assert "actions/setup-node" in uses and "actions/checkout" in uses
    runs = [s for s in steps(build) if "run" in s]
    assert [s["run"].strip() for s in runs] == ["scripts/pages_build.sh"], \
        "the workflow's build must be the script, so that it can be run locally"
    assert runs[0]["env"]["PROFILE"] == "quick"
    assert "github.repository" in runs[0]["env"]["TAPKIT_REPOSITORY_URL"]
    order = [s.get("uses", s.get("run", "")).split("@")[0] for s in steps(build)]
    assert order.index("scripts/pages_build.sh") < order.index("actions/upload-pages-artifact")
    assert uses["actions/upload-pages-artifact"]["with"]["path"] == "_build/html"
    assert deploy["needs"] == "build"
    assert deploy["environment"]["name"] == "github-pages"
    assert [s["uses"].split("@")[0] for s in steps(deploy)] == ["actions/deploy-pages"]


def dry_run(*args: str, **env: str) -> list[str]:
    proc = subprocess.run([str(SCRIPT), "--dry-run", *args], cwd=ROOT, capture_output=True,
                          text=True, env={**os.environ, **env}, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return [line[2:] for line in proc.stdout.splitlines() if line.startswith("+ ")]


def test_pages_script_runs_the_readme_commands():
    assert dry_run(PROFILE="quick") == [
        "make install VENV=.venv",
        "make book PROFILE=quick VENV=.venv",
        ".venv/bin/python scripts/pages_check.py _build/html",
        "touch _build/html/.nojekyll"]
    assert dry_run("--no-install", "--smoke", "/tmp/x", VENV="/v") == [
        "/v/bin/python scripts/smoke_book.py /tmp/x",
        "/v/bin/python scripts/pages_check.py /tmp/x/book/_build/html",
        "touch /tmp/x/book/_build/html/.nojekyll"]
    proc = subprocess.run([str(SCRIPT), "--dryrun"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 2 and "unknown argument --dryrun" in proc.stderr


def test_pages_check_names_the_pages_not_built(tmp_path):
    book = tmp_path / "book"
    site = book / "_build" / "html"
    (site / "book" / "notebooks").mkdir(parents=True)
    (book / "_toc.yml").write_text(
        "format: jb-book\nroot: book/intro\nparts:\n  - caption: A\n    chapters:\n"
        "      - file: book/notebooks/mnist\n      - file: book/references.md\n")
    for page in ("index.html", "book/intro.html", "book/notebooks/mnist.html"):
        (site / page).write_text("<html></html>")
    assert pages_check.toc_documents(book / "_toc.yml") == [
        "book/intro", "book/notebooks/mnist", "book/references"]
    assert pages_check.missing_pages(site, book / "_toc.yml") == ["book/references.html"]
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "pages_check.py"), str(site)],
                          capture_output=True, text=True)
    assert proc.returncode == 1 and "book/references.html" in proc.stderr
    (site / "book" / "references.html").write_text("<html></html>")
    assert pages_check.missing_pages(site, book / "_toc.yml") == []


@pytest.mark.skipif(os.environ.get("TAPKIT_PAGES_BUILD") != "1",
                    reason="set TAPKIT_PAGES_BUILD=1 to run the Pages build on a smoke book")
def test_pages_script_builds_a_smoke_book(tmp_path):
    proc = subprocess.run([str(SCRIPT), "--no-install", "--smoke", str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    site = tmp_path / "book" / "_build" / "html"
    assert (site / ".nojekyll").exists()
    assert pages_check.missing_pages(site, ROOT / "_toc.yml") == []
    assert "Targeted Activation Penalties" in (site / "book" / "references.html").read_text()


# --------------------------------------------------------------------------- citations

def bib_keys() -> set[str]:
    text = (ROOT / "book" / "references.bib").read_text()
    return set(re.findall(r"^@\w+\{([^,\s]+),", text, re.M))


def cited_keys() -> dict[str, set[str]]:
    """Every key cited with a {cite} role, by file (the book's Markdown and the notebooks)."""
    found = {}
    for path in [*sorted((ROOT / "book").glob("*.md")), *sorted((ROOT / "notebooks").glob("*.py"))]:
        keys = {k.strip() for group in CITE.findall(path.read_text()) for k in group.split(",")}
        if keys:
            found[path.relative_to(ROOT).as_posix()] = keys
    return found


def test_every_cited_work_is_in_the_bibliography():
    keys = bib_keys()
    assert REQUIRED <= keys, f"missing from references.bib: {sorted(REQUIRED - keys)}"
    unknown = {f: sorted(k - keys) for f, k in cited_keys().items() if k - keys}
    assert not unknown, f"cited but not in book/references.bib: {unknown}"
    assert CONFIG["bibtex_bibfiles"] == ["book/references.bib"]


def test_the_works_are_cited_where_they_are_named():
    cited = cited_keys()
    assert REQUIRED <= cited["book/intro.md"], sorted(REQUIRED - cited["book/intro.md"])
    assert {"hinton2015kd", "zagoruyko2017at", "srinivas2018jt"} <= cited["notebooks/distillation.py"]
    assert "kokhlikyan2020captum" in cited["notebooks/teachers.py"]
    assert "shao2021rbr" in cited["notebooks/medical_gt.py"]
    assert "ross2017rrr" in cited["notebooks/data.py"]


def test_bibliography_entries_parse():
    pybtex = pytest.importorskip("pybtex.database", reason="pybtex comes with sphinxcontrib-bibtex")
    entries = pybtex.parse_file(str(ROOT / "book" / "references.bib")).entries
    paper = entries["zhang2024tap"]
    assert [p.last_names[0] for p in paper.persons["author"]] == ["Zhang", "Williams", "Toni"]
    assert paper.fields["doi"] == "10.1609/aaai.v38i15.29610"
    assert entries["ross2017rrr"].fields["year"] == "2017"
    assert entries["kermany2018pneumonia"].fields["journal"] == "Cell"
    for key, entry in entries.items():
        assert entry.fields.get("title") and entry.fields.get("year"), key


def test_citation_file_cites_the_paper_and_matches_the_version():
    import tapkit

    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0"
    assert cff["version"] == tapkit.__version__
    assert cff["type"] == "software" and cff["title"] and cff["authors"] and cff["message"]
    paper = cff["preferred-citation"]
    assert paper["type"] == "conference-paper"
    assert paper["title"] == "Targeted Activation Penalties Help CNNs Ignore Spurious Signals"
    assert [a["family-names"] for a in paper["authors"]] == ["Zhang", "Williams", "Toni"]
    assert (paper["year"], paper["volume"], paper["start"], paper["end"]) == (2024, 38, 16705, 16713)
    assert paper["doi"] == "10.1609/aaai.v38i15.29610"
    intro = (ROOT / "book" / "intro.md").read_text()
    assert "## How to cite" in intro and f"version = {{{tapkit.__version__}}}" in intro


# --------------------------------------------------------------------------- launch links

def toc_chapters() -> list[str]:
    return [d.removeprefix("book/notebooks/") for d in pages_check.toc_documents(ROOT / "_toc.yml")
            if d.startswith("book/notebooks/")]


def test_every_chapter_opens_a_tracked_notebook():
    sources = CONFIG["sphinx"]["config"]["tapkit_notebook_sources"]
    smoke = load("smoke_book", ROOT / "scripts" / "smoke_book.py")
    assert sources == smoke.SOURCES, "the book and the smoke build disagree on PNEU/KNEE's source"
    chapters = toc_chapters()
    assert len(chapters) >= 18
    for name in chapters:
        path = links.source_path(f"book/notebooks/{name}", sources)
        assert (ROOT / path).is_file(), f"{name}: {path} is not a tracked notebook"
        tracked = subprocess.run(["git", "ls-files", "--error-unmatch", path], cwd=ROOT,
                                 capture_output=True).returncode == 0
        assert tracked, f"{path} is not tracked by git"
    assert links.source_path("book/notebooks/knee", sources) == "notebooks/medical_gt.py"
    assert links.source_path("book/intro", sources) is None


def test_binder_and_source_links():
    repo = links.Repository.parse("https://github.com/someone/tapkit.git", "main")
    assert repo.url == "https://github.com/someone/tapkit"
    assert repo.binder("https://mybinder.org/", "notebooks/mnist.py") == (
        "https://mybinder.org/v2/gh/someone/tapkit/main?urlpath=lab/tree/notebooks/mnist.py")
    assert repo.blob("notebooks/mnist.py") == (
        "https://github.com/someone/tapkit/blob/main/notebooks/mnist.py")
    with pytest.raises(Exception, match="is not https://github.com/<owner>/<name>"):
        links.Repository.parse("https://example.org/tapkit", "main")


def test_repository_is_named_once():
    url = CONFIG["repository"]["url"]
    links.Repository.parse(url, CONFIG["repository"]["branch"])
    files = [ROOT / "book" / "intro.md", ROOT / "book" / "api.md", ROOT / "CITATION.cff",
             ROOT / "_toc.yml", ROOT / ".github" / "workflows" / "book.yml",
             ROOT / "book" / "_ext" / "tapkit_links.py"]
    assert not [f.name for f in files if url in f.read_text()], \
        "the repository URL belongs in _config.yml only (the rest derive from it)"


def test_repository_url_from_the_environment(monkeypatch):
    class Config:
        html_theme_options = {"repository_url": CONFIG["repository"]["url"]}

    config = Config()
    monkeypatch.setenv(links.ENV, "https://github.com/real-owner/tapkit/")
    links.override_repository(None, config)
    assert config.html_theme_options["repository_url"] == "https://github.com/real-owner/tapkit"
    monkeypatch.setenv(links.ENV, "not a url")
    with pytest.raises(Exception, match="not a url"):
        links.override_repository(None, config)


def test_binder_opens_python_files_as_notebooks():
    post = ROOT / "postBuild"  # repo2docker runs it after installing environment.yml
    assert os.access(post, os.X_OK)
    assert "jupytext-config set-default-viewer python" in post.read_text()
    assert CONFIG["launch_buttons"]["notebook_interface"] == "jupyterlab"
