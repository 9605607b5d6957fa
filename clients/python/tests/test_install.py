"""docs/python.md's install with pip: the package as pip builds and installs it, offline."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List

from conftest import PACKAGE_ROOT, REPOSITORY


def documented_commands() -> List[str]:
    """The install's commands of docs/python.md, as a reader copies them."""
    page = (REPOSITORY / "docs" / "python.md").read_text()
    block = page.split("<!-- example: run-by clients/python/tests/test_install.py -->\n```sh\n", 1)[1].split("```", 1)[0]
    return [line.split("#", 1)[0].strip() for line in block.splitlines() if line.strip()]


def test_pip_installs_the_package_into_a_virtual_environment(tmp_path: Path) -> None:
    # docs/python.md's commands, run as written but for the folders: the
    # repository's copy, the environment in tmp_path. Offline: setuptools
    # comes from Debian (python3-setuptools), and pip may look at no index.
    source = tmp_path / "source"
    shutil.copytree(PACKAGE_ROOT, source, ignore=shutil.ignore_patterns("tests", "__pycache__", "*.egg-info", "build"))
    venv = tmp_path / "robots"
    commands = documented_commands()
    assert commands[0].startswith("sudo apt install python3-venv python3-pip python3-setuptools"), commands
    assert commands[1] == "python3 -m venv --system-site-packages ~/robots", commands
    assert commands[2] == "~/robots/bin/pip install --no-build-isolation ./clients/python", commands
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    installed = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "--no-build-isolation", str(source)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PIP_NO_INDEX": "1"},  # as on a machine without the internet
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
