# make test  - unit tests and the browser tests (on a small smoke-profile book they build in a
#              temporary folder, scripts/smoke_book.py; TAPKIT_NO_BUILD=1 tests the built book)
# make book  - execute the notebooks with papermill (PROFILE=quick by default) and build the book
#              (needs npm once, for the widget bundle: checked first, by scripts/check_book_tools.py)
# make gpu-pack - before a GPU lease: wheels the GPU image lacks and full MNIST (tapkit's cache,
#              fetched with `tapkit data mnist` if missing) into the ignored folder gpu-carry/
# make gpu   - ON the GPU machine (carry gpu-carry; OUT=$$OUT): Setting-1 MNIST table, then Table 1,
#              into results/paper/ and OUT, in one command of under ten minutes (scripts/gpu.py)
# make gpu-dry-run - the same on this CPU: plan, data check, one step per run, a tiny benchmark
PROFILE ?= quick
VENV    ?= .venv
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.installed-stamp

JOBS    ?= 2
# One thread per notebook when two run side by side: two-thread jobs next to each other
# oversubscribe the two cores (measured: a two-thread MNIST notebook ran 4x slower).
THREADS ?= $(if $(filter 1,$(JOBS)),,1)
# Chapter order (the book's _toc.yml); execution order follows the dependencies below.
NOTEBOOKS := data method lambda_search mnist teachers medical_teachers distillation medical_distillation \
             pneu knee normalisation overlap visual extra_architectures speed_memory explorer protocol \
             report comparisons
X         := build/executed/$(PROFILE)
EXECUTED  := $(patsubst %,$(X)/%.ipynb,$(NOTEBOOKS))
LIBRARY   := $(wildcard tapkit/*.py tapkit/experiments/*.py tapkit/experiments/profiles/*.py tapkit/book/*.py)

# What each notebook reads from another: its tables, or runs it would otherwise train a second
# time. The MNIST, teacher and medical chains are otherwise independent and run side by side;
# report and comparisons gather every table.
$(X)/lambda_search.ipynb: $(X)/method.ipynb
$(X)/mnist.ipynb $(X)/teachers.ipynb: $(X)/lambda_search.ipynb
$(X)/explorer.ipynb $(X)/normalisation.ipynb: $(X)/mnist.ipynb  # its runs (normalisation: the κ ablation's)
$(X)/distillation.ipynb: $(X)/teachers.ipynb
$(X)/overlap.ipynb $(X)/visual.ipynb: $(X)/pneu.ipynb $(X)/knee.ipynb
$(X)/medical_teachers.ipynb $(X)/medical_distillation.ipynb: $(X)/pneu.ipynb $(X)/knee.ipynb
GATHERED  := $(filter-out $(X)/report.ipynb $(X)/comparisons.ipynb,$(EXECUTED))
$(X)/report.ipynb $(X)/comparisons.ipynb: $(GATHERED)
# Two lanes of about equal CPU time (measured on the 2-core CPU, quick profile), ordered without
# rebuild triggers (after `|`): left to itself, make starts whatever is ready first. The medical
# Setting-2 chapters need both pneu and knee (their λ choices; the quick profile's run on PNEU
# only), so knee must end by the time pneu does. MNIST lane: DenseNet-121's pretrained start
# (below), method, lambda_search, the
# Setting-2 chapters teachers and distillation (three seeds since 2026-11-27: ~190 CPU-s a seed
# more), knee (by then pneu has trained the pretrained starts that knee shares: ~420 s), mnist
# (three seeds, RBR's too), explorer, speed_memory (one thread beside the other lane: its paired
# rounds' ratios do not need a quiet machine, see its protocol), normalisation (its
# equations-form runs are lambda_search's, long in the cache; its κ ablation trains TAP at κ 1 and
# 5 on three seeds, ~90 CPU-s, from 2026-11-29) and extra_architectures (reads no
# other chapter). Medical lane: data, pneu, medical_teachers, medical_distillation (after it:
# beside it, it waited on the runs both share); visual and overlap (which reads the PNEU/KNEE
# runs of every seed) beside those two, in the slot the MNIST lane has left. normalisation and
# extra_architectures (~175 s) have changed lanes with the cells: MNIST lane from 2026-11-29 (pneu took DenseNet-121's RRR seeds), medical lane when mnist
# took RBR's three seeds (fresh clone of 062cd9c: MNIST lane 2,963 s, medical lane 3,072), and
# the MNIST lane again when the MNIST Setting-2 chapters went to two seeds (~230 s), DenseNet-121
# on PNEU to four (~95 s) and the speed chapter's VGG-16 and ResNet-18 to fewer rounds (~80 s):
# in the fresh clone of 3edf5ef the MNIST lane ended at 16:13:41 and the medical lane at
# 16:12:40, the build 2,625 s. Since then pneu trains ResNet-18 on five seeds (~210 CPU-s more,
# for the Theorem-1 overlap on PNEU), which makes the medical lane the longer one. The stripe
# appendix (2026-11-29: ResNet-18's No XS and TAP, three seeds, ~200 CPU-s a data set) sits in
# both lanes, pneu's paid for by ResNet-18's fourth RRR seed (~110 s), knee's in the shorter
# MNIST lane.
# Then report and
# comparisons, side by side. Seconds in the fresh-clone build of 0e6f65f on a slow 2-core AMD EPYC
# (docs/performance.md, twelfth session): MNIST lane 213+87+645+550+1414+553+16+681 = 4159,
# medical lane 30+14+2663, 217 waiting for knee, 418+213+33+159+110+236 (3876 busy); then
# report 34 beside comparisons 8. Since then the speed chapter lost ~126 s (the two-layer CNN at
# batch 64) and ~100-150 s (VGG-16's authors' head), and extra_architectures (110) changed lanes.
$(X)/method.ipynb: | $(X)/starts.done
$(X)/knee.ipynb: | $(X)/distillation.ipynb
$(X)/mnist.ipynb: | $(X)/knee.ipynb
$(X)/explorer.ipynb: | $(X)/mnist.ipynb
$(X)/speed_memory.ipynb: | $(X)/explorer.ipynb
$(X)/pneu.ipynb: | $(X)/data.ipynb
$(X)/medical_distillation.ipynb: | $(X)/medical_teachers.ipynb
# visual and overlap (~100 s) run beside medical_teachers and medical_distillation (~250 s)
# once pneu ends, where the MNIST lane has ended before it (2026-11-30: pneu trains VGG-16's
# five PNEU seeds, ~220 CPU-s; the MNIST lane only its pretrained start, ~35)
$(X)/overlap.ipynb: | $(X)/visual.ipynb
$(X)/normalisation.ipynb: | $(X)/speed_memory.ipynb
$(X)/extra_architectures.ipynb: | $(X)/normalisation.ipynb
# The MNIST lane begins with DenseNet-121's and VGG-16's digits-pretrained starts (~190 and ~35
# CPU-s), which pneu
# would otherwise train after ResNet-18's at the head of the longer lane: pneu finds it in the
# store (or waits on its lock) and the medical lane sheds ~190 s (2026-11-29, for DenseNet-121's
# fourth RRR seed). Other profiles pretrain nothing here (`tapkit pretrain` names and skips it).
$(X)/starts.done: $(LIBRARY) | $(STAMP)
	mkdir -p $(X)
	$(if $(THREADS),OMP_NUM_THREADS=$(THREADS)) $(VENV)/bin/tapkit pretrain --profile $(PROFILE) --models densenet121,vgg16
	touch $@
# report runs with comparisons (4 s) only, so it may use every core
$(X)/report.ipynb: THREADS :=

.PHONY: test book install clean notebooks executed gpu gpu-pack gpu-dry-run check-book-tools constraints
install: $(STAMP)

# pyproject.toml takes ranges; constraints.txt pins the versions tested (torch, torchvision, ...).
# uv installs the same pins as pip in a fraction of the time (a fresh venv without caches: 16 s
# against pip's 95 s, measured 2026-11-26, before bytecode); pip installs them where uv cannot be
# had or fails. --compile-bytecode, as pip does: with PYTHONDONTWRITEBYTECODE set (this machine)
# nothing else writes it, and every process then compiled torch afresh (import 12-15 s, not 4-5).
$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || python3 -m venv $(VENV)
	{ $(PY) -m pip install -q -c constraints.txt uv && \
	  $(VENV)/bin/uv pip install -q --compile-bytecode --python $(PY) -c constraints.txt \
	    -e ".[book,test]"; } || \
	  $(PY) -m pip install -q -c constraints.txt -e ".[book,test]"
	$(PY) -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $@

# two pytest-xdist workers of one thread each, tests scheduled one by one except the files that
# share a module or session fixture (the browser tests' smoke book), which stay whole on one
# worker (tests/conftest.py: SHARED_FIXTURE_FILES and its scheduler). TESTS: pytest's selection
# (default: every test; .ci/run runs the tests that read no built book beside `make book`)
TESTS ?=
test: $(STAMP)
	OMP_NUM_THREADS=1 $(PY) -m pytest -q -n 2 --dist load --durations=12 $(TESTS)

# PNEU and KNEE are one notebook (notebooks/medical_gt.py) run with -p experiment pneu|knee
$(X)/pneu.ipynb $(X)/knee.ipynb: $(X)/%.ipynb: notebooks/medical_gt.py $(LIBRARY) | $(STAMP)
	$(if $(THREADS),OMP_NUM_THREADS=$(THREADS)) $(PY) scripts/run_notebook.py $< $@ --profile $(PROFILE) -p experiment $*

$(X)/%.ipynb: notebooks/%.py $(LIBRARY) | $(STAMP)
	$(if $(THREADS),OMP_NUM_THREADS=$(THREADS)) $(PY) scripts/run_notebook.py $< $@ --profile $(PROFILE)

# The GPU machine has its own PyTorch and no registry: gpu-pack fetches what it lacks here.
GPU_CARRY ?= gpu-carry
WORKERS   ?= 8
gpu-pack: $(STAMP)
	$(PY) scripts/gpu.py --pack --carry $(GPU_CARRY)

gpu:
	python3 scripts/gpu.py --carry $(GPU_CARRY) --workers $(WORKERS) $(if $(OUT),--export $(OUT))

gpu-dry-run: $(STAMP)
	$(PY) scripts/gpu.py --dry-run --carry $(GPU_CARRY) --workers 2

executed: $(EXECUTED)

# check-book-tools first (before the install, with the system python3): a missing npm fails in
# seconds, not after the notebooks
book: check-book-tools $(STAMP)
	$(MAKE) -j$(JOBS) executed
	$(PY) scripts/build_book.py --profile $(PROFILE)

check-book-tools:
	python3 scripts/check_book_tools.py

# .ipynb copies (git ignores them) for papermill or Jupyter, paired with their tracked .py
# (jupytext.formats in their metadata; notebooks/jupytext.toml pairs them too): Jupyter saves
# both, `jupytext --sync notebooks/NAME.ipynb` brings edits back. The .py files are not rewritten.
notebooks: $(STAMP)
	$(VENV)/bin/jupytext --to ipynb --set-formats ipynb,py:percent --set-kernel python3 notebooks/*.py

# after a tested upgrade of .venv: pin what it holds (tapkit itself aside)
constraints: $(STAMP)
	{ sed -n '/^#/p' constraints.txt; $(PY) -m pip freeze --exclude-editable | grep -v '^tapkit=='; } > constraints.txt.tmp
	mv constraints.txt.tmp constraints.txt

clean:
	rm -rf build _build book/notebooks
