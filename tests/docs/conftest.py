"""The docs' examples: the benchmarks' commands have a ctest entry of their own."""

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "benchmark: a benchmark's command from docs/performance.md, run shortened")
