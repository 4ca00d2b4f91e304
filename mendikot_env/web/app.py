"""The ASGI app of ``mendikot serve``: the page, its static files and a small JSON API.

Routes (every answer JSON; a refusal is ``{"detail": message}`` with a 4xx status):

* ``GET /``: the page; ``/static/...``: its script and style.
* ``GET /api/options``: the presets, the rule fields' choices and the agent names.
* ``POST /api/games``: a new table from settings; answers the game id, your seat, its token
  and the link of every person seat.
* ``GET /api/games/{id}?seat=&token=``: what that seat sees; ``POST .../act`` with
  ``{"seat", "token", "action"}`` plays a card (or ``"ASK"``); ``POST .../next`` deals the next
  hand; ``POST .../hint`` answers the search's value of each legal move;
  ``GET .../records/{hand}?seat=&token=`` a finished hand's record.
* ``POST /api/replays`` with ``{"records": [{"name", "data"}, ...]}``: a replay session;
  ``GET /api/replays/{id}?record=&step=&seat=`` a step seen by every seat or one;
  ``GET /api/replays/{id}/search?record=&step=&seat=`` the search's move values there.

The game work runs in a worker thread (an agent may think for a while) under the table's
lock, so tables are independent and the server keeps answering.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from agents import AGENT_NAMES

from ..rules import PRESETS, RULE_CHOICES, Rules
from .replays import Replays
from .tables import PERSON, Refused, Table, Tables, parse_action
from .views import seat_view

STATIC = Path(__file__).parent / "static"
MAX_BODY = 4_000_000  # bytes: a folder of a few hundred records


async def _body(request: Request) -> dict[str, Any]:
    """The request's JSON object, or a 4xx saying what is wrong with it.

    Only ``application/json`` is read: another site's page can send a form or text to this
    server without the browser asking first, but JSON only after a check this server never
    answers (no CORS headers), so no other page can play or start tables here.
    """
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise Refused(415, f"send the body as JSON (Content-Type: application/json), not {kind or 'no type'}")
    raw = await request.body()
    if len(raw) > MAX_BODY:
        raise Refused(413, f"the request is larger than {MAX_BODY} bytes")
    try:
        value = json.loads(raw or b"{}")
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise Refused(400, f"the request body is not valid JSON: {error}") from None
    if not isinstance(value, dict):
        raise Refused(400, f"the request body must be a JSON object, got {type(value).__name__}")
    return value


def _refused(request: Request, error: Exception) -> Response:
    assert isinstance(error, Refused)
    return JSONResponse({"detail": error.message}, status_code=error.status)


def answer(handler: Callable[[Request], Awaitable[Any]]) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        return JSONResponse(await handler(request))

    return endpoint


async def seated(request: Request, body: dict[str, Any] | None = None) -> tuple[Table, int]:
    given = request.query_params if body is None else body
    table = request.app.state.tables.get(request.path_params["game"])
    return table, table.check_seat(given.get("seat"), given.get("token"))


async def options(request: Request) -> dict[str, Any]:
    return {
        "presets": {name: Rules.preset(name).to_dict() for name in PRESETS},
        "choices": {name: list(values) for name, values in RULE_CHOICES.items()},
        "agents": [*AGENT_NAMES, PERSON],
    }


async def create(request: Request) -> dict[str, Any]:
    body = await _body(request)
    local = request.client is None or request.client.host in ("127.0.0.1", "::1")
    table, seat = await run_in_threadpool(request.app.state.tables.create, body, local)
    return {"game": table.id, "seat": seat, "token": table.tokens[seat], "links": table.links()}


async def show(request: Request) -> dict[str, Any]:
    table, seat = await seated(request)
    return await run_in_threadpool(_locked, table, seat, lambda: None)


async def act(request: Request) -> dict[str, Any]:
    body = await _body(request)
    table, seat = await seated(request, body)
    action = parse_action(body.get("action"))
    if action < 0:
        raise Refused(400, f"action must be a card such as 'TS' or 'ASK', got {body.get('action')!r}")
    return await run_in_threadpool(_locked, table, seat, lambda: table.act(seat, action))


async def next_hand(request: Request) -> dict[str, Any]:
    table, seat = await seated(request, await _body(request))
    return await run_in_threadpool(_locked, table, seat, table.next_hand)


async def hint(request: Request) -> dict[str, Any]:
    table, seat = await seated(request, await _body(request))
    return {"values": await run_in_threadpool(_under_lock, table, lambda: table.hint(seat))}


async def record(request: Request) -> dict[str, Any]:
    table, _ = await seated(request)
    return await run_in_threadpool(_under_lock, table, lambda: table.record(int(request.path_params["hand"])))


async def new_replay(request: Request) -> dict[str, Any]:
    body = await _body(request)
    given = body.get("records")
    if not isinstance(given, list) or not all(isinstance(item, dict) for item in given):
        raise Refused(400, 'records must be a list of {"name": ..., "data": <a record>}')
    named = [(str(item.get("name", f"record {i}")), item.get("data")) for i, item in enumerate(given)]
    session = await run_in_threadpool(request.app.state.replays.create, named)
    return {"replay": session.id, "records": session.names}


async def replay_view(request: Request) -> dict[str, Any]:
    session = request.app.state.replays.get(request.path_params["replay"])
    q = request.query_params
    k, step, seat = session.where(q.get("record", 0), q.get("step", 0), q.get("seat"))
    return await run_in_threadpool(session.view, k, step, seat)


async def replay_search(request: Request) -> dict[str, Any]:
    session = request.app.state.replays.get(request.path_params["replay"])
    q = request.query_params
    k, step, seat = session.where(q.get("record", 0), q.get("step", 0), q.get("seat", ""))
    if seat is None:
        raise Refused(400, "the search's values are for one seat: give seat=")
    return {"values": await run_in_threadpool(session.search_values, k, step, seat)}


async def index(request: Request) -> Response:
    return FileResponse(STATIC / "index.html")


def create_app(
    save_dir: Path | None = None, replay_paths: list[str] | None = None, allowed_hosts: list[str] | None = None
) -> Starlette:
    """The app; ``save_dir`` keeps every finished hand's record, ``replay_paths`` are
    records (files or folders) opened as a replay at start (``app.state.first_replay``);
    ``allowed_hosts``: the host names a request may name (None: any), so that a server bound
    to this machine does not answer a page whose site's name was rebound to 127.0.0.1."""
    tables, replays = Tables(save_dir), Replays()
    app = Starlette(
        routes=[
            Route("/", index),
            Route("/favicon.ico", lambda request: Response(status_code=204)),
            Mount("/static", StaticFiles(directory=STATIC), name="static"),
            Route("/api/options", answer(options)),
            Route("/api/games", answer(create), methods=["POST"]),
            Route("/api/games/{game}", answer(show)),
            Route("/api/games/{game}/act", answer(act), methods=["POST"]),
            Route("/api/games/{game}/next", answer(next_hand), methods=["POST"]),
            Route("/api/games/{game}/hint", answer(hint), methods=["POST"]),
            Route("/api/games/{game}/records/{hand:int}", answer(record)),
            Route("/api/replays", answer(new_replay), methods=["POST"]),
            Route("/api/replays/{replay}", answer(replay_view)),
            Route("/api/replays/{replay}/search", answer(replay_search)),
        ],
        exception_handlers={Refused: _refused},
        middleware=[] if allowed_hosts is None else [Middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts)],
    )
    app.state.tables, app.state.replays = tables, replays
    app.state.first_replay = replays.create(_read_paths(replay_paths)).id if replay_paths else None
    return app


def _locked(table: Table, seat: int, change: Callable[[], None]) -> dict[str, Any]:
    """Make a change to the table under its lock and answer the seat's new view."""
    with table.lock:
        change()
        return seat_view(table, seat)


def _under_lock(table: Table, work: Callable[[], Any]) -> Any:
    with table.lock:
        return work()


def _read_paths(paths: list[str]) -> list[tuple[str, Any]]:
    from ..commands.replay import read_records  # files and folders as ``mendikot replay`` reads them

    return read_records(paths)
