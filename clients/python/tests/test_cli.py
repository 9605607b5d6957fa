"""python3 -m flockbridge: watch, drive and calibrate, against the real daemon (docs/python.md's commands)."""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import sys
import threading
import time
from typing import Any, Callable, Dict

import flockbridge
from conftest import Bridge, client_env, moving, read_until, received, still
from flockbridge.__main__ import describe, parse_keys

UP = b"\x1b[A"


def cli(*arguments: str, **options: Any) -> "subprocess.Popen[str]":
    return subprocess.Popen(
        [sys.executable, "-m", "flockbridge", *arguments],
        env=client_env(),
        text=True,
        **options,
    )


def test_watch_prints_readings_and_ends_on_ctrl_c(smr: Bridge) -> None:
    watching = cli("watch", smr.address, "--interval-ms", "100", "--json", stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert watching.stdout is not None
        assert watching.stderr is not None
        first = watching.stderr.readline()  # stdout is JSON lines only
        assert first.startswith("smr at 127.0.0.1:"), first
        readings = [json.loads(watching.stdout.readline()) for _ in range(3)]
        assert all(r["type"] == "sensor" for r in readings)
        assert readings[0]["seq"] < readings[1]["seq"] < readings[2]["seq"]
        watching.send_signal(signal.SIGINT)
        assert watching.wait(timeout=10) == 0
    finally:
        if watching.poll() is None:
            watching.kill()


def test_watch_into_a_reader_that_stops_reading_ends_quietly(smr: Bridge) -> None:
    # `python3 -m flockbridge watch ROBOT --json | head -n 2`: head leaves
    # after two lines, and watch ends at its next line, without a traceback.
    done = subprocess.run(
        f"{sys.executable} -m flockbridge watch {smr.address} --interval-ms 50 --json | head -n 2",
        shell=True,
        env=client_env(),
        capture_output=True,
        text=True,
        timeout=30,
    )
    lines = done.stdout.splitlines()
    assert len(lines) == 2 and all(json.loads(line)["type"] in ("sensor", "link", "lease") for line in lines), lines
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr


def test_watch_says_what_is_wrong_with_the_address() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "flockbridge", "watch", "127.0.0.1:1"],
        env=client_env(),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 1
    assert done.stderr.startswith("flockbridge: cannot connect to the bridge at 127.0.0.1:1")


def test_drive_with_the_arrow_keys_stops_on_release_and_on_quit(smr: Bridge) -> None:
    with flockbridge.connect(smr.address, reconnect_s=0) as watch:
        terminal, program_side = pty.openpty()
        driving = cli("drive", smr.address, "--speed", "150", stdin=program_side, stdout=program_side, stderr=program_side)
        os.close(program_side)
        try:
            read_until(terminal, b"q quits")
            # A held key: the terminal repeats it every 30 ms or so.
            holding = threading.Event()
            holding.set()

            def hold() -> None:
                while holding.is_set():
                    os.write(terminal, UP)
                    time.sleep(0.03)

            before = received(watch)
            repeating = threading.Thread(target=hold)
            repeating.start()
            try:
                watch.wait_for(moving, timeout=10)
                held_since = time.monotonic()
                # Still driving well after the wait for the first repeat (0.75 s).
                watch.wait_for(lambda s: moving(s) and time.monotonic() - held_since > 1.5, timeout=10)
            finally:
                holding.clear()
                repeating.join()
            # Let go: the repeats stop, and so does the robot.
            watch.wait_for(still, timeout=5)
            # The drive went again while the key was held (every 0.15 s, at
            # most one a repeat), then one stop at the release.
            sent = received(watch) - before
            assert 1.5 / 0.15 <= sent <= 1 + (time.monotonic() - held_since + 1.0) / 0.03, sent
            # A program that freezes with a key held (a laptop put to
            # sleep): its last drive's dead-man time stops the robot.
            repeating = threading.Thread(target=hold)
            holding.set()
            repeating.start()
            try:
                watch.wait_for(moving, timeout=5)
                driving.send_signal(signal.SIGSTOP)
                frozen_at = time.monotonic()
                watch.wait_for(still, timeout=5)
                assert time.monotonic() - frozen_at < 2.0
            finally:
                holding.clear()
                repeating.join()
                driving.send_signal(signal.SIGCONT)
            os.write(terminal, UP)
            watch.wait_for(moving, timeout=5)
            os.write(terminal, b"q")  # quit while it drives
            assert driving.wait(timeout=10) == 0
            watch.wait_for(still, timeout=5)
        finally:
            if driving.poll() is None:
                driving.kill()
            os.close(terminal)


def read_line_with(fd: int, text: bytes, timeout: float = 10.0) -> bytes:
    """What the program wrote up to the end of the line that holds `text`."""
    seen = read_until(fd, text, timeout)
    while b"\n" not in seen[seen.index(text) :]:
        seen += read_until(fd, b"\n", timeout)
    return seen[: seen.index(b"\n", seen.index(text)) + 1]


def test_drive_puts_the_bridges_messages_on_lines_of_their_own(smr: Bridge) -> None:
    with flockbridge.connect(smr.address, reconnect_s=0) as other:
        other.drive(50)  # another program drives: the arrow key is refused
        terminal, program_side = pty.openpty()
        driving = cli("drive", smr.address, stdin=program_side, stdout=program_side, stderr=program_side)
        os.close(program_side)
        try:
            read_until(terminal, b"q quits")
            read_until(terminal, b"link up")  # the status line is drawn
            os.write(terminal, UP)
            seen = read_line_with(terminal, b"drives the robot")
            # The message: the status line cleared, the message, its own line end; no status in it.
            line = seen[seen.rindex(b"\x1b[K") + 3 :]
            assert line.startswith(b"flockbridge: "), line
            assert b" | " not in line, line
            other.emergency()
            latched = read_line_with(terminal, b"EMERGENCY STOP latched")
            assert latched[latched.rindex(b"\x1b[K") :].endswith(b"a driver may clear it\r\n"), latched
            os.write(terminal, b"q")
            assert driving.wait(timeout=10) == 0
        finally:
            if driving.poll() is None:
                driving.kill()
            os.close(terminal)


def test_drive_refuses_without_a_terminal(smr: Bridge) -> None:
    done = cli("drive", smr.address, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, errors = done.communicate(timeout=30)
    assert done.returncode == 1
    assert "run it in a terminal" in errors


def test_parse_keys() -> None:
    assert parse_keys(b"\x1b[A\x1b[B\x1b[C\x1b[D") == (["up", "down", "right", "left"], b"")
    assert parse_keys(b"\x1bOA q+-x") == (["up", "space", "quit", "faster", "slower", "other"], b"")
    assert parse_keys(b"\x1b[") == ([], b"\x1b[")  # the rest comes with the next read
    assert parse_keys(b"\x1b") == ([], b"\x1b")
    assert parse_keys(b"\x1bq") == (["escape", "quit"], b"")


def test_describe_rounds_and_leaves_out_the_raw_block() -> None:
    line = describe(
        flockbridge.Message({"type": "sensor", "ts": 1.0, "seq": 3, "v_mm_s": 12.345, "pose": {"x_mm": 1.25}, "raw": [1]})
    )
    assert line == "seq=3 v_mm_s=12.3 pose={x_mm:1.2}"
    ranges = {"left": 415, "front": None}
    assert describe(flockbridge.Message({"type": "sensor", "ranges": ranges})) == "ranges=[left:415,front:-]"


def test_the_command_line_explains_itself() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "flockbridge", "--help"],
        env=client_env(),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0
    for command in ("list", "watch", "drive", "calibrate"):
        assert command in done.stdout


def settings_printed(output: str) -> Dict[str, float]:
    values: Dict[str, float] = {}
    for line in output.splitlines():
        key, equals, value = line.partition(" = ")
        if equals and key.replace("_", "").isalpha() and not value.startswith('"'):
            values[key.strip()] = float(value)
    return values


def test_calibrate_measures_what_the_simulated_robots_are(bridges: Callable[..., Bridge]) -> None:
    flockbot = bridges("flockbot")
    smr = bridges("smr")
    flockbot.wait_link_up()
    smr.wait_link_up()
    # The answers a person gives with a tape measure, here the simulated robots' truths: the
    # Flockbot drives 500 mm and turns 180 degrees; it then faces the wall behind its start,
    # 2000 - 500 + 80 mm from its front sensor (ir2). The SMR's front sensor (2) is 1900 mm
    # from the wall ahead. The Flockbot's battery is 7.4 V.
    answers = {
        "flockbot": "\n500\n180\n2\n2420\n7.4\n\n",
        "smr": "2\n1900\n",
    }
    programs = {
        family: cli("calibrate", bridge.address, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for family, bridge in (("flockbot", flockbot), ("smr", smr))
    }
    outputs = {}
    for family, program in programs.items():
        output, errors = program.communicate(answers[family], timeout=120)
        assert program.returncode == 0, errors
        outputs[family] = output
    measured = settings_printed(outputs["flockbot"])
    assert "[flockbot.units]" in outputs["flockbot"] and 'ir_deg = "90, 45, 0, -45, -90"' in outputs["flockbot"]
    assert abs(measured["odometer_mm_per_count"] - 1.0) < 0.02, outputs["flockbot"]
    assert abs(measured["wheel_base_mm"] - 100) < 5, outputs["flockbot"]
    assert abs(measured["battery_volts_per_count"] - 0.00925) < 0.0003, outputs["flockbot"]
    assert abs(measured["ir_range_k"] / 120000 - 1) < 0.06, outputs["flockbot"]
    assert abs(measured["ir_range_offset"] - 20) < 8, outputs["flockbot"]
    measured = settings_printed(outputs["smr"])
    assert "[smr]" in outputs["smr"]
    assert abs(measured["ir_range_k"] / 26000 - 1) < 0.08, outputs["smr"]
    assert abs(measured["ir_range_offset"] + 12) < 5, outputs["smr"]


def test_calibrate_says_a_pioneer_needs_none(bridges: Callable[..., Bridge]) -> None:
    pioneer = bridges("pioneer")
    pioneer.wait_link_up()
    done = cli("calibrate", pioneer.address, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, errors = done.communicate(timeout=30)
    assert done.returncode == 1
    assert "needs no calibration" in errors


