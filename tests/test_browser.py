"""The built book in a real browser: headless Chromium (Debian's, driven by Playwright) with every
request that is not to the local test server blocked.

(a) every chapter of ``_toc.yml`` renders, every image loads, no Python traceback is on a page, and
    a screenshot of the MNIST chapter is kept in ``test-artifacts/mnist.png``;
(b) on the explorer chapter, moving a control changes the displayed image, with no console errors
    beyond those every page of the theme logs.

(c) no page carries progress-bar residue (``it/s]``, ``%|``), and on every chapter each code
    cell's input is folded (``hide-input``); screenshots of two medical chapters and of the report
    are kept in ``test-artifacts/pneu.png``, ``medical_teachers.png`` and ``report.png``.

(d) a published book: the References page lists the works the book builds on and the intro links
    to them; the API page shows the public functions with their signatures and docstrings; each
    chapter's launch links open its tracked ``notebooks/*.py`` source, never the build copy.

(e) every chapter opens with its point: the first thing under the title is a paragraph of prose
    saying what the paper claims and what this build found; no parameters cell (the tagged one
    or papermill's injected one) is on the page, and papermill's parameters are one click away in
    the folded settings; every chapter that writes tables links them, and each link is served
    (HTTP 200) and parses as CSV or JSON.

(f) equations render offline: no page's HTML loads MathJax from the internet, the method chapter
    loads the vendored copy (``_static/mathjax/``, ``scripts/vendor_mathjax.py``) and shows typeset
    equations, no raw TeX; no citation repeats within one parenthesis on any page
    ("(LeCun et al., 1998, LeCun et al., 1998)" was two works of one author and year).

(g) readable pages (issue 39): no reader's page (the API reference aside) shows NaN, a Python
    None, a registry's internal id
    (``teacher_10``, ``ground_truth``, ``speed_ratio``) or a Python dict; no figure PNG is wider
    than 1,600 px; no table reaches past the column at 1280 px unless it scrolls in its box; the
    first page gives every claim of the registry a row, a link and a verdict of the report's
    vocabulary.

By default the tests build a small book of their own first: every chapter executed by papermill
with the ``smoke`` profile (the quick protocols trimmed to seconds) and built with jupyter-book in
a temporary folder (``scripts/smoke_book.py``; its log is ``test-artifacts/smoke-book.log``). The
full book stays in ``make book``. Select these tests with ``-m browser``, skip them with
``-m "not browser"``. Environment:

* ``TAPKIT_CHROMIUM``: the browser (default ``/usr/bin/chromium``; the tests skip without it);
* ``TAPKIT_BOOK_DIR``: test another built book (its ``_toc.yml`` and ``_build/html``), without
  building it;
* ``TAPKIT_NO_BUILD=1``: test the repository's existing ``_build/html`` (``make book``) without
  building anything.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tapkit.experiments import chapter_plans
from test_chapter_plans import check_built_chapter

pytestmark = pytest.mark.browser
yaml = pytest.importorskip("yaml", reason="PyYAML (a jupyter-book dependency) reads _toc.yml")

ROOT = Path(__file__).resolve().parents[1]
BOOK = Path(os.environ.get("TAPKIT_BOOK_DIR", ROOT)).resolve()
BUILD = "TAPKIT_BOOK_DIR" not in os.environ and os.environ.get("TAPKIT_NO_BUILD") != "1"
SHOWN_INPUTS = ("tag_show-input",)  # code cells whose input is shown unfolded
PARAMETER_CELLS = ".tag_parameters, .tag_injected-parameters"
NO_TABLES = ("data", "visual", "explorer", "comparisons")  # chapters that write no table
CHROMIUM = Path(os.environ.get("TAPKIT_CHROMIUM", "/usr/bin/chromium"))
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
TRACEBACK = "Traceback (most recent call last)"
ERROR_LINE = re.compile(r"^\s*\w*(Error|Exception)(:|$)", re.M)


def toc_docs(book: Path = BOOK) -> list[str]:
    """Every document of ``_toc.yml`` (root first), as paths without suffix."""
    toc = yaml.safe_load((book / "_toc.yml").read_text())
    docs = [toc["root"]]

    def walk(node):
        if isinstance(node, dict):
            if "file" in node:
                docs.append(node["file"])
            for key in ("parts", "chapters", "sections"):
                for child in node.get(key, []) or []:
                    walk(child)
        elif isinstance(node, list):
            for child in node:
                walk(child)

    walk({k: v for k, v in toc.items() if k != "root"})
    return [d.removesuffix(".md").removesuffix(".ipynb") for d in docs]


DOCS = toc_docs()
MNIST = next((d for d in DOCS if d.endswith("notebooks/mnist")), None)
CHAPTERS = [d for d in DOCS if "/notebooks/" in f"/{d}"]
EXPLORER = next((d for d in DOCS if d.endswith("notebooks/explorer")), None)


# --------------------------------------------------------------------------- fixtures

@pytest.fixture(scope="session")
def chromium():
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM}: install Debian's `chromium` (apt-get install "
                    "chromium; .ci/run does) or set TAPKIT_CHROMIUM")
    pytest.importorskip("playwright.sync_api", reason="the playwright Python package is needed")
    return CHROMIUM


@pytest.fixture(scope="session")
def html(chromium, tmp_path_factory) -> Path:
    """The built book's HTML folder: a smoke-profile book built in a temporary folder, or the
    book that ``TAPKIT_BOOK_DIR`` / ``TAPKIT_NO_BUILD`` name."""
    book = BOOK
    if BUILD:
        ARTIFACTS.mkdir(exist_ok=True)
        folder = tmp_path_factory.mktemp("smoke-book")
        log = ARTIFACTS / "smoke-book.log"
        start = time.time()
        with open(log, "w") as fh:
            proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "smoke_book.py"),
                                   str(folder)], cwd=ROOT, stdout=fh, stderr=subprocess.STDOUT)
        if proc.returncode != 0:
            pytest.fail(f"the smoke book failed ({time.time() - start:.0f} s); end of {log}:\n"
                        + log.read_text()[-4000:])
        book = folder / "book"
        # The HTML and the runs' records are read from here on (the plan check below): the
        # trained models (VGG-16 checkpoints are 0.5 GB each) would otherwise hold gigabytes of a
        # small CI disk until pytest prunes its folders.
        for model in (folder / "results").glob("*/runs/*/*.pt"):
            model.unlink()
    out = book / "_build" / "html"
    if not (out / "index.html").exists():
        pytest.fail(f"no built book at {out}")
    return out


@pytest.fixture(scope="session")
def server(html):
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(html)))
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{srv.server_port}"
    srv.shutdown()
    srv.server_close()


@pytest.fixture(scope="session")
def browser(chromium):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(chromium), args=CHROMIUM_ARGS)
        yield b
        b.close()


@dataclass
class Visit:
    """One page opened with the network blocked, and what it logged."""

    page: object
    response: object
    errors: list[str] = field(default_factory=list)     # console errors and uncaught exceptions
    blocked: list[str] = field(default_factory=list)    # requests to anywhere but the server
    failed: list[str] = field(default_factory=list)     # local responses >= 400, failed loads


def _open(browser, server: str, doc: str, contexts: list) -> Visit:
    """``doc`` opened in a new browser context (kept in ``contexts`` for closing) with every
    request off the local server blocked, once its widgets and images have loaded."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    contexts.append(ctx)
    page = ctx.new_page()
    v = Visit(page, None)

    def route(r):
        url = r.request.url
        if url.startswith(server) or url.startswith(("data:", "blob:")):
            r.continue_()
        else:
            v.blocked.append(url)
            r.abort()

    page.route("**/*", route)
    page.on("console", lambda m: v.errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: v.errors.append(f"uncaught: {e}"))
    page.on("response", lambda r: v.failed.append(f"{r.status} {r.url}")
            if r.status >= 400 and r.url.startswith(server) else None)
    page.on("requestfailed", lambda r: v.failed.append(f"failed {r.url}")
            if r.url.startswith(server) else None)
    v.response = page.goto(f"{server}/{doc}.html", wait_until="load")
    if page.locator('script[type="application/vnd.jupyter.widget-view+json"]').count():
        try:
            page.wait_for_selector(".jupyter-widgets", state="attached", timeout=30_000)
        except Exception:  # noqa: BLE001 - playwright's TimeoutError
            pytest.fail(f"{doc}: its widgets did not render in 30 s (blocked requests: "
                        f"{v.blocked}; errors: {v.errors}; failed: {v.failed})")
    page.wait_for_function("[...document.images].every(i => i.complete)", timeout=30_000)
    return v


@pytest.fixture
def open_page(browser, server):
    """A fresh page per call, for the tests that click or scroll."""
    contexts: list = []
    yield lambda doc: _open(browser, server, doc, contexts)
    for ctx in contexts:
        ctx.close()


@pytest.fixture(scope="session")
def read_page(browser, server):
    """Each page opened once for every test that only reads it (rendering, progress bars,
    folding, links, the opening, the tables' links): six such tests read each chapter, and a
    page takes over a second to open and render."""
    contexts: list = []
    pages: dict[str, Visit] = {}

    def read(doc: str) -> Visit:
        if doc not in pages:
            pages[doc] = _open(browser, server, doc, contexts)
        return pages[doc]

    yield read
    for ctx in contexts:
        ctx.close()


# --------------------------------------------------------------------------- (a) every chapter

@pytest.mark.parametrize("doc", DOCS)
def test_chapter_renders(read_page, doc):
    v = read_page(doc)
    page = v.page
    assert v.response is not None and v.response.status == 200, f"{doc}.html is missing"
    assert page.title().strip(), f"{doc}: empty <title>"
    heading = page.locator("main h1, article h1").first
    assert heading.count() and heading.inner_text().strip(), f"{doc}: no heading"
    broken = page.evaluate("[...document.images].filter(i => !(i.complete && i.naturalWidth > 0))"
                           ".map(i => i.getAttribute('src').slice(0, 80))")
    assert not broken, f"{doc}: images that did not load: {broken}"
    text = page.inner_text("body")
    assert TRACEBACK not in text, f"{doc}: a Python traceback is on the page"
    tracebacks = page.locator(".output.traceback, .highlight-ipythontb, .output.error").count()
    assert tracebacks == 0, f"{doc}: {tracebacks} error output cell(s)"
    stderr = page.locator(".output.stderr").all_inner_texts()
    errors = [line for out in stderr for line in out.splitlines() if ERROR_LINE.match(line)]
    assert not errors, f"{doc}: error text in stderr outputs: {errors[:3]}"


@pytest.mark.skipif(MNIST is None, reason="no MNIST chapter in _toc.yml")
def test_mnist_chapter_screenshot(open_page):
    v = open_page(MNIST)
    assert v.response.status == 200
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / "mnist.png"
    v.page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 10_000


# --------------------------------------------------------------------------- (b) the explorer

VISIBLE_SRCS = """() => [...document.querySelectorAll('.widget-html img')]
    .filter(i => i.offsetParent !== null).map(i => i.getAttribute('src'))"""


@pytest.mark.skipif(EXPLORER is None, reason="no explorer chapter in _toc.yml")
def test_explorer_controls_work_offline(open_page):
    baseline = open_page(DOCS[0])   # a page without widgets: the theme's own console noise
    v = open_page(EXPLORER)
    page = v.page
    assert v.response.status == 200
    page.wait_for_selector(".widget-slider .noUi-handle", timeout=30_000)
    box = page.locator(".jupyter-widgets.widget-vbox").first

    def state():
        page.wait_for_function("[...document.images].every(i => i.complete && i.naturalWidth > 0)")
        return page.evaluate(VISIBLE_SRCS), box.screenshot(), page.inner_text(".widget-readout")

    srcs0, shot0, readout0 = state()
    assert len(srcs0) == 3, f"expected input, gradient and activation images, found {len(srcs0)}"
    assert all(s.startswith("data:image/png;base64,") for s in srcs0)

    # the image slider: every panel shows another image
    page.focus(".widget-slider .noUi-handle")
    page.keyboard.press("ArrowRight")
    page.wait_for_function("old => document.querySelector('.widget-readout').innerText !== old",
                           arg=readout0, timeout=10_000)
    srcs1, shot1, readout1 = state()
    assert readout1 != readout0
    assert all(a != b for a, b in zip(srcs0, srcs1)), "the slider did not change the images"
    assert shot1 != shot0
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "explorer-before.png").write_bytes(shot0)
    (ARTIFACTS / "explorer-after.png").write_bytes(shot1)

    # the model dropdown: same input, other gradient and activation
    selects = page.locator(".widget-dropdown select")
    assert selects.count() == 2
    selects.nth(0).select_option(index=selects.nth(0).locator("option").count() - 1)
    page.wait_for_function(f"old => ({VISIBLE_SRCS})()[1] !== old", arg=srcs1[1], timeout=10_000)
    srcs2, shot2, _ = state()
    assert srcs2[0] == srcs1[0] and srcs2[1] != srcs1[1] and srcs2[2] != srcs1[2]

    # the layer dropdown: only the activation map changes
    selects.nth(1).select_option(index=1)
    page.wait_for_function(f"old => ({VISIBLE_SRCS})()[2] !== old", arg=srcs2[2], timeout=10_000)
    srcs3, _, _ = state()
    assert srcs3[:2] == srcs2[:2] and srcs3[2] != srcs2[2]

    new_errors = sorted(set(v.errors) - set(baseline.errors))
    assert not new_errors, f"console errors on the explorer page: {new_errors}"
    assert not v.failed, f"failed local requests: {v.failed}"
    assert not sorted(set(v.blocked) - set(baseline.blocked)), \
        f"the explorer page tried the network: {v.blocked}"
    assert any("_static/widgets/embed.js" in s for s in page.evaluate(
        "[...document.scripts].map(s => s.src)")), "the widget bundle is not the vendored one"


# --------------------------------------------------------------------------- (c) readable pages

PROGRESS_RESIDUE = ("it/s]", "%|")
# a folded input sits in a closed <details> (myst-nb's hide-input) and shows no rendered text
FOLDING = """() => [...document.querySelectorAll('div.cell')].filter(c =>
    c.querySelector('.cell_input')).map(c => ({
        classes: c.className,
        folded: !!c.querySelector('details:not([open]) .cell_input')
                && c.querySelector('.cell_input').innerText.trim() === '',
        code: c.querySelector('.cell_input').textContent.trim().slice(0, 60)}))"""


@pytest.mark.parametrize("doc", DOCS)
def test_no_progress_bar_residue(read_page, doc):
    page = read_page(doc).page
    text = page.inner_text("body")
    residue = [r for r in PROGRESS_RESIDUE if r in text]
    assert not residue, f"{doc}: progress-bar residue {residue} on the page"
    assert page.locator(".jupyter-widgets .progress, .widget-hprogress").count() == 0, \
        f"{doc}: a progress-bar widget on the page"


@pytest.mark.parametrize("doc", CHAPTERS)
def test_code_cells_are_folded(read_page, doc):
    cells = read_page(doc).page.evaluate(FOLDING)
    assert cells, f"{doc}: no code cells found"
    unfolded = [c["code"] for c in cells
                if not any(s in c["classes"].split() for s in SHOWN_INPUTS)
                and not c["folded"]]
    assert not unfolded, f"{doc}: code cells shown unfolded: {unfolded}"


@pytest.mark.parametrize("name", ["pneu", "medical_teachers", "report"])
def test_chapter_screenshots(open_page, name):
    doc = next((d for d in CHAPTERS if d.endswith(f"notebooks/{name}")), None)
    if doc is None:
        pytest.skip(f"no {name} chapter in _toc.yml")
    v = open_page(doc)
    assert v.response.status == 200
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    v.page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 10_000


# --------------------------------------------------------------------------- (d) a published book
# The References page, the API page and the chapters' launch and repository buttons
# (tests/test_publish.py checks the sources behind them).

REFERENCES = next((d for d in DOCS if d.endswith("book/references")), None)
API = next((d for d in DOCS if d.endswith("book/api")), None)
# the paper and eight works it builds on, as their titles render on the References page
BUILT_ON = ("Targeted Activation Penalties Help CNNs Ignore Spurious Signals",
            "Right for the Right Reasons", "Right for Better Reasons",
            "Distilling the Knowledge in a Neural Network", "Paying More Attention to Attention",
            "Knowledge Transfer with Jacobian Matching", "Captum",
            "The MNIST database of handwritten digits",
            "Identifying Medical Diagnoses and Treatable Diseases",
            "Knee Osteoarthritis Severity Grading Dataset",
            "Very Deep Convolutional Networks", "Deep Residual Learning", "Densely Connected")
API_FUNCTIONS = {"tap": "losses", "rrr": "losses", "rbr": "losses", "capture": "models",
                 "get_model": "models", "list_models": "models", "target_layers": "models"}
HREFS = "[...document.querySelectorAll('a[href]')].map(a => a.href)"


@pytest.mark.skipif(REFERENCES is None, reason="no References page in _toc.yml")
def test_references_page_lists_the_works_built_on(open_page):
    v = open_page(REFERENCES)
    assert v.response.status == 200
    entries = v.page.locator('.citation, [role="doc-biblioentry"]').all_inner_texts()
    assert len(entries) >= 9, f"only {len(entries)} bibliography entries"
    text = " ".join(" ".join(entries).split()).lower()  # the style sets titles in sentence case
    missing = [title for title in BUILT_ON if title.lower() not in text]
    assert not missing, f"not on the References page: {missing}"
    ARTIFACTS.mkdir(exist_ok=True)
    v.page.screenshot(path=str(ARTIFACTS / "references.png"), full_page=True)
    # the intro's citations link to these entries
    intro = open_page(DOCS[0]).page
    cites = {h.split("#")[1] for h in intro.evaluate(HREFS) if "references.html#" in h}
    assert len(cites) >= 9, f"the intro links to {len(cites)} bibliography entries"


@pytest.mark.skipif(API is None, reason="no API page in _toc.yml")
def test_api_page_lists_the_functions_with_signatures(open_page):
    import inspect

    import tapkit

    v = open_page(API)
    assert v.response.status == 200
    for name, module in API_FUNCTIONS.items():
        dt = v.page.locator(f'dl.py.function > dt[id="tapkit.{module}.{name}"]')
        assert dt.count() == 1, f"tapkit.{name} is not documented on the API page"
        sig = " ".join(dt.inner_text().split())
        params = list(inspect.signature(getattr(tapkit, name)).parameters)
        found = [re.search(rf"[(,]\s*{p}\s*[:=,)]", sig) for p in params]
        positions = [m.start() if m else -1 for m in found]
        assert sig.startswith(f"{name}(") and -1 not in positions and positions == sorted(
            positions), f"{name}: the signature {sig!r} does not list {params} in order"
        doc = dt.locator("xpath=following-sibling::dd[1]").inner_text()
        first = inspect.getdoc(getattr(tapkit, name)).split("\n")[0].split("``")[0][:25]
        assert first in " ".join(doc.split()), f"{name}: its docstring is not shown"
    ARTIFACTS.mkdir(exist_ok=True)
    v.page.screenshot(path=str(ARTIFACTS / "api.png"), full_page=True)


@pytest.mark.parametrize("doc", CHAPTERS)
def test_launch_buttons_open_the_tracked_notebook(read_page, doc):
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    repo = os.environ.get("TAPKIT_REPOSITORY_URL", config["repository"]["url"]).rstrip("/")
    source = config["sphinx"]["config"]["tapkit_notebook_sources"]
    name = doc.rsplit("/", 1)[-1]
    path = f"notebooks/{source.get(name, name)}.py"
    assert (ROOT / path).is_file()
    hrefs = read_page(doc).page.evaluate(HREFS)
    binder = [h for h in hrefs if "mybinder.org" in h]
    assert binder and all(h.endswith(f"?urlpath=lab/tree/{path}") for h in binder), binder
    assert f"{repo}/blob/main/{path}" in hrefs, f"{doc}: no link to {path} in the repository"
    assert repo in hrefs, f"{doc}: no repository button"
    launch = [h for h in hrefs if h.startswith(repo) or "mybinder.org" in h]
    assert not [h for h in launch if "book/notebooks" in h or h.endswith(".ipynb")], \
        f"{doc}: a launch link points at the ignored build copy: {launch}"


# --------------------------------------------------------------------------- (e) the opening

# The visible block elements of the page's article in document order, up to the first paragraph
# of prose after the title: what a reader sees before the page's point.
BEFORE_PROSE = """() => {
    const main = document.querySelector('main article') || document.querySelector('main');
    const h1 = main.querySelector('h1');
    const blocks = [...main.querySelectorAll(
            'div.cell, details, pre, table, img, p, .admonition, .jupyter-widgets')]
        .filter(el => (h1.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING)
                      && el.offsetParent !== null);
    const seen = [];
    for (const el of blocks.filter(el => !blocks.some(o => o !== el && o.contains(el)))) {
        seen.push({tag: el.tagName.toLowerCase(), classes: el.className,
                   text: el.innerText.trim().slice(0, 3000)});
        if (el.tagName === 'P' && el.innerText.trim()) break;
    }
    return seen;
}"""


@pytest.mark.parametrize("doc", CHAPTERS)
def test_chapter_opens_with_prose_not_parameters(read_page, doc):
    page = read_page(doc).page
    seen = page.evaluate(BEFORE_PROSE)
    assert seen and seen[-1]["tag"] == "p", f"{doc}: no paragraph of prose under the title: {seen}"
    assert len(seen) == 1, f"{doc}: shown before the first paragraph: {seen[:-1]}"
    opening = seen[-1]["text"]
    assert opening.startswith("The paper:") and "This build (profile" in opening, \
        f"{doc}: the first paragraph is not the opening: {opening[:200]}"
    assert re.search(r"\d", opening.split("This build", 1)[1]), \
        f"{doc}: the opening reports no number from this build: {opening}"
    shown = page.evaluate(f"[...document.querySelectorAll('{PARAMETER_CELLS}')]"
                          ".filter(c => c.offsetParent !== null).length")
    assert shown == 0, f"{doc}: {shown} parameters cell(s) on the page"
    assert "injected-parameters" not in page.content(), f"{doc}: papermill's cell is in the HTML"


@pytest.mark.parametrize("doc", CHAPTERS)
def test_settings_with_papermill_parameters_are_one_click_away(open_page, doc):
    page = open_page(doc).page
    details = page.locator("details", has=page.locator("summary", has_text="the settings of this page"))
    assert details.count() == 1, f"{doc}: {details.count()} folded settings blocks"
    block = details.first
    assert block.get_attribute("open") is None, f"{doc}: the settings are not folded"
    assert not block.locator("text=papermill").is_visible()
    block.locator("summary").click()
    params = block.locator("p", has_text="parameters (papermill, as run)")
    assert params.is_visible(), f"{doc}: papermill's parameters are not in the settings"
    assert re.search(r'profile\s+"\w+"', block.inner_text()), f"{doc}: no profile parameter"


def _fetch(url: str) -> tuple[int, bytes]:
    import urllib.request

    with urllib.request.urlopen(url, timeout=10) as response:
        return response.status, response.read()


@pytest.mark.parametrize("doc", CHAPTERS)
def test_chapter_tables_download_and_parse(read_page, server, doc):
    import csv
    import io
    import json
    from urllib.parse import urljoin

    page = read_page(doc).page
    links = page.locator("a.reference.download")
    hrefs = [links.nth(i).get_attribute("href") for i in range(links.count())]
    if doc.rsplit("/", 1)[-1] in NO_TABLES:
        return
    assert hrefs, f"{doc}: no download link for the chapter's tables"
    opening = page.locator("p", has_text="Tables of this page").first
    assert opening.is_visible(), f"{doc}: the tables' links are not under the opening"
    assert any(h.endswith(".csv") for h in hrefs), f"{doc}: no CSV among {hrefs}"
    for href in hrefs:
        status, body = _fetch(urljoin(f"{server}/{doc}.html", href))
        assert status == 200, f"{doc}: {href} answered {status}"
        text = body.decode("utf-8")
        if href.endswith(".json"):
            json.loads(text)
        else:
            rows = list(csv.reader(io.StringIO(text)))
            assert len(rows) >= 2 and len(rows[0]) >= 2, f"{doc}: {href} is not a table: {rows[:2]}"
            assert all(len(r) == len(rows[0]) for r in rows), f"{doc}: {href} has ragged rows"


# --------------------------------------------------------------------------- the smoke book's runs

@pytest.mark.skipif(not BUILD, reason="a built book's chapters: tests/test_chapter_plans.py with "
                                      "TAPKIT_NO_BUILD=1 or TAPKIT_BOOK_DIR")
@pytest.mark.parametrize("chapter", list(chapter_plans.PLANS))
def test_the_smoke_books_notebooks_asked_the_store_for_their_plans_runs(chapter, html, tmp_path):
    """Each training chapter of the smoke book asked the store for exactly its plan's runs
    (:func:`test_chapter_plans.check_built_chapter`, here where the smoke book is built)."""
    results, = (html.parents[2] / "results").glob("*/tables/status_mnist.json")
    check_built_chapter(chapter, results.parent.parent, tmp_path)


# --------------------------------------------------------------------------- (f) equations, citations

METHOD = next((d for d in DOCS if d.endswith("notebooks/method")), None)
VENDORED_MATHJAX = "_static/mathjax/tex-mml-chtml.js"       # _config.yml's mathjax_path
REMOTE_MATHJAX = re.compile(r"""<script[^>]*\bsrc=["']?(?:https?:)?//[^"'\s>]*mathjax""", re.I)
RAW_TEX = ("\\mathcal", "\\frac", "$$")
# each {cite:p} group (sphinxcontrib-bibtex's span) with its visible text and its citations' texts
CITATION_GROUPS = """() => [...document.querySelectorAll('span.bibtex-citation')].map(s => ({
    text: s.innerText.trim(), cites: [...s.querySelectorAll('a')].map(a => a.innerText.trim())}))"""


@pytest.mark.skipif(METHOD is None, reason="no method chapter in _toc.yml")
def test_equations_render_offline_with_the_vendored_mathjax(html, read_page):
    remote = [p.relative_to(html).as_posix() for p in sorted(html.rglob("*.html"))
              if REMOTE_MATHJAX.search(p.read_text(errors="replace"))]
    assert not remote, f"pages that load MathJax from the internet: {remote}"
    assert (html / VENDORED_MATHJAX).is_file(), f"no vendored MathJax at {VENDORED_MATHJAX}"
    assert any((html / "_static/mathjax/output/chtml/fonts/woff-v2").glob("*.woff")), \
        "the vendored MathJax has no fonts"
    assert VENDORED_MATHJAX in (html / f"{METHOD}.html").read_text(), \
        f"{METHOD}.html does not load {VENDORED_MATHJAX}"

    v = read_page(METHOD)   # every request off the local server is blocked
    page = v.page
    page.wait_for_selector("mjx-container", state="attached", timeout=30_000)
    page.evaluate("() => MathJax.startup.promise.then(() => document.fonts.ready).then(() => true)")
    assert page.locator("mjx-container").count() >= 2, "MathJax typeset fewer than two equations"
    assert page.locator("mjx-merror").count() == 0, "MathJax could not typeset an equation"
    text = page.inner_text("main")
    raw = [t for t in RAW_TEX if t in text]
    assert not raw, f"{METHOD}: raw TeX {raw} on the page"
    assert any(VENDORED_MATHJAX in src for src in page.evaluate(
        "[...document.scripts].map(s => s.src)")), "the page did not load the vendored MathJax"
    assert not [u for u in v.blocked if "mathjax" in u.lower()], f"MathJax went online: {v.blocked}"
    assert not [f for f in v.failed if "mathjax" in f.lower()], \
        f"vendored MathJax files that did not load (fonts, TeX extensions): {v.failed}"


def test_no_citation_repeats_within_one_parenthesis(read_page):
    groups = {doc: read_page(doc).page.evaluate(CITATION_GROUPS) for doc in DOCS}
    repeats = {doc: [g["text"] for g in found if len(set(g["cites"])) < len(g["cites"])]
               for doc, found in groups.items()}
    repeats = {doc: texts for doc, texts in repeats.items() if texts}
    assert not repeats, f"a citation repeated within one parenthesis: {repeats}"
    several = [g["text"] for found in groups.values() for g in found if len(g["cites"]) > 1]
    assert several, "no page cites two works in one parenthesis: nothing was checked"
    # what the reader sees matches the links: "(A, 1998a, B, 1998b)" has each link's text once
    for doc, found in groups.items():
        for g in found:
            shown = " ".join(g["text"].split())
            assert all(shown.count(" ".join(c.split())) == g["cites"].count(c) for c in g["cites"]), \
                f"{doc}: {shown!r} repeats a citation"


# --------------------------------------------------------------------------- (g) readable pages

# what a reader must never see in a page's visible text: a missing value printed by pandas or
# Python, a registry's internal id instead of its label, or a Python dict (issue 39)
UNREADABLE = {"NaN": re.compile(r"\bNaN\b"), "None": re.compile(r"\bNone\b(?! [a-z])"),
              "an internal id": re.compile(r"\b(teacher_10|teacher_1|ground_truth|speed_ratio)\b"),
              "a Python dict": re.compile(r"\{'[^']+': ")}
TOO_WIDE_PX = 1600   # a figure wider than this renders its text below 9 pt at page width
# each table of the page's text column that reaches past it, unless an ancestor scrolls it. The
# column is the article, not <main>: beside the page's contents sidebar it is 688 px at 1280,
# where <main>, which holds the sidebar too, is 992
OVERFLOWING_TABLES = """() => {
  const col = document.querySelector('article.bd-article') || document.querySelector('main')
      || document.body;
  const right = col.getBoundingClientRect().right + 2;
  const scrolls = el => { for (let a = el.parentElement; a && a !== col; a = a.parentElement) {
      const o = getComputedStyle(a).overflowX; if (o === 'auto' || o === 'scroll') return true; }
    return false; };
  return [...col.querySelectorAll('table')].filter(t => t.offsetParent !== null
      && t.getBoundingClientRect().right > right && !scrolls(t))
    .map(t => (t.innerText || '').trim().slice(0, 60));
}"""


READER_DOCS = [d for d in DOCS if not d.endswith("/api")]  # the API page shows signatures


@pytest.mark.parametrize("doc", READER_DOCS)
def test_no_missing_values_internal_ids_or_dicts_on_the_page(read_page, doc):
    text = read_page(doc).page.inner_text("main")   # what is rendered: folded blocks left out
    found = {what: sorted(set(m.group(0) for m in rx.finditer(text)))
             for what, rx in UNREADABLE.items()}
    lines = {what: [line.strip()[:120] for line in text.splitlines() if UNREADABLE[what].search(line)][:3]
             for what, hits in found.items() if hits}
    assert not lines, f"{doc}: {lines}"


def test_no_figure_is_wider_than_the_page_can_show(html):
    from PIL import Image

    widths = {p.name: Image.open(p).size[0] for p in sorted(html.rglob("_images/*.png"))}
    assert widths, "no figure in the built book: nothing was checked"
    wide = {name: w for name, w in widths.items() if w > TOO_WIDE_PX}
    assert not wide, f"figures wider than {TOO_WIDE_PX} px: {wide}"


@pytest.mark.parametrize("doc", DOCS)
def test_no_table_overflows_its_column(read_page, doc):
    over = read_page(doc).page.evaluate(OVERFLOWING_TABLES)
    assert not over, f"{doc}: tables wider than the column at 1280 px, not scrolled: {over}"


def test_the_first_page_gives_every_claim_a_verdict_and_a_link(read_page):
    from tapkit.book.claim_specs import paper_claims

    rows = read_page(DOCS[0]).page.evaluate("""() => [...document.querySelectorAll(
        'table.claims tbody tr')].map(r => ({links: r.querySelectorAll('a[href]').length,
        cells: [...r.cells].map(c => c.textContent.trim())}))""")  # the folded rows too
    assert len(rows) == len(paper_claims()), \
        f"{len(rows)} verdict rows on the first page for {len(paper_claims())} claims"
    assert all(r["links"] for r in rows), "a claim without a link to its chapter"
    # each verdict one of the five, "not testable here" with its reason in parentheses, and an
    # undecided or failed claim of several parts with the parts that kept it from reproducing
    verdict = re.compile(r"(reproduced|(not reproduced|inconclusive|not run)( \(.+\))?|"
                         r"not testable here \(.+\))( \(on the stand-in\))?")
    odd = [r["cells"][-1] for r in rows if not verdict.fullmatch(" ".join(r["cells"][-1].split()))]
    assert not odd, f"verdicts outside the report's vocabulary: {odd[:3]}"
