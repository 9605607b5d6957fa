"""Finding robots on the classroom's network without typing addresses.

Each bridge announces itself by mDNS as `_flockbridge._tcp` (docs/fleet.md);
the class hub knows every robot on the fleet's broker. discover() asks
whichever it can: the zeroconf package when it is installed, else Avahi's
avahi-browse, else the hub.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from .errors import FlockbridgeError
from .connection import DEFAULT_PORT
from .robot import Robot

SERVICE_TYPE = "_flockbridge._tcp"


@dataclass(frozen=True)
class Announcement:
    """A robot on the network: where its bridge is and what it is.

    `flockbridge.connect(a.address)` connects to it.
    """

    name: str
    """The robot's name (its host name unless the bridge names it)."""
    host: str
    """An address or host name of the robot's bridge."""
    port: int = DEFAULT_PORT
    """The bridge's JSON port."""
    family: str = ""
    model: str = ""
    native_port: int = 0
    """The port of the robot family's original programs (2005, 8101, 24901)."""
    http_port: int = 0
    online: bool = True
    """False for a robot the hub saw go offline."""
    hub: bool = False
    """True for the class hub itself."""
    version: str = ""
    details: Dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    """Everything the announcement carried (TXT records, or the hub's status and telemetry)."""

    @property
    def address(self) -> str:
        """"host:port" of the JSON port, for connect()."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    @property
    def dashboard(self) -> str:
        """The robot's web page ("" when it has none)."""
        if not self.http_port:
            return ""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.http_port}/" + ("fleet/" if self.hub and not self.family else "")


def discover(timeout: float = 3.0, *, hub: Optional[str] = None, method: Optional[str] = None) -> List[Announcement]:
    """The robots on the network, sorted by name.

    `hub` ("teacher-laptop.local" or "host:port") asks that class hub for
    the robots on its broker, offline ones included. Without it: mDNS, by
    the zeroconf package if it is installed or else avahi-browse, and the
    hub named by the environment variable FLOCKBRIDGE_HUB if neither is
    there (or with method="hub"). `method` ("zeroconf", "avahi", "hub") forces one. mDNS listens
    for `timeout` seconds.
    """
    if method is None:
        method = "hub" if hub else "zeroconf" if _have_zeroconf() else "avahi" if _have_avahi() else ""
    if method in ("hub", "") and not hub:
        hub = os.environ.get("FLOCKBRIDGE_HUB")
        method = "hub" if hub else method
    chosen = method
    if chosen == "hub":
        if not hub:
            raise FlockbridgeError("discover(method='hub') needs hub='host' (or FLOCKBRIDGE_HUB)")
        return from_hub(hub, timeout)
    if chosen == "zeroconf":
        return _by_zeroconf(timeout)
    if chosen == "avahi":
        return _by_avahi(timeout)
    if chosen:
        raise ValueError(f"discover: no method {chosen!r} (zeroconf, avahi, hub)")
    raise FlockbridgeError(
        "cannot look for robots: install python3-zeroconf (or avahi-utils), or name the class hub: "
        "discover(hub='teacher-laptop.local') or FLOCKBRIDGE_HUB=teacher-laptop.local"
    )


def from_hub(hub: str, timeout: float = 3.0) -> List[Announcement]:
    """The robots the class hub follows on the fleet's broker."""
    with Robot(hub, timeout=timeout, reconnect_s=0) as station:
        got = threading.Event()
        station.on("fleet", lambda message: got.set())
        station.command("fleet")
        if not got.wait(timeout):
            raise FlockbridgeError(f"{hub} sent no fleet list: is it the class hub (flockbridge --hub)?")
        fleet = station.last("fleet")
    robots = [] if fleet is None else fleet.to_dict().get("robots", [])
    return sorted((_from_status(robot) for robot in robots if isinstance(robot, dict)), key=lambda a: a.name)


def _from_status(robot: Dict[str, Any]) -> Announcement:
    status: Dict[str, Any] = robot.get("status") or {}
    ports: Dict[str, Any] = status.get("ports") or {}
    addresses = [a for a in status.get("addresses") or [] if isinstance(a, str)]
    # An IPv4 address first: a link-local IPv6 one needs its interface.
    addresses.sort(key=lambda a: (":" in a, a))
    return Announcement(
        name=str(robot.get("robot", "")),
        host=addresses[0] if addresses else str(robot.get("robot", "")),
        port=int(ports.get("json") or DEFAULT_PORT),
        family=str(status.get("family", "")),
        model=str(status.get("model", "")),
        native_port=int(ports.get("native") or 0),
        http_port=int(ports.get("http") or 0),
        online=bool(robot.get("online", False)),
        version=str(status.get("version", "")),
        details=robot,
    )


def _from_txt(name: str, host: str, port: int, txt: Dict[str, str]) -> Announcement:
    def number(key: str) -> int:
        try:
            return int(txt.get(key, "0"))
        except ValueError:
            return 0

    return Announcement(
        name=txt.get("robot") or name,
        host=host,
        port=number("json") or port,
        family=txt.get("family", ""),
        model=txt.get("model", ""),
        native_port=number("native"),
        http_port=number("http"),
        hub=txt.get("hub") == "1",
        version=txt.get("version", ""),
        details=dict(txt),
    )


def _have_zeroconf() -> bool:
    try:
        import zeroconf  # noqa: F401
    except ImportError:
        return False
    return True


def _have_avahi() -> bool:
    return shutil.which("avahi-browse") is not None


def _by_zeroconf(timeout: float) -> List[Announcement]:
    try:
        from zeroconf import ServiceBrowser, ServiceListener, Zeroconf
    except ImportError:
        raise FlockbridgeError("the zeroconf package is not installed (Debian: python3-zeroconf)") from None

    full_type = SERVICE_TYPE + ".local."
    found: Dict[str, Tuple[str, int, Dict[str, str]]] = {}
    lock = threading.Lock()

    class Listener(ServiceListener):
        def add_service(self, zc: Any, type_: str, name: str) -> None:
            info = zc.get_service_info(type_, name, timeout=int(timeout * 1000))
            if info is None:
                return
            addresses = sorted(info.parsed_addresses(), key=lambda a: (":" in a, a))
            txt = {
                k.decode(errors="replace"): (v or b"").decode(errors="replace")
                for k, v in (info.properties or {}).items()
            }
            label = name[: -len(full_type) - 1] if name.endswith("." + full_type) else name
            with lock:
                found[name] = (addresses[0] if addresses else info.server, int(info.port), {**txt, "_label": label})

        def update_service(self, zc: Any, type_: str, name: str) -> None:
            self.add_service(zc, type_, name)

        def remove_service(self, zc: Any, type_: str, name: str) -> None:
            with lock:
                found.pop(name, None)

    zc = Zeroconf()
    try:
        ServiceBrowser(zc, full_type, Listener())
        time.sleep(timeout)
    finally:
        zc.close()
    with lock:
        entries = list(found.values())
    return sorted((_from_txt(txt.pop("_label"), host, port, txt) for host, port, txt in entries), key=lambda a: a.name)


def _by_avahi(timeout: float) -> List[Announcement]:
    # -p: parsable, -r: resolve, -t: stop after the cache is dumped.
    try:
        done = subprocess.run(
            ["avahi-browse", "-prt", SERVICE_TYPE], capture_output=True, text=True, timeout=max(timeout, 1.0) + 5
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        raise FlockbridgeError(f"avahi-browse failed: {e}") from None
    if done.returncode != 0:
        raise FlockbridgeError(f"avahi-browse failed: {done.stderr.strip() or done.returncode} (is avahi-daemon running?)")
    return parse_avahi_browse(done.stdout)


def parse_avahi_browse(output: str) -> List[Announcement]:
    """The robots in `avahi-browse -prt _flockbridge._tcp` output."""
    found: Dict[str, Announcement] = {}
    for line in output.splitlines():
        fields = line.split(";")
        # =;eth0;IPv4;flockbot-07\032(flockbot);_flockbridge._tcp;local;flockbot-07.local;10.0.3.7;2006;"robot=..." ...
        if len(fields) < 10 or fields[0] != "=":
            continue
        label, host, port = _unescape(fields[3]), fields[7], int(fields[8] or 0)
        txt: Dict[str, str] = {}
        for record in _txt_records(";".join(fields[9:])):
            key, _, value = record.partition("=")
            txt[key] = value
        announcement = _from_txt(label, host, port, txt)
        if announcement.name not in found or ":" in found[announcement.name].host:
            found[announcement.name] = announcement
    return sorted(found.values(), key=lambda a: a.name)


def _unescape(label: str) -> str:
    # avahi-browse -p writes a label's special characters as \DDD (decimal).
    out, i = "", 0
    while i < len(label):
        if label[i] == "\\" and label[i + 1 : i + 4].isdigit():
            out += chr(int(label[i + 1 : i + 4]))
            i += 4
        else:
            out += label[i]
            i += 1
    return out


def _txt_records(text: str) -> List[str]:
    records, current, quoted = [], "", False
    for ch in text:
        if ch == '"':
            if quoted:
                records.append(current)
                current = ""
            quoted = not quoted
        elif quoted:
            current += ch
    return records
