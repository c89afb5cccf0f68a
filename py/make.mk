# Python binding (py/): the wheel is built by `pip install ./py` (maturin is
# the PEP 517 backend, fetched by pip), exactly as a user installs it; for
# the host's triple named explicitly (CARGO_BUILD_TARGET, which maturin
# reads), so it shares target/<triple>/release with the other bindings.
# In the repository the build is --locked (MATURIN_PEP517_ARGS); pyproject
# cannot say so, or the sdist would not build (see pyproject.toml).
PY_BUILD := CARGO_BUILD_TARGET=$(RUST_HOST) MATURIN_PEP517_ARGS=--locked
PY_PYTHON ?= python3
PY_PIP := --disable-pip-version-check --no-input -q
# A fresh venv per test run proves the install needs no manual step.
PY_TEST_VENV := build/py-test-venv
# The venv the demo and the benchmark use.
PY_VENV := build/py-venv

TESTS += test-py
DEMOS += demo-py
BENCHES += bench-py

.PHONY: test-py demo-py bench-py py-venv

test-py:
	rm -rf $(PY_TEST_VENV)
	$(PY_PYTHON) -m venv $(PY_TEST_VENV)
	$(PY_TEST_VENV)/bin/python -m pip install $(PY_PIP) -r py/requirements-dev.txt
	$(PY_BUILD) $(PY_TEST_VENV)/bin/python -m pip install $(PY_PIP) ./py
	$(PY_TEST_VENV)/bin/python -m mypy.stubtest sds._native
	$(PY_TEST_VENV)/bin/python -m mypy --strict --no-incremental -p sds
	$(PY_TEST_VENV)/bin/python -m pytest -p no:cacheprovider py/tests

# Reinstalls the wheel each time, so the demo and bench run the current code.
py-venv:
	test -x $(PY_VENV)/bin/python || $(PY_PYTHON) -m venv $(PY_VENV)
	$(PY_BUILD) $(PY_VENV)/bin/python -m pip install $(PY_PIP) --force-reinstall --no-deps ./py

# flask_limiter_shared.py needs Flask and flask-limiter (requirements-demo.txt);
# the others nothing but the standard library and sds.
demo-py: py-venv
	$(PY_VENV)/bin/python -m pip install $(PY_PIP) -r py/requirements-demo.txt
	$(PY_VENV)/bin/python examples/python/burst.py
	$(PY_VENV)/bin/python examples/python/shared.py
	$(PY_VENV)/bin/python examples/python/flask_limiter_shared.py
	$(PY_VENV)/bin/python examples/python/web_app.py
	$(PY_VENV)/bin/python examples/python/metrics.py
	$(PY_VENV)/bin/python examples/python/pacing.py
	$(PY_VENV)/bin/python examples/python/adaptive.py

# shared_table.py and cluster_points.py start their own redis-server (make
# servers installs it).
bench-py: py-venv
	$(PY_VENV)/bin/python -m pip install $(PY_PIP) -r py/bench/requirements.txt -r py/requirements-dev.txt
	$(PY_VENV)/bin/python py/bench/bench.py
	$(PY_VENV)/bin/python py/bench/keyed_limits.py
	$(PY_VENV)/bin/python py/bench/web_overhead.py
	$(PY_VENV)/bin/python py/bench/shared_table.py
	$(PY_VENV)/bin/python py/bench/cluster_points.py
