# All set-up happens here: a fresh machine needs only Python >= 3.10.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP_RUN  := $(VENV)/.installed-run
STAMP_TEST := $(VENV)/.installed-test

.PHONY: demo test test-slow bench docs clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP_RUN): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[plot]"
	touch $@

$(STAMP_TEST): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $@ $(STAMP_RUN)

demo: $(STAMP_RUN)
	$(BIN)/python -m skcalib demo --output-dir skcalib-demo

# Tests run on every core (pytest-xdist), each worker with one BLAS thread: more BLAS threads
# than cores make OpenBLAS spin, which slowed a doctest from 0.3 s to 50 s in a trial run.
PYTEST := OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 $(BIN)/python -m pytest -n auto

test: $(STAMP_TEST)
	$(PYTEST) -q skcalib tests

test-slow: $(STAMP_TEST)
	$(PYTEST) -q -m slow tests

bench: $(STAMP_RUN)
	$(BIN)/python benchmarks/bench_foundation.py
	$(BIN)/python benchmarks/bench_regression.py
	$(BIN)/python benchmarks/bench_regression_forms.py
	$(BIN)/python benchmarks/bench_recalibration.py
	$(BIN)/python benchmarks/bench_estimation.py
	$(BIN)/python benchmarks/bench_tests.py
	$(BIN)/python benchmarks/bench_practitioner.py
	$(BIN)/python benchmarks/bench_recalibrators.py

docs: $(STAMP_TEST)
	$(BIN)/python -m pip install --quiet -e ".[docs]"
	$(BIN)/python -m sphinx -b html -E -W --keep-going docs docs/_build/html
	$(BIN)/python docs/check_build.py docs/_build/html

clean:
	rm -rf $(VENV) docs/_build build *.egg-info skcalib-demo
