#!/usr/bin/env bash
# The GitHub Pages build (.github/workflows/book.yml) as a script, so its steps run the same here:
# on a fresh machine with Python >= 3.10, node and npm, the README's `make install` and `make book`
# (PROFILE=quick by default), then the site in _build/html, checked and ready for Pages.
#
#   scripts/pages_build.sh                 # what the workflow runs: -> _build/html
#   scripts/pages_build.sh --dry-run       # print the steps, run nothing
#   scripts/pages_build.sh --no-install --smoke /tmp/pages
#       # the smoke-profile book (scripts/smoke_book.py, minutes) in /tmp/pages/book/_build/html,
#       # with the virtual environment as it is (tests/test_publish.py runs this)
#
# Environment: PROFILE (quick), VENV (.venv),
# TAPKIT_REPOSITORY_URL (the repository the book's buttons link to; the workflow sets it).
set -euo pipefail
cd "$(dirname "$0")/.."

PROFILE=${PROFILE:-quick}
VENV=${VENV:-.venv}

dry=0 install=1 smoke=""
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) dry=1 ;;
    --no-install) install=0 ;;
    --smoke) smoke=${2:?--smoke needs a folder}; shift ;;
    *) echo "pages_build.sh: error: unknown argument $1 (see the comment at the top)" >&2; exit 2 ;;
  esac
  shift
done

step() {  # print a step; run it unless --dry-run
  echo "+ $*"
  if [ "$dry" = 0 ]; then "$@"; fi
}

# 1. what the build needs, checked before anything long runs
for tool in python3 node npm make; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "pages_build.sh: error: $tool is not on PATH (the book needs Python >= 3.10, node and" \
         "npm for the widget bundle, and make; see the README's Requirements)" >&2
    [ "$dry" = 1 ] || exit 1
  fi
done

# 2. the virtual environment with tapkit and the book's tools (the README's `make install`)
if [ "$install" = 1 ]; then
  step make install VENV="$VENV"
fi

# 3. the notebooks and the book
if [ -n "$smoke" ]; then
  step "$VENV/bin/python" scripts/smoke_book.py "$smoke"
  site="$smoke/book/_build/html"
else
  step make book PROFILE="$PROFILE" VENV="$VENV"
  site="_build/html"
fi

# 4. the site: every page of _toc.yml built, no Jekyll processing on Pages (it would drop _static)
step "$VENV/bin/python" scripts/pages_check.py "$site"
step touch "$site/.nojekyll"
echo "site ready: $site"
