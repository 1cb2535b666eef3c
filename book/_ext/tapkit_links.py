"""Launch and source links that open a chapter's tracked jupytext source, not its build copy.

The book's pages are built from executed copies (``book/notebooks/<chapter>.ipynb``, ignored by
git), so the theme's Binder button would point at a file that is not in the repository. This
Sphinx extension (``sphinx: local_extensions`` in ``_config.yml``) replaces the theme's launch
links on every chapter with:

* **Binder**: ``<binderhub>/v2/gh/<owner>/<repo>/<branch>?urlpath=lab/tree/notebooks/<source>.py``
  (JupyterLab with jupytext opens the ``py:percent`` file as a notebook; ``postBuild`` makes that
  the default viewer on Binder);
* **Source (.py)**: the tracked source on the repository's web page.

``<source>`` is the chapter's name, or the name ``tapkit_notebook_sources`` maps it to (PNEU and
KNEE are one notebook, ``notebooks/medical_gt.py``, run with another parameter).

The repository is named in one place, ``repository.url`` in ``_config.yml``; the environment
variable ``TAPKIT_REPOSITORY_URL`` overrides it (the GitHub Pages workflow sets it to the repository
it runs in), for the repository button as well.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.errors import ExtensionError

CHAPTERS = "book/notebooks/"
SOURCES = "notebooks"
ENV = "TAPKIT_REPOSITORY_URL"
GITHUB = re.compile(r"^https://github\.com/(?P<owner>[\w.-]+)/(?P<repo>[\w.-]+?)(\.git)?/?$")


@dataclass(frozen=True)
class Repository:
    """A GitHub repository and the branch the links open."""

    owner: str
    name: str
    branch: str

    @classmethod
    def parse(cls, url: str, branch: str) -> "Repository":
        match = GITHUB.match(url.strip())
        if match is None:
            raise ExtensionError(f"tapkit_links: the repository URL {url!r} is not "
                                 "https://github.com/<owner>/<name>; set repository.url in "
                                 f"_config.yml or {ENV}")
        return cls(match["owner"], match["repo"], branch or "main")

    @property
    def url(self) -> str:
        return f"https://github.com/{self.owner}/{self.name}"

    def binder(self, hub: str, path: str, interface: str = "jupyterlab") -> str:
        """The Binder link that opens ``path`` (relative to the repository root)."""
        prefix = {"classic": "tree", "jupyterlab": "lab/tree"}[interface]
        return (f"{hub.rstrip('/')}/v2/gh/{self.owner}/{self.name}/{self.branch}"
                f"?urlpath={prefix}/{path}")

    def blob(self, path: str) -> str:
        """The web page of ``path`` on the branch."""
        return f"{self.url}/blob/{self.branch}/{path}"


def source_path(pagename: str, sources: dict[str, str]) -> str | None:
    """The tracked jupytext file of a chapter page (``notebooks/<source>.py``), or None when the
    page is not a chapter."""
    if not pagename.startswith(CHAPTERS):
        return None
    name = pagename[len(CHAPTERS):]
    return f"{SOURCES}/{sources.get(name, name)}.py"


def override_repository(app: Sphinx, config: Config) -> None:
    """``TAPKIT_REPOSITORY_URL`` replaces ``repository.url`` for every button."""
    url = os.environ.get(ENV, "").strip()
    if url:
        Repository.parse(url, "")  # fail early on a URL the links cannot use
        config.html_theme_options["repository_url"] = url.rstrip("/").removesuffix(".git")


def launch_links(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    """On a chapter, the Binder and source buttons for its tracked ``.py`` file (after the theme
    has added its own buttons, which are replaced)."""
    path = source_path(pagename, app.config.tapkit_notebook_sources)
    opts = app.config.html_theme_options
    if path is None or not opts.get("repository_url"):
        return
    repo = Repository.parse(opts["repository_url"], opts.get("repository_branch", ""))
    launch = opts.get("launch_buttons", {}) or {}
    buttons = []
    if launch.get("binderhub_url"):
        buttons.append({"type": "link", "text": "Binder", "label": "launch-binder",
                        "tooltip": f"Open {path} on Binder",
                        "icon": "_static/images/logo_binder.svg",
                        "url": repo.binder(launch["binderhub_url"], path,
                                           launch.get("notebook_interface", "jupyterlab"))})
    buttons.append({"type": "link", "text": "Source (.py)", "label": "launch-source",
                    "tooltip": f"{path} in the repository", "icon": "fab fa-github",
                    "url": repo.blob(path)})
    header = context.setdefault("header_buttons", [])
    header[:] = [b for b in header if b.get("label") != "launch-buttons"]
    header.append({"type": "group", "tooltip": "Launch or read this chapter's notebook",
                   "icon": "fas fa-rocket", "buttons": buttons, "label": "launch-buttons"})


def setup(app: Sphinx) -> dict:
    app.add_config_value("tapkit_notebook_sources", {}, "html", types=[dict])
    app.connect("config-inited", override_repository)
    # after sphinx-book-theme's launch buttons (priority 501), before its header is rendered
    app.connect("html-page-context", launch_links, priority=502)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
