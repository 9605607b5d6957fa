"""The Robot API against the real daemon and each family's simulator."""

from __future__ import annotations

import logging
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Callable, List

import pytest

import flockbridge
from conftest import PACKAGE_ROOT, Bridge, moving, received, robot_families, still

FAMILIES = tuple(robot_families())
PIN_CONFIG = '[access]\ndriver_pin = "4711"\nteacher_secret = "chalk-and-cheese"\n'


def collect(into: List[flockbridge.Message], arrived: threading.Event) -> Callable[[flockbridge.Message], None]:
    """A callback that keeps the messages and says one came."""

    def keep(message: flockbridge.Message) -> None:
        into.append(message)
        arrived.set()

    return keep


def observer(bridge: Bridge) -> flockbridge.Robot:
    """A second client that only watches: what the simulator reports."""
    return flockbridge.connect(bridge.address, reconnect_s=0)


@pytest.mark.parametrize("family", FAMILIES)
def test_hello_describes_each_family(bridges: Callable[..., Bridge], family: str) -> None:
    bridge = bridges(family)
    bridge.wait_link_up()
    with flockbridge.connect(bridge.address) as robot:
        assert robot.family == family
        assert robot.model
        assert robot.session
        assert robot.client_id > 0
        assert robot.role == "driver"  # no PIN set
        assert robot.connected
        assert {"drive", "stop", "emergency"} <= set(robot.capabilities)
        assert set(robot.capabilities) <= set(dir(robot))
        robot.wait_for(lambda s: True, timeout=5)
        assert robot.link == "up" and robot.link_reason == ""
        assert robot.sensors.type == "sensor"
        assert isinstance(robot.sensors.seq, int)
        assert family in repr(robot)
    assert not robot.connected


@pytest.mark.parametrize("family", ["pioneer", "smr"])
def test_drive_and_stop_reach_the_simulator(bridges: Callable[..., Bridge], family: str) -> None:
    bridge = bridges(family)
    bridge.wait_link_up()
    with observer(bridge) as watch, flockbridge.connect(bridge.address) as robot:
        robot.drive(200)
        assert robot.driving
        reading = watch.wait_for(moving, timeout=10)
        assert float(reading.v_mm_s) > 0
        robot.drive(0, 30)
        watch.wait_for(lambda s: float(s.w_deg_s) > 10, timeout=10)
        robot.stop()
        watch.wait_for(still, timeout=10)


def test_flockbot_drives_by_its_own_commands_and_reports_dmc(bridges: Callable[..., Bridge]) -> None:
    bridge = bridges("flockbot")
    bridge.wait_link_up()
    with flockbridge.connect(bridge.address) as robot:
        done = threading.Event()
        seen: List[flockbridge.Message] = []

        def completed(message: flockbridge.Message) -> None:
            seen.append(message)
            done.set()

        assert robot.on("dmc", completed) is completed
        start = robot.sensors.odometer.avg
        answer = robot.move_distance(speed=30, dist=5)
        assert answer.type == "ok"
        assert done.wait(15), "no DMC packet after move_distance"
        assert seen[0].type == "packet" and seen[0].tag == "DMC"
        assert robot.wait_for(lambda s: s.odometer.avg != start, timeout=5)
        robot.off("dmc", completed)
        robot.lcd_write(text="Hello, class!")
        # The same, waited for in the program's own thread.
        robot.rotate_degrees(speed=30, deg=45)
        assert robot.wait_event("dmc", timeout=15).tag == "DMC"
        assert len(seen) == 1  # off() took the callback away
        with pytest.raises(flockbridge.Timeout, match="no 'dmc' message within 0.2 s"):
            robot.wait_event("dmc", timeout=0.2)


def test_a_family_command_takes_keywords_and_says_the_bridges_words(bridges: Callable[..., Bridge]) -> None:
    bridge = bridges("pioneer")
    bridge.wait_link_up()
    with flockbridge.connect(bridge.address) as robot:
        assert robot.sonar(on=True).type == "ok"
        with pytest.raises(flockbridge.InvalidCommand) as refused:
            robot.heading(deg=720)
        assert refused.value.code == "invalid"
        assert refused.value.command == "heading"
        assert str(refused.value) == "heading: deg must be from 0 to 360, got 720"  # the bridge's own words
        with pytest.raises(flockbridge.InvalidCommand, match="spead"):
            robot.move(spead=3)
        # A value without its name: the bridge's names for it, with the value.
        with pytest.raises(TypeError, match=r"^move\(\) takes its arguments by name: move\(\w+=20\)$"):
            robot.move(20)
        with pytest.raises(AttributeError, match="pioneer has no command 'lcd_write'.*move"):
            robot.lcd_write(text="hi")
        with pytest.raises(flockbridge.InvalidCommand):
            robot.command("fly")
        with pytest.raises(ValueError):  # InvalidCommand is a ValueError too
            robot.drive(float("nan"))


def test_sensors_are_objects_with_attributes(smr: Bridge) -> None:
    with flockbridge.connect(smr.address) as robot:
        reading = robot.sensors
        assert reading["type"] == reading.type == "sensor"
        assert isinstance(reading.pose.x_mm, float)  # nested objects have attributes too
        assert reading.to_dict()["pose"]["x_mm"] == reading.pose.x_mm
        with pytest.raises(AttributeError, match="no field 'speed'.*v_mm_s"):
            reading.speed
        with pytest.raises(TypeError):
            reading["type"] = "changed"
        assert robot.last("sensor") is not None
        assert robot.last("no such kind") is None


def test_stream_gives_the_newest_reading_at_most_once_per_interval(smr: Bridge) -> None:
    with flockbridge.connect(smr.address) as robot:
        readings = []
        taken = []  # when this program got each one
        for reading in robot.stream(interval_ms=200):
            taken.append(time.monotonic())
            readings.append(reading)
            if len(readings) == 4:
                break
        sequence = [int(r.seq) for r in readings]
        assert all(b > a for a, b in zip(sequence, sequence[1:]))
        # At most one per interval, by this program's clock: the promise. (The
        # bridge's stamps of the readings are no measure of it: a reader
        # thread that fell behind hands over an older newest reading.)
        assert all(b - a >= 0.18 for a, b in zip(taken, taken[1:])), taken
        every = []
        for reading in robot.stream(interval_ms=0):
            every.append(int(reading.seq))
            if len(every) == 5:
                break
        assert all(b > a for a, b in zip(every, every[1:]))


def test_subscribe_thins_the_bridges_sensor_messages(smr: Bridge) -> None:
    with flockbridge.connect(smr.address) as robot:
        robot.subscribe(300)
        first = robot.wait_for(lambda s: True, timeout=5)
        arrivals: List[float] = []
        robot.on("sensor", lambda m: arrivals.append(float(m.ts)))
        robot.wait_for(lambda s: len(arrivals) >= 3, timeout=5)
        assert all(b - a >= 0.25 for a, b in zip(arrivals, arrivals[1:])), arrivals
        assert first.seq is not None


def test_wait_for_gives_up_with_timeout(smr: Bridge) -> None:
    with flockbridge.connect(smr.address) as robot:
        with pytest.raises(flockbridge.Timeout, match="within 0.3 s"):
            robot.wait_for(lambda s: float(s.v_mm_s) > 1000, timeout=0.3)
        with pytest.raises(TimeoutError):  # a Timeout is a TimeoutError too
            robot.wait_for(lambda s: False, timeout=0.1)


def settle(robot: flockbridge.Robot) -> None:
    """Waits two SMR bus periods: the stop the bridge owes a program that
    went away takes the next period's speed slot, and a drive in that same
    period is refused."""
    after = int(robot.sensors.seq)
    robot.wait_for(lambda s: int(s.seq) > after + 1, timeout=5)


def test_an_exception_inside_with_stops_the_robot(smr: Bridge) -> None:
    with observer(smr) as watch:
        before = received(watch)
        with pytest.raises(RuntimeError, match="student's bug"):
            with flockbridge.Robot(smr.address) as robot:
                robot.drive(200)
                watch.wait_for(moving, timeout=10)
                raise RuntimeError("student's bug")
        watch.wait_for(still, timeout=10)
        # The client stopped it itself (drive, then stop), before it closed:
        # not only the bridge, when its driver went away.
        assert received(watch) - before == 2


def test_a_drive_with_a_deadman_time_stops_by_itself_unless_driven_again(smr: Bridge) -> None:
    with observer(smr) as watch, flockbridge.Robot(smr.address) as robot:
        # A control loop: a drive every 0.1 s, each good for 0.4 s.
        for _ in range(15):
            robot.drive(150, deadman=0.4)
            time.sleep(0.1)
        assert moving(watch.wait_for(moving, timeout=5))
        # The loop stops (the program hangs, its laptop sleeps): so does the robot.
        told = robot.wait_event("safety_stop", timeout=5)
        assert "deadman_ms (400 ms)" in str(told.get("reason"))
        watch.wait_for(still, timeout=5)
        with pytest.raises(flockbridge.InvalidCommand, match="deadman_ms"):
            robot.drive(150, deadman=0.01)


SCRIPT = """
import sys, time
sys.path.insert(0, {root!r})
import flockbridge
{body}
"""

WITH_BODY = """
with flockbridge.Robot({address!r}) as robot:
    robot.drive(150, 10)
    print("driving", flush=True)
    while True:
        time.sleep(1)
"""

CONNECT_BODY = """
robot = flockbridge.connect({address!r})
robot.drive(150, 10)
print("driving", flush=True)
while True:
    time.sleep(1)
"""


@pytest.mark.parametrize("body", [WITH_BODY, CONNECT_BODY], ids=["with", "connect"])
def test_ctrl_c_stops_the_robot(smr: Bridge, body: str) -> None:
    program = SCRIPT.format(root=str(PACKAGE_ROOT), body=textwrap.dedent(body).format(address=smr.address))
    with observer(smr) as watch:
        before = received(watch)
        child = subprocess.Popen(
            [sys.executable, "-c", program], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        try:
            assert child.stdout is not None
            assert child.stdout.readline().strip() == "driving"
            watch.wait_for(moving, timeout=10)
            child.send_signal(signal.SIGINT)
            _, errors = child.communicate(timeout=15)
        finally:
            if child.poll() is None:
                child.kill()
        assert "KeyboardInterrupt" in errors
        watch.wait_for(still, timeout=10)
        watch.wait_for(lambda s: watch.lease is None, timeout=5)
        assert received(watch) - before == 2, "the client sent no stop: only the bridge stopped the robot"


def test_closing_a_robot_that_never_moved_sends_no_stop(smr: Bridge) -> None:
    with observer(smr) as watch:
        before = received(watch)
        with flockbridge.connect(smr.address) as robot:
            robot.sensors
        assert received(watch) == before


def test_emergency_latches_until_cleared(smr: Bridge) -> None:
    with flockbridge.connect(smr.address) as robot, observer(smr) as watch:
        robot.drive(200)
        watch.wait_for(moving, timeout=10)
        robot.emergency()
        robot.wait_for(lambda s: robot.latched, timeout=5)
        watch.wait_for(still, timeout=10)
        assert robot.last("emergency_latch").latched is True  # type: ignore[union-attr]
        with pytest.raises(flockbridge.EmergencyLatched) as refused:
            robot.drive(100)
        assert refused.value.code == "latched"
        robot.stop()  # a stop is always taken
        robot.clear_emergency()  # no teacher secret: the driver may
        robot.wait_for(lambda s: not robot.latched, timeout=5)
        robot.drive(100)
        watch.wait_for(moving, timeout=10)


def test_busy_take_and_release(smr: Bridge) -> None:
    with flockbridge.connect(smr.address) as first, flockbridge.connect(smr.address) as second:
        asked = threading.Event()
        first.on("lease_request", lambda m: asked.set())
        first.drive(100)
        assert first.driving and not second.driving
        second.wait_for(lambda s: second.lease is not None, timeout=5)
        assert second.lease.client == first.client_id  # type: ignore[union-attr]
        with pytest.raises(flockbridge.Busy) as refused:
            second.drive(100)
        assert refused.value.code == "busy"
        assert f"client {first.client_id}" in str(refused.value)
        second.stop()  # anyone may stop
        second.take()
        assert asked.wait(5), "the driver was not asked to hand over"
        first.release()
        first.wait_for(lambda s: first.lease is None, timeout=5)
        settle(second)  # the release stops the robot
        second.drive(50)
        assert second.driving
        with pytest.raises(flockbridge.Busy):
            first.drive(50)


def test_the_lease_ending_after_the_programs_own_stop_is_no_news(
    bridges: Callable[..., Bridge], caplog: pytest.LogCaptureFixture
) -> None:
    # A Pioneer: on an SMR a drive in the very bus period of the bridge's own stop is refused.
    bridge = bridges("pioneer", "--lease-idle-ms", "300")
    bridge.wait_link_up()
    caplog.set_level(logging.DEBUG, logger="flockbridge")
    with flockbridge.connect(bridge.address) as robot:
        # Driving, then silent: the bridge stops the robot, and the program is told.
        robot.drive(100)
        robot.wait_event("lease", timeout=5)  # the lease ends after 300 ms without a command
        robot.wait_for(lambda s: robot.lease is None, timeout=5)
        told = [r for r in caplog.records if "the bridge stopped the robot" in r.getMessage()]
        assert len(told) == 1 and told[0].levelno == logging.WARNING
        # Driving, stopped by the program itself, then silent: nothing to tell.
        caplog.clear()
        robot.drive(100)
        robot.wait_for(lambda s: robot.driving, timeout=5)
        robot.stop()
        robot.wait_for(lambda s: robot.lease is None, timeout=5)
        assert not [r for r in caplog.records if r.levelno >= logging.WARNING], [r.getMessage() for r in caplog.records]
        assert any("no longer drives the robot" in r.getMessage() for r in caplog.records)


def test_a_timeout_says_when_the_bridge_stopped_a_program_that_sent_nothing(bridges: Callable[..., Bridge]) -> None:
    bridge = bridges("smr", "--lease-idle-ms", "300")
    bridge.wait_link_up()
    with flockbridge.connect(bridge.address) as robot, observer(bridge) as watch:
        robot.drive(100)
        watch.wait_for(moving, timeout=10)
        with pytest.raises(flockbridge.Timeout, match="meanwhile the bridge stopped the robot: .*sent no command for 300 ms"):
            robot.wait_for(lambda s: float(s.pose.x_mm) > 10_000, timeout=3)
        watch.wait_for(still, timeout=5)
        assert not robot.driving
        # A release of its own, while it waits, is no surprise: nothing is said of it.
        robot.drive(100)
        releasing = threading.Timer(0.1, robot.release)
        releasing.start()
        with pytest.raises(flockbridge.Timeout) as quiet:
            robot.wait_for(lambda s: False, timeout=0.25)
        releasing.join()
        assert robot.lease is None
        assert "meanwhile" not in str(quiet.value)


def test_pin_roles_and_auth_failures(bridges: Callable[..., Bridge]) -> None:
    bridge = bridges("smr", config=PIN_CONFIG)
    bridge.wait_link_up()
    with flockbridge.connect(bridge.address) as viewer:
        assert viewer.role == "viewer"
        with pytest.raises(flockbridge.AuthFailed) as refused:
            viewer.drive(100)
        assert refused.value.code == "denied"
        viewer.stop()  # a viewer may stop
        assert viewer.auth(pin="4711") == "driver"
        assert viewer.role == "driver"
        viewer.drive(100)
        with pytest.raises(ValueError):
            viewer.auth()
    with flockbridge.connect(bridge.address, pin="4711") as driver, flockbridge.connect(
        bridge.address, teacher="chalk-and-cheese"
    ) as teacher:
        assert driver.role == "driver" and teacher.role == "teacher"
        settle(driver)  # the program before went away
        driver.drive(100)
        teacher.take()  # the teacher takes control at once
        teacher.wait_for(lambda s: teacher.driving, timeout=5)
        with pytest.raises(flockbridge.Busy):
            driver.drive(100)
        teacher.emergency()
        teacher.wait_for(lambda s: teacher.latched, timeout=5)
        with pytest.raises(flockbridge.AuthFailed):
            driver.clear_emergency()  # with a teacher secret set, drivers may not
        teacher.clear_emergency()
        teacher.wait_for(lambda s: not teacher.latched, timeout=5)
        stats = teacher.stats()
        assert stats.type == "stats"
    # Wrong secrets last: the bridge makes the address wait after each.
    with flockbridge.connect(bridge.address) as viewer:
        with pytest.raises(flockbridge.AuthFailed):
            viewer.auth(pin="0000")
        assert viewer.role == "viewer"
    with pytest.raises(flockbridge.AuthFailed) as wrong:
        flockbridge.connect(bridge.address, pin="1234")
    assert wrong.value.code == "denied"
    assert isinstance(wrong.value, PermissionError)


def test_link_down_is_told_apart_from_a_lost_connection(bridges: Callable[..., Bridge]) -> None:
    bridge = bridges("smr", "--device", "/nonexistent/ttyUSB9", simulate=False)
    with flockbridge.connect(bridge.address, timeout=1) as robot:
        assert robot.connected
        assert robot.link != "up"
        with pytest.raises(flockbridge.LinkDown) as refused:
            robot.drive(100)
        assert refused.value.code in ("link_down", "link_lost")
        with pytest.raises(flockbridge.LinkDown, match="link"):
            robot.sensors
        with pytest.raises(flockbridge.LinkDown):
            next(robot.stream(timeout=0.5))


def test_nothing_listening_is_connection_lost() -> None:
    with pytest.raises(flockbridge.ConnectionLost, match="cannot connect"):
        flockbridge.connect("127.0.0.1", 1, timeout=1)


def test_a_bridge_that_goes_away_raises_connection_lost(smr: Bridge) -> None:
    robot = flockbridge.connect(smr.address, reconnect_s=0.5)
    lost = threading.Event()
    robot.on("disconnect", lambda m: lost.set())
    robot.sensors
    smr.stop()
    assert lost.wait(5)
    with pytest.raises(flockbridge.ConnectionLost):
        robot.drive(100)
    with pytest.raises(flockbridge.ConnectionLost):
        robot.wait_for(lambda s: False, timeout=5)
    assert not robot.connected
    robot.close()


def test_the_client_reconnects_after_a_bridge_restart_and_never_resends_motion(bridges: Callable[..., Bridge]) -> None:
    bridge = bridges("smr", config=PIN_CONFIG)
    bridge.wait_link_up()
    with flockbridge.connect(bridge.address, pin="4711", interval_ms=50) as robot:
        reconnected = threading.Event()
        events: List[flockbridge.Message] = []
        robot.on("reconnect", collect(events, reconnected))
        robot.drive(200)
        robot.wait_for(moving, timeout=10)
        first_session = robot.session
        bridge.restart()
        bridge.wait_link_up()
        assert reconnected.wait(15), "the client did not connect again"
        assert events[0].restarted is True
        assert robot.session != first_session
        assert robot.connected and robot.role == "driver"  # the PIN was given again
        # The robot stays stopped: the drive was not sent again.
        robot.wait_for(lambda s: True, timeout=10)
        for reading in robot.stream(interval_ms=0, timeout=5):
            assert still(reading)
            if int(reading.seq) > 20:
                break
        assert robot.lease is None
        assert robot.stats().type == "stats"
        robot.drive(100)  # and the program carries on
        robot.wait_for(moving, timeout=10)


def test_commands_without_waiting_and_their_errors(smr: Bridge) -> None:
    with flockbridge.connect(smr.address) as robot:
        errors: List[flockbridge.Message] = []
        got = threading.Event()
        robot.on("error", collect(errors, got))
        sent = robot.command("drive", wait=False, v_mm_s="fast")
        assert sent.type == "sent"
        assert got.wait(5)
        assert errors[0].id == sent.id and errors[0].code == "invalid"


def test_callbacks_that_raise_do_not_stop_the_reader(smr: Bridge) -> None:
    with flockbridge.connect(smr.address) as robot:
        calls: List[str] = []

        def broken(message: flockbridge.Message) -> None:
            calls.append(message.type)
            raise ZeroDivisionError("a student's callback")

        robot.on("*", broken)
        robot.wait_for(lambda s: len(calls) >= 3, timeout=5)
        assert robot.stats().type == "stats"


def test_stats_from_every_family(bridges: Callable[..., Bridge]) -> None:
    for family in FAMILIES:
        bridge = bridges(family)
        bridge.wait_link_up()
        with flockbridge.connect(bridge.address) as robot:
            stats = robot.stats()
            assert stats.uptime_s >= 0
            assert "link" in stats and "commands" in stats


def test_a_program_runs_against_a_replay_of_a_recorded_run(bridges: Callable[..., Bridge], tmp_path: Path) -> None:
    recorder = bridges("smr", "--record", str(tmp_path))
    recorder.wait_log("recording into ")
    def at_least(seq: int) -> Callable[[flockbridge.Message], bool]:
        return lambda reading: bool(reading.seq >= seq)

    with flockbridge.connect(recorder.address) as robot:
        got = [robot.wait_for(at_least(n), timeout=10) for n in (50, 150)]
        assert robot.replay is None
    recorder.stop()
    (recording,) = tmp_path.glob("*.mcap")
    replay = bridges("smr", "--replay", str(recording), simulate=False)
    with flockbridge.connect(replay.address) as robot:
        assert robot.replay is not None and robot.replay.file == recording.name and robot.replay.speed == 1.0
        assert robot.family == "smr" and "drive" in robot.capabilities
        # The run's readings, as they came then.
        for reading in got:
            again = robot.wait_for(at_least(reading.seq), timeout=10)
            assert again.seq == reading.seq and again.ts == reading.ts and again.pose.x_mm == reading.pose.x_mm
        # A program that drives runs on: the replay answers, sends nothing,
        # and the client says so once, as a warning.
        with pytest.warns(flockbridge.ReplayWarning, match="not sent: this bridge replays a recording") as said:
            robot.drive(100)
            robot.drive(200)
        assert len(said) == 1
        assert said[0].filename == __file__  # the program's own line, not the client's
        robot.stop()  # a recording has stopped already: answered ok


def test_split_address() -> None:
    assert flockbridge.split_address("flockbot-07.local") == ("flockbot-07.local", 2006)
    assert flockbridge.split_address("10.0.3.7:3000") == ("10.0.3.7", 3000)
    assert flockbridge.split_address("[fe80::1]:2007") == ("fe80::1", 2007)
    assert flockbridge.split_address("fe80::1") == ("fe80::1", 2006)
    assert flockbridge.split_address("host", 9) == ("host", 9)

