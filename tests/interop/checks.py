"""What the interop scripts (sdk_client.py, eras.py) check with: a failed
check is a CheckFailed naming what was expected and, cut short, what came."""

from __future__ import annotations

import json
from typing import Any


class CheckFailed(Exception):
    pass


def check(condition: bool, what: str, got: Any = None) -> None:
    if not condition:
        detail = "" if got is None else f"\n    got: {json.dumps(got, default=str)[:2000]}"
        raise CheckFailed(f"{what}{detail}")
