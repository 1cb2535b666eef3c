# make test  - unit tests and the browser test (builds the book first if needed)
# make book  - execute the notebooks with papermill (PROFILE=quick by default) and build the book
PROFILE ?= quick
VENV    ?= .venv
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.installed-stamp

# Chapter order is execution order: later notebooks read tables earlier ones wrote.
NOTEBOOKS := data method lambda_search mnist teachers distillation pneu knee overlap visual \
             extra_architectures speed_memory explorer report
EXECUTED  := $(patsubst %,build/executed/$(PROFILE)/%.ipynb,$(NOTEBOOKS))
LIBRARY   := $(wildcard tapkit/*.py)

.PHONY: test book install clean notebooks
install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[book,test]"
	$(PY) -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $@

test: $(STAMP)
	$(PY) -m pytest -q

build/executed/$(PROFILE)/%.ipynb: notebooks/%.py $(LIBRARY) | $(STAMP)
	$(PY) scripts/run_notebook.py $< $@ --profile $(PROFILE)

book: $(STAMP) $(EXECUTED)
	$(PY) scripts/build_book.py --profile $(PROFILE)

# paired .ipynb copies (git ignores them) for papermill or Jupyter: papermill notebooks/mnist.ipynb ...
notebooks: $(STAMP)
	$(VENV)/bin/jupytext --to ipynb --set-kernel python3 notebooks/*.py

clean:
	rm -rf build _build book/notebooks
