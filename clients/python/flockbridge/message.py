"""A message from the bridge, with its fields as attributes."""

from __future__ import annotations

import json
from typing import Any, Dict, Iterator, List, Mapping


def _wrap(value: Any) -> Any:
    if isinstance(value, dict):
        return Message(value)
    if isinstance(value, list):
        return [_wrap(item) for item in value]
    return value


class Message(Mapping[str, Any]):
    """One JSON object from the bridge: a sensor reading, a link change, ...

    Fields are attributes (`reading.battery_v`, `reading.pose.x_mm`) and
    keys (`reading["ir"]`); nested objects are Messages too. A field this
    robot does not report raises AttributeError naming the fields it has,
    and `reading.get("battery_v")` gives None instead. Fields a newer bridge
    adds simply appear.
    """

    __slots__ = ("_fields",)

    def __init__(self, fields: Mapping[str, Any]) -> None:
        object.__setattr__(self, "_fields", {key: _wrap(value) for key, value in fields.items()})

    def __getattr__(self, name: str) -> Any:
        fields: Dict[str, Any] = object.__getattribute__(self, "_fields")
        try:
            return fields[name]
        except KeyError:
            known = ", ".join(sorted(fields)) or "none"
            raise AttributeError(f"this message has no field {name!r} (it has: {known})") from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a message from the bridge cannot be changed")

    def __getitem__(self, key: str) -> Any:
        fields: Dict[str, Any] = self._fields
        return fields[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._fields)

    def __len__(self) -> int:
        return len(self._fields)

    def __dir__(self) -> List[str]:
        return sorted(self._fields)

    def __repr__(self) -> str:
        return f"Message({json.dumps(self.to_dict(), separators=(',', ':'))})"

    def to_dict(self) -> Dict[str, Any]:
        """The message as plain dicts and lists, as the bridge sent it."""

        def plain(value: Any) -> Any:
            if isinstance(value, Message):
                return value.to_dict()
            if isinstance(value, list):
                return [plain(item) for item in value]
            return value

        return {key: plain(value) for key, value in self._fields.items()}
