"""Finding robots: by mDNS (zeroconf), from the class hub, from avahi-browse."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Callable, Dict, Iterator, List

import pytest

import flockbridge
from conftest import Bridge, client_env, free_port, running_mosquitto
from flockbridge.discover import parse_avahi_browse


@pytest.fixture
def broker() -> Iterator[int]:
    """A real mosquitto on 127.0.0.1, anonymous, for the hub test; its port."""
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="flockbridge-py-mqtt-") as folder:
        config = Path(folder) / "mosquitto.conf"
        config.write_text(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n")
        with running_mosquitto(config, port):
            yield port


def list_hub(hub: Bridge) -> "subprocess.CompletedProcess[str]":
    """python3 -m flockbridge list --hub, as a person runs it."""
    return subprocess.run(
        [sys.executable, "-m", "flockbridge", "list", "--hub", hub.address],
        capture_output=True,
        text=True,
        timeout=30,
        env=client_env(),
    )


def test_the_class_hub_lists_the_robots_on_its_broker(bridges: Callable[..., Bridge], broker: int) -> None:
    mqtt = ["--mqtt", "--mqtt-host", "127.0.0.1", "--mqtt-port", str(broker)]
    robot = bridges("smr", *mqtt, "--robot-name", "smr-py", "--mqtt-telemetry-hz", "10")
    hub = bridges("none", "--hub", *mqtt, "--robot-name", "hub-py")
    robot.wait_link_up()

    found: List[flockbridge.Announcement] = []
    deadline = time.monotonic() + 15
    while not found and time.monotonic() < deadline:
        # The hub hears of a robot when the broker hands it the robot's status.
        # Its telemetry too: a battery to show.
        found = [
            a
            for a in flockbridge.discover(hub=hub.address, timeout=5)
            if a.name == "smr-py" and (a.details.get("telemetry") or {}).get("battery_v")
        ]
    assert found, "the hub never listed smr-py"
    smr = found[0]
    assert smr.family == "smr" and smr.model == "smr" and smr.online
    assert smr.port == robot.json_port and smr.native_port == robot.native_port
    assert smr.http_port == robot.http_port and smr.dashboard.endswith(f":{robot.http_port}/")
    assert smr.version
    with flockbridge.connect(smr.address) as connected:
        assert connected.family == "smr"

    listing = list_hub(hub)
    assert listing.returncode == 0, listing.stderr
    header, *rows = listing.stdout.splitlines()
    assert header.split()[:4] == ["ROBOT", "FAMILY", "MODEL", "STATE"]
    assert any(row.split()[:4] == ["smr-py", "smr", "smr", "online"] for row in rows), listing.stdout
    assert "12.4 V" in listing.stdout

    # The robot's bridge stops: the hub keeps it, offline, and its last battery is not shown as if live.
    robot.stop()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        gone = [a for a in flockbridge.discover(hub=hub.address, timeout=5) if a.name == "smr-py" and not a.online]
        if gone:
            break
    assert gone, "the hub never saw smr-py go offline"
    listing = list_hub(hub)
    row = next(row for row in listing.stdout.splitlines() if row.startswith("smr-py"))
    assert row.split()[3] == "offline" and row.split()[6:8] == ["ago", "-"], row  # "offline 2 s ago  -  ..."
    assert "12.4" not in row, row

    # Asking a bridge that is not the hub says so.
    with pytest.raises(flockbridge.FlockbridgeError):
        flockbridge.discover(hub=robot.address, timeout=1)


def read_service_file(path: Path) -> Dict[str, object]:
    """The _flockbridge._tcp service of an Avahi service file: name, port, TXT."""
    root = ElementTree.parse(path).getroot()
    name = root.findtext("name") or ""
    for service in root.iter("service"):
        if service.findtext("type") == "_flockbridge._tcp":
            txt = dict(str(record.text).split("=", 1) for record in service.iter("txt-record"))
            return {"name": name, "port": int(service.findtext("port") or 0), "txt": txt}
    raise AssertionError(f"no _flockbridge._tcp service in {path}")


def test_zeroconf_finds_the_robot_as_the_bridge_announces_it(bridges: Callable[..., Bridge], tmp_path: Path) -> None:
    zeroconf = pytest.importorskip("zeroconf")  # Debian: python3-zeroconf, which scripts/test.sh installs
    service_file = tmp_path / "flockbridge.service"
    service_file.write_text("")  # the package installs it; the bridge fills it in
    name = f"smr-{uuid.uuid4().hex[:8]}"
    robot = bridges("smr", "--robot-name", name, "--mdns-service-file", str(service_file))
    robot.wait_log("mDNS: announced")
    robot.wait_link_up()
    announced = read_service_file(service_file)
    txt = announced["txt"]
    assert isinstance(txt, dict)
    assert txt["robot"] == name and txt["family"] == "smr" and txt["json"] == str(robot.json_port)

    # avahi-daemon's part: the service file, announced by mDNS.
    service_type = "_flockbridge._tcp.local."
    info = zeroconf.ServiceInfo(
        service_type,
        f"{announced['name']}.{service_type}",
        addresses=[socket.inet_aton("127.0.0.1")],
        port=int(str(announced["port"])),
        properties=txt,
        server=f"{name}.local.",
    )
    announcer = zeroconf.Zeroconf()
    try:
        announcer.register_service(info)
        found = [a for a in flockbridge.discover(timeout=2, method="zeroconf") if a.name == name]
    finally:
        announcer.unregister_service(info)
        announcer.close()
    assert len(found) == 1, "zeroconf did not find the announced robot"
    smr = found[0]
    assert (smr.family, smr.model, smr.port, smr.native_port) == ("smr", "smr", robot.json_port, robot.native_port)
    assert smr.http_port == robot.http_port and not smr.hub
    with flockbridge.connect(smr.address) as connected:
        assert connected.family == "smr"


AVAHI_BROWSE = r"""+;eth0;IPv4;flockbot-07\032\040flockbot\041;_flockbridge._tcp;local
+;eth0;IPv6;flockbot-07\032\040flockbot\041;_flockbridge._tcp;local
=;eth0;IPv6;flockbot-07\032\040flockbot\041;_flockbridge._tcp;local;flockbot-07.local;fe80::2;2006;"version=0.9.0" "native=2005" "model=flockbot" "family=flockbot" "http=8080" "json=2006" "robot=flockbot-07" "txtvers=1"
=;eth0;IPv4;flockbot-07\032\040flockbot\041;_flockbridge._tcp;local;flockbot-07.local;10.0.3.7;2006;"version=0.9.0" "native=2005" "model=flockbot" "family=flockbot" "http=8080" "json=2006" "robot=flockbot-07" "txtvers=1"
=;eth0;IPv4;teacher\032\040class\032hub\041;_flockbridge._tcp;local;teacher.local;10.0.3.2;2006;"version=0.9.0" "hub=1" "http=8080" "json=2006" "robot=teacher" "txtvers=1"
=;eth0;IPv4;odd;_flockbridge._tcp;local;odd.local;10.0.3.9;3000;"json=x"
"""


def test_avahi_browse_output_is_read() -> None:
    robots = parse_avahi_browse(AVAHI_BROWSE)
    assert [r.name for r in robots] == ["flockbot-07", "odd", "teacher"]
    flockbot, odd, teacher = robots
    assert flockbot.host == "10.0.3.7"  # IPv4 before a link-local IPv6 address
    assert flockbot.address == "10.0.3.7:2006" and flockbot.native_port == 2005
    assert flockbot.dashboard == "http://10.0.3.7:8080/"
    assert teacher.hub and teacher.family == "" and teacher.dashboard == "http://10.0.3.2:8080/fleet/"
    assert odd.port == 3000  # a TXT port that is not a number: the service's own


def test_discover_without_any_way_says_how_to_get_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FLOCKBRIDGE_HUB", raising=False)
    with pytest.raises(ValueError):
        flockbridge.discover(method="carrier-pigeon")
    with pytest.raises(flockbridge.FlockbridgeError, match="needs hub"):
        flockbridge.discover(method="hub")
