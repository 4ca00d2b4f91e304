"""How fast the web table answers: ``mendikot bench --web``.

Whole hands are played through the API with the ASGI test client (no network, so the
figures are the server's own work), one seat a person and the others ``hard``; the hand's
record is then stepped through in the replay, with every hand shown and with one seat's
belief. Each kind of request is timed separately.
"""

from __future__ import annotations

import time
import warnings
from typing import Any

from ..rules import Rules
from .app import create_app

KINDS = {
    "view": "a seat's view",
    "act": "a played card, with three hard agents' moves after it",
    "replay": "a replay step, every hand shown",
    "belief": "a replay step seen by one seat, with its belief",
}


def answer_times(rules: Rules, hands: int = 2, seed: int = 12) -> dict[str, list[float]]:
    """Seconds taken by each answer of ``hands`` whole hands, by kind of request (:data:`KINDS`)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # starlette 1.x asks for httpx2 in place of httpx; both work
        from starlette.testclient import TestClient

    client = TestClient(create_app())
    took: dict[str, list[float]] = {kind: [] for kind in KINDS}

    def timed(kind: str, method: str, url: str, **options: Any) -> dict[str, Any]:
        start = time.perf_counter()
        answer = client.request(method, url, **options)
        took[kind].append(time.perf_counter() - start)
        return answer.json()

    for hand in range(hands):
        made = client.post("/api/games", json={"rules": {"preset": "standard", **rules.to_dict()}, "seed": seed + hand})
        made = made.json()
        game, who = made["game"], {"seat": made["seat"], "token": made["token"]}
        v = timed("view", "GET", f"/api/games/{game}", params=who)
        while v["phase"] != "over":
            v = timed("act", "POST", f"/api/games/{game}/act", json={**who, "action": v["legal"][0]})
            timed("view", "GET", f"/api/games/{game}", params=who)
        record = client.get(f"/api/games/{game}/records/{v['hand_number']}", params=who).json()
        replay = client.post("/api/replays", json={"records": [{"name": "hand", "data": record}]}).json()["replay"]
        for step in range(1, len(record["actions"]) + 1, 2):
            timed("replay", "GET", f"/api/replays/{replay}", params={"step": step})
            timed("belief", "GET", f"/api/replays/{replay}", params={"step": step, "seat": 1})
    return took
