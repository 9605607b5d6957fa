"""The machine's own timer lateness beside a benchmark's period figures:
the machine_timer program (tests/bench/machine_timer.cpp, built beside the
bridge) sleeps to a deadline every 10 ms in a thread of its own, the same
method compare_bench uses, and reports how late it woke over each phase the
benchmark marks. A period of the bridge is judged against this: no process
on the machine starts a period sooner than its timer wakes it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, Dict, Optional

REPOSITORY = Path(__file__).resolve().parents[2]


class MachineTimer:
    """One machine_timer process; phase() ends a phase and returns its figures."""

    def __init__(self, priority: int = 0) -> None:
        bridge = Path(os.environ.get("FLOCKBRIDGE_BIN", REPOSITORY / "build" / "bin" / "flockbridge"))
        program = bridge.with_name("machine_timer")
        if not program.exists():
            raise SystemExit(f"{program} is missing: build the benchmarks (scripts/bench.sh builds them)")
        self.process = subprocess.Popen(
            [str(program), "--priority", str(priority)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )

    def phase(self) -> Dict[str, Any]:
        """The figures since the last phase ended (or the start)."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write("\n")
        self.process.stdin.flush()
        figures: Dict[str, Any] = json.loads(self.process.stdout.readline())
        return figures

    def close(self) -> Optional[Dict[str, Any]]:
        if self.process.stdin is not None:
            self.process.stdin.close()
        last = self.process.stdout.readline() if self.process.stdout is not None else ""
        self.process.wait()
        return json.loads(last) if last else None


def describe(figures: Dict[str, Any]) -> str:
    """ "late p99 0.29 ms, max 6.15 ms, over 0.5 ms 4 of 600 wakes (ordinary)" """
    return (
        f"late p99 {figures['p99_ms']:.3f} ms, max {figures['max_ms']:.3f} ms, over 0.5 ms {figures['over_0_5ms']}, "
        f"over 2 ms {figures['over_2ms']} of {figures['wakes']} wakes ({figures['class']})"
    )
