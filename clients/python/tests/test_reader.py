"""The reader against a bridge of tomorrow: messages and fields this client
does not know, lines that are not JSON, a line too long to keep.

A small stand-in bridge on 127.0.0.1 plays the part: the real daemon sends
none of these (yet), which is the point.
"""

from __future__ import annotations

import json
import socket
import threading
from typing import Any, Dict, Iterator, List

import pytest

import flockbridge

HELLO = {
    "type": "hello",
    "version": 2,
    "session": "0123456789abcdef",
    "robot": "rover",
    "model": "rover-mk2",
    "link": "up",
    "client": 7,
    "role": "driver",
    "capabilities": ["drive", "stop", "emergency", "dig"],
    "weather": {"sky": "clear"},
}


class StandIn:
    """Accepts one client, says hello, then plays `script` and answers commands."""

    def __init__(self, script: List[bytes]) -> None:
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(1)
        self.port = int(self.server.getsockname()[1])
        self.script = script
        self.commands: List[Dict[str, Any]] = []
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        conn, _ = self.server.accept()
        with conn:
            conn.sendall(json.dumps(HELLO).encode() + b"\n")
            for chunk in self.script:
                conn.sendall(chunk)
            buffer = b""
            while True:
                data = conn.recv(4096)
                if not data:
                    return
                buffer += data
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    command = json.loads(line)
                    self.commands.append(command)
                    # Answers carry fields this client has never heard of.
                    answer = {"type": "ok", "id": command["id"], "cost": 3, "trace": [1, 2]}
                    if command["cmd"] == "dig":
                        answer = {"type": "error", "id": command["id"], "error": "dig: no sand here", "code": "ground"}
                    conn.sendall(b'{"type":"progress","id":%d,"percent":50}\n' % command["id"])
                    conn.sendall(json.dumps(answer).encode() + b"\n")

    def close(self) -> None:
        self.server.close()


@pytest.fixture
def tomorrow() -> Iterator[StandIn]:
    sensor = {"type": "sensor", "seq": 1, "ts": 1.0, "v_mm_s": 0.0, "w_deg_s": 0.0, "lidar": {"ranges": [1.5, 2.5]}}
    later = dict(sensor, seq=2, mood="curious")
    script = [
        b'{"type":"aurora","intensity":9}\n',  # a message type from a later bridge
        b"not json at all\n",
        b"[1,2,3]\n",  # JSON, but not an object
        b'"a string"\n',
        b"\n",  # empty lines are nothing
        b'{"type":"sensor","seq":0,' + b"x" * (1 << 21) + b"\n",  # a runaway line, longer than any message
        json.dumps(sensor).encode()[:20],  # a message in two pieces
        json.dumps(sensor).encode()[20:] + b"\r\n",
        json.dumps(later).encode() + b"\n",
        b'{"type":"link","state":"up","since":5,"quality":0.9}\n',
    ]
    stand_in = StandIn(script)
    yield stand_in
    stand_in.close()


def test_unknown_messages_and_fields_are_kept_and_ignored(tomorrow: StandIn) -> None:
    robot = flockbridge.Robot(f"127.0.0.1:{tomorrow.port}", reconnect_s=0)
    seen: List[str] = []
    robot.on("*", lambda m: seen.append(str(m.type)))
    with robot:
        assert robot.family == "rover" and robot.model == "rover-mk2"
        assert "dig" in robot.capabilities
        reading = robot.wait_for(lambda s: s.seq == 2, timeout=5)
        assert reading.mood == "curious"  # a future field is just an attribute
        assert reading.lidar.ranges == [1.5, 2.5]
        assert robot.last("aurora").intensity == 9  # type: ignore[union-attr]
        assert robot.link == "up"
        # not JSON, not an object, and the runaway line: counted, skipped
        assert robot.ignored_lines == 4
        # Answers with fields of their own, after a message of a kind unknown here.
        answer = robot.command("stats")
        assert answer.type == "ok" and answer.cost == 3
        robot.drive(100, 5)
        assert tomorrow.commands[-1] == {"cmd": "drive", "v_mm_s": 100, "w_deg_s": 5, "id": tomorrow.commands[-1]["id"]}
        # A new error code is still an error, with the bridge's words.
        with pytest.raises(flockbridge.CommandFailed, match="no sand here") as failed:
            robot.dig(depth_cm=3)
        assert failed.value.code == "ground"
        assert robot.connected
    assert "progress" in seen  # a message of a kind unknown here, with the id of a command
    # close() stopped the robot it had driven
    assert tomorrow.commands[-1]["cmd"] == "stop"


def test_a_silent_port_is_not_a_bridge() -> None:
    with socket.socket() as quiet:
        quiet.bind(("127.0.0.1", 0))
        quiet.listen(1)
        port = int(quiet.getsockname()[1])
        with pytest.raises(flockbridge.ConnectionLost, match="no hello"):
            flockbridge.connect(f"127.0.0.1:{port}", timeout=0.5)


def test_the_channel_alone_signs_in_reads_and_says_when_it_gives_up() -> None:
    """The connection kept open (channel.py) without the Robot: what it tells,
    in order, from the hello to giving up on a bridge that has gone."""
    from flockbridge.channel import Channel, ChannelEvents

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = int(server.getsockname()[1])
    gone = threading.Event()

    def serve() -> None:
        conn, _ = server.accept()
        with conn:
            conn.sendall(json.dumps(HELLO).encode() + b"\n")
            request = json.loads(conn.makefile().readline())
            conn.sendall(b'{"type":"link","state":"up"}\n')  # before the answer: handed on as it comes
            conn.sendall(json.dumps({"type": "ok", "id": request["id"], "role": "teacher"}).encode() + b"\n")
            gone.wait(5)
        server.close()

    threading.Thread(target=serve, daemon=True).start()
    told: List[str] = []
    ended = threading.Event()
    ids = iter(range(1, 100))

    def gave_up(why: str) -> None:
        told.append("gave up: " + why.split(";")[1].strip()[:16])
        ended.set()

    channel = Channel(
        "127.0.0.1",
        port,
        timeout=5,
        reconnect_s=0,
        sign_in=lambda: [{"cmd": "auth", "teacher": "secret"}],
        next_id=lambda: next(ids),
        events=ChannelEvents(
            message=lambda m: told.append("message " + str(m["type"])),
            signed_in=lambda role: told.append("signed in as " + role),
            opened=lambda: told.append("opened"),
            lost=lambda why: told.append("lost"),
            back=lambda restarted: told.append("back"),
            gave_up=gave_up,
        ),
    )
    try:
        assert told == ["message hello", "message link", "signed in as teacher", "opened"]
        gone.set()  # the bridge goes, and nothing listens any more
        assert ended.wait(5)
        assert told[4:] == ["lost", "gave up: no bridge at 127"]
    finally:
        channel.close()
