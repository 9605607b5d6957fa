"""pip install ./clients/python: the package as pip builds and installs it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from conftest import PACKAGE_ROOT


def test_pip_installs_the_package_into_a_virtual_environment(tmp_path: Path) -> None:
    # A copy, so that the build leaves nothing in the repository. Offline:
    # setuptools comes from Debian (python3-setuptools), not from PyPI.
    source = tmp_path / "source"
    shutil.copytree(PACKAGE_ROOT, source, ignore=shutil.ignore_patterns("tests", "__pycache__", "*.egg-info", "build"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    installed = subprocess.run(
        [str(python), "-m", "pip", "install", "--no-build-isolation", "--no-index", "--no-deps", str(source)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    where = subprocess.run(
        [str(python), "-c", "import flockbridge, pathlib; print(pathlib.Path(flockbridge.__file__).parent)"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
        check=True,
    ).stdout.strip()
    package = Path(where)
    assert package.is_relative_to(venv), f"imported from {package}, not from the environment"
    assert (package / "py.typed").exists()  # type checkers see the package's types
    usage = subprocess.run(
        [str(python), "-m", "flockbridge", "--help"], capture_output=True, text=True, cwd=tmp_path, timeout=60
    )
    assert usage.returncode == 0 and "drive" in usage.stdout
