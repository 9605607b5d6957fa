"""The programs of docs/python.md (clients/python/examples), run against the
simulated robots as a student runs them: first_flockbot.py, first_pioneer.py,
first_smr.py, square.py, wall_follow.py and battery_csv.py."""

from __future__ import annotations

import csv
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

import pytest

import flockbridge
from conftest import PACKAGE_ROOT, REPOSITORY, Bridge, client_env, robot_families, still

EXAMPLES = PACKAGE_ROOT / "examples"


def program_file(example: str) -> Path:
    """An example's file: in clients/python/examples/, or, for a family that
    exists only for the tests, in its own folder (tests/family/<family>/)."""
    if (EXAMPLES / example).exists():
        return EXAMPLES / example
    for own in sorted((REPOSITORY / "tests" / "family").glob(f"*/{example}")):
        return own
    pytest.fail(f"no program {example}: a family's first program goes in clients/python/examples/ (docs/adding-a-family.md)")


def run(example: str, *arguments: str, **options: object) -> "subprocess.Popen[str]":
    return subprocess.Popen(
        [sys.executable, str(program_file(example)), *arguments],
        env=client_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish_with_errors(program: "subprocess.Popen[str]", timeout: float = 90) -> Tuple[str, str]:
    """A program's output and errors once it has ended, as it must, well. One
    still running after `timeout` seconds is stopped with SIGABRT, and the
    test fails with where each of its threads was (client_env())."""
    try:
        output, errors = program.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        program.send_signal(signal.SIGABRT)
        try:
            _, errors = program.communicate(timeout=10)
        finally:
            if program.poll() is None:
                program.kill()
        pytest.fail(f"{program.args!r} did not end within {timeout:g} s; its threads were:\n{errors}")
    assert program.returncode == 0, errors
    return output, errors


def finish(program: "subprocess.Popen[str]", timeout: float = 90) -> str:
    return finish_with_errors(program, timeout)[0]


def started(bridges: Callable[..., Bridge], *families: str) -> Dict[str, Bridge]:
    running = {family: bridges(family) for family in families}
    for bridge in running.values():
        bridge.wait_link_up()
    return running


# Each program is run twice in a row against the same robot, as a student
# runs it again: the second run starts where the first left the robot.
TWICE = (1, 2)


def test_the_first_programs(bridges: Callable[..., Bridge]) -> None:
    robots = started(bridges, *robot_families())
    for run_number in TWICE:
        programs = {family: run(f"first_{family}.py", robot.address) for family, robot in robots.items()}
        # What each family's program says it found.
        outputs = {family: finish(program) for family, program in programs.items()}
        if "flockbot" in outputs:
            assert outputs["flockbot"].startswith("battery: ") and "back; odometer:" in outputs["flockbot"], run_number
        if "pioneer" in outputs:
            assert re.search(r"closest echo: \d+ mm, -?\d+(\.\d+)? degrees", outputs["pioneer"]), outputs["pioneer"]
            with flockbridge.connect(robots["pioneer"].address) as watch:
                # A metre on and a quarter turn left at each run: the second
                # ends a metre left of where the first did.
                pose = watch.wait_for(still, timeout=5).pose
                assert abs(pose.x_mm - 1000) < 150 and abs(pose.y_mm - 1000 * (run_number - 1)) < 150, (
                    run_number,
                    pose,
                )
        if "smr" in outputs:
            # The simulated room's wall is 2 m ahead of the start.
            x_mm = float(outputs["smr"].split("a wall ahead at x =")[1].split()[0])
            assert 1000 < x_mm < 1800, (run_number, outputs["smr"])
            with flockbridge.connect(robots["smr"].address) as watch:
                watch.wait_for(still, timeout=5)
        # A family added later (the tests' own among them): its program runs
        # to its end and says what it found.
        for family, output in outputs.items():
            assert output.strip(), (family, run_number)


def test_a_square_with_every_family(bridges: Callable[..., Bridge]) -> None:
    robots = started(bridges, *robot_families())
    for run_number in TWICE:
        programs = {family: run("square.py", robot.address) for family, robot in robots.items()}
        for family, program in programs.items():
            output = finish(program)
            if family != "flockbot":
                assert output.count("corner") == 4, (run_number, output)
        # Back where each started, give or take a wheel's slip.
        for family in robots.keys() & {"pioneer", "smr"}:
            with flockbridge.connect(robots[family].address) as robot:
                pose = robot.wait_for(still, timeout=5).pose
                assert abs(pose.x_mm) < 100 * run_number and abs(pose.y_mm) < 100 * run_number, (family, pose)


def test_one_wall_follower_for_every_robot(bridges: Callable[..., Bridge]) -> None:
    robots = started(bridges, *robot_families())
    for run_number in TWICE:
        tracks: Dict[str, List[flockbridge.Message]] = {family: [] for family in robots}
        watchers = {family: flockbridge.connect(robot.address) for family, robot in robots.items()}
        try:
            for family, watch in watchers.items():
                watch.on("sensor", tracks[family].append)
            programs = {family: run("wall_follow.py", robot.address, "6") for family, robot in robots.items()}
            for family, program in programs.items():
                finish(program)
                watchers[family].wait_for(still, timeout=5)
        finally:
            for watch in watchers.values():
                watch.close()
        for family, track in tracks.items():
            # The first run: along the wall at x = 2 m, which each met first
            # and turned right at, that wall on its left, kept at about
            # 300 mm: between 100 and 500 mm over the last readings. (The
            # Pioneer's side sonar answers every 400 ms: a program slowed by
            # a busy machine sees the corner later and turns it nearer the
            # wall, 150 mm from it where a quiet one passes at 210.) The
            # second, from where the first ended: along a wall on its left
            # too. Nothing ever touched.
            if run_number == 1:
                along = [s for s in track if s.pose.y_mm < -300]
                assert along, f"the {family} never went along the wall"
                assert all(s.pose.x_mm > 1200 for s in along[-20:]), family
                kept = [flockbridge.nearest(s, 60, 120) for s in along[-20:]]
                assert all(left is not None and 100 < left.mm < 500 for left in kept), (
                    family,
                    [k and k.mm for k in kept],
                )
            else:
                lefts = [flockbridge.nearest(s, 60, 120) for s in track]
                assert any(left is not None and 200 < left.mm < 400 for left in lefts), family
            assert all(s.bumped == [] for s in track), (family, run_number)


@pytest.mark.parametrize("family", robot_families())
def test_a_program_runs_again_on_a_replay_of_its_run(bridges: Callable[..., Bridge], tmp_path: Path, family: str) -> None:
    # The README's promise: a student runs their program again on the run
    # that went wrong. Their first program and the wall follower, each
    # recorded as it drove the simulated robot, then run against the replay
    # of that recording: each runs to its end, told once that nothing is sent.
    # (The wall follower is the same program on every robot: once, on the SMR.)
    examples = [(f"first_{family}.py", ())] + ([("wall_follow.py", ("4",))] if family == "smr" else [])
    for example, arguments in examples:
        recordings = tmp_path / example
        robot = bridges(family, "--record", str(recordings), "--record-enabled=false")
        robot.wait_link_up()
        with flockbridge.connect(robot.address) as teacher:
            # The teacher presses Record once the robot is up (a recording
            # made from the bridge's start begins with the robot's own
            # start-up, before every sensor has answered).
            teacher.wait_for(lambda reading: True, timeout=10)
            teacher.command("record_start")
            robot.wait_log("recording into ")
            first_output, _ = finish_with_errors(run(example, robot.address, *arguments))
            # The recording goes on a little after the program's end, as a
            # robot's would: the replay must not end before the program does.
            now = teacher.wait_for(lambda reading: True, timeout=5).seq
            teacher.wait_for(lambda reading: bool(reading.seq >= now + 30), timeout=10)
        robot.stop()
        (recording,) = recordings.glob("*.mcap")
        replay = bridges(family, "--replay", str(recording), simulate=False)
        replay.wait_log("listening: ")
        output, errors = finish_with_errors(run(example, replay.address, *arguments))
        assert errors.count("ReplayWarning") == 1, errors
        assert f"not sent: this bridge replays a recording ({recording.name})" in errors, errors
        assert f"{example}:" in errors  # the warning names the program's line
        # It said what it said then, of the run as it was.
        assert [line.split()[:2] for line in output.splitlines()] == [
            line.split()[:2] for line in first_output.splitlines()
        ], (output, first_output)


@pytest.mark.parametrize("family", ["smr", "flockbot"])
def test_logging_the_battery_to_csv(bridges: Callable[..., Bridge], tmp_path: Path, family: str) -> None:
    robot = bridges(family)
    robot.wait_link_up()
    for run_number in TWICE:
        path = tmp_path / f"battery-{run_number}.csv"
        program = run("battery_csv.py", robot.address, str(path))
        written = threading.Event()

        def watch_file() -> None:
            while program.poll() is None and not written.is_set():
                if path.exists() and len(path.read_text().splitlines()) >= 3:
                    written.set()
                    return
                written.wait(0.2)

        watcher = threading.Thread(target=watch_file)
        watcher.start()
        watcher.join(timeout=30)
        program.send_signal(signal.SIGINT)
        output = finish(program)
        assert output.strip() == f"saved {path}"
        with path.open() as file:
            rows = list(csv.reader(file))
        assert rows[0] == ["time", "battery_v", "link"]  # the simulated Uno's volts are known
        assert len(rows) >= 3
        for row in rows[1:]:
            assert float(row[1]) > 0 and row[2] == "up"
