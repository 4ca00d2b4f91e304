"""The web table's API through the ASGI test client: play, friends, replay, refusals, no leaks, speed, memory."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import tracemalloc
import warnings
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

with warnings.catch_warnings():  # starlette 1.x asks for httpx2 in place of httpx; both work
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient  # noqa: E402

from agents.registry import names_files  # noqa: E402
from mendikot_env import core  # noqa: E402
from mendikot_env.cards import SUIT_NAMES, card_str, set_to_cards  # noqa: E402
from mendikot_env.cli import main  # noqa: E402
from mendikot_env.records import replay_record  # noqa: E402
from mendikot_env.rules import PRESETS, Rules  # noqa: E402
from mendikot_env.web.app import create_app  # noqa: E402
from mendikot_env.web.timing import KINDS, answer_times  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
# A face-up card as the project's SVG draws it: the rank's text, then the suit's pip.
DRAWN_CARD = re.compile(r">(10|[2-9JQKA])</text><text [^>]*>([♠♥♦♣])</text>")
SUITS = {"♠": "S", "♥": "H", "♦": "D", "♣": "C"}


@pytest.fixture(scope="module")
def client() -> TestClient:
    with TestClient(create_app()) as test_client:
        yield test_client


def start(client: TestClient, **settings) -> tuple[str, dict]:
    answer = client.post("/api/games", json=settings)
    assert answer.status_code == 200, answer.text
    made = answer.json()
    return made["game"], {"seat": made["seat"], "token": made["token"]}


def view(client: TestClient, game: str, who: dict) -> dict:
    answer = client.get(f"/api/games/{game}", params=who)
    assert answer.status_code == 200, answer.text
    return answer.json()


def choose(v: dict, ask: bool = True) -> str:
    """A simple player: ask for the hidden trump when it may, else the first legal card."""
    return "ASK" if ask and v["can_ask"] else v["legal"][0]


def play_hand(client: TestClient, game: str, who: dict, check=None) -> dict:
    """Play our seat's moves until the hand ends; ``check(view)`` sees every answer."""
    v = view(client, game, who)
    while v["phase"] != "over":
        if check:
            check(v)
        answer = client.post(f"/api/games/{game}/act", json={**who, "action": choose(v)})
        assert answer.status_code == 200, answer.text
        v = answer.json()
    if check:
        check(v)
    return v


def table_of(client: TestClient, game: str):
    return client.app.state.tables.get(game)


def drawn_cards(svg: str) -> set[str]:
    return {("T" if rank == "10" else rank) + SUITS[suit] for rank, suit in DRAWN_CARD.findall(svg)}


def secret_cards(state: core.State, seat: int) -> set[str]:
    """The cards seat ``seat`` may not know now: the other hands (less the band card turned up and
    back in the hider's hand, which all have seen) and a face-down card it did not hide."""
    hidden = {card_str(c) for s in range(state.rules.n_players) if s != seat for c in set_to_cards(state.hands[0, s])}
    hidden.discard(card_str(int(state.known_card[0])) if int(state.known_card[0]) >= 0 else "")
    if int(state.face_down[0]) >= 0 and int(state.hider[0]) != seat:
        hidden.add(card_str(int(state.face_down[0])))
    return hidden


def test_the_page_and_its_files_are_served(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200 and "/static/app.js" in page.text
    for name in ("app.js", "style.css"):
        assert client.get(f"/static/{name}").status_code == 200
    options = client.get("/api/options").json()
    assert set(options["presets"]) == set(PRESETS) and "search" in options["agents"] and "person" in options["agents"]


def test_the_default_game_is_standard_against_hard_and_ready_to_play(client: TestClient) -> None:
    game, who = start(client)
    v = view(client, game, who)
    assert v["rules"]["trump"] == "cut" and v["players"] == ["person", "hard", "hard", "hard"]
    assert v["your_turn"] and v["phase"] == "play" and v["legal"] and len(v["hand"]) == 13 - len(v["trick"]) // 4
    assert v["svg"].startswith("<svg") and set(v["cards"]) == set(v["hand"])


def test_a_band_hand_with_an_ask_matches_the_core_and_its_record_replays(client: TestClient, tmp_path: Path) -> None:
    asked = False
    for seed in range(40):
        game, who = start(client, rules={"preset": "band"}, seed=seed)
        final = play_hand(client, game, who)
        table = table_of(client, game)
        if any(action == 52 and seat == 0 for seat, action in table.entries):
            asked = True
            break
    assert asked, "no deal of 40 let seat 0 ask"
    record = client.get(f"/api/games/{game}/records/1", params=who).json()
    assert replay_record(record).result == final["result"] == core.hand_results(table.state).as_dict(0)
    path = tmp_path / "hand.json"
    path.write_text(json.dumps(record))
    assert main(["replay", "--check", str(path)]) == 0


def person_seats(made: dict) -> dict[int, dict]:
    """Each person seat's seat and token, read from its link."""
    seats = {}
    for seat, query in made["links"].items():
        params = dict(part.split("=") for part in query[1:].split("&"))
        seats[int(seat)] = {"seat": int(params["seat"]), "token": params["token"]}
    return seats


def test_a_seat_is_sent_nothing_it_may_not_know(client: TestClient) -> None:
    """Every answer of whole hands (band hukum: the face-down card too) for every person seat,
    friends' seats included: no other seat's unplayed card, no face-down card the seat did not hide."""
    for seed, players in (
        (1, None),
        (2, ["person", "hard", "person", "hard"]),
        (5, ["hard", "person", "hard", "hard"]),
    ):
        settings = {"rules": {"preset": "band"}, "seed": seed}
        if players:
            settings |= {"players": players, "seat": players.index("person")}
        made = client.post("/api/games", json=settings).json()
        game, seats = made["game"], person_seats(made)
        table = table_of(client, game)
        seen = 0

        def check(v: dict, table=table) -> None:
            nonlocal seen
            secret = secret_cards(table.state, v["seat"])
            text = json.dumps({key: value for key, value in v.items() if key not in ("svg", "cards")})
            assert not {card for card in secret if re.search(rf"\b{card}\b", text)}, "a secret card in the JSON"
            assert not drawn_cards(v["svg"]) & secret, "a secret card drawn face up"
            assert not set(v["cards"]) & secret
            seen += 1

        while True:
            views = [view(client, game, who) for who in seats.values()]
            for v in views:
                check(v)
            if views[0]["phase"] == "over":
                break
            who = seats[views[0]["to_act"]]
            answer = client.post(f"/api/games/{game}/act", json={**who, "action": choose(view(client, game, who))})
            check(answer.json())
        assert seen > 10 * len(seats)


def test_refusals_are_4xx_with_a_message_and_leave_the_game_unchanged(client: TestClient) -> None:
    game, who = start(client, rules={"preset": "band"}, seed=4)
    before = view(client, game, who)
    illegal = next(card for card in ("AS", "2C", "KH", "7D") if card not in before["legal"])
    cases = [
        ("post", f"/api/games/{game}/act", {**who, "action": illegal}, 409, "not a legal move"),
        ("post", f"/api/games/{game}/act", {**who, "action": "XYZ"}, 400, "action must be a card"),
        ("post", f"/api/games/{game}/act", {**who, "action": 12}, 400, "action must be a card"),
        ("post", f"/api/games/{game}/act", {"seat": 0, "token": "nope", "action": "AS"}, 403, "token"),
        ("post", f"/api/games/{game}/act", {"seat": 0, "action": "AS"}, 403, "token"),
        ("post", f"/api/games/{game}/act", {"seat": 1, "token": who["token"], "action": "AS"}, 403, "agent"),
        ("post", f"/api/games/{game}/act", {"seat": 9, "token": who["token"], "action": "AS"}, 400, "seat"),
        ("post", "/api/games/nosuchgame/act", {**who, "action": "AS"}, 404, "no game"),
        ("get", f"/api/games/{game}", {"seat": 0}, 403, "token"),
        ("post", f"/api/games/{game}/next", who, 409, "not over"),
        ("post", "/api/games", {"rules": {"preset": "nope"}}, 400, "preset"),
        ("post", "/api/games", {"rules": {"n_players": 5}}, 400, "rules"),
        ("post", "/api/games", {"partner": "no-such-agent"}, 403, "server's own machine"),
        ("post", "/api/games", {"opponents": "runs/mine"}, 403, "server's own machine"),
        ("post", "/api/games", {"partner": "apprentice:views=24+runs/mine"}, 403, "server's own machine"),
        ("post", "/api/games", {"opponents": "search:k=2,base=runs/mine:views=24"}, 403, "server's own machine"),
        ("post", "/api/games", {"seat": 7}, 400, "seat"),
        (
            "post",
            "/api/replays",
            {"records": [{"name": "bad", "data": {"format": "x"}}]},
            400,
            "bad: record is missing",
        ),
        ("post", "/api/replays", {"records": 3}, 400, "records must be"),
        ("get", "/api/replays/nope", {}, 404, "no replay"),
    ]
    for method, url, body, status, words in cases:
        if method == "get":
            answer = client.get(url, params=body)
        else:
            answer = client.post(url, json=body)
        assert answer.status_code == status and words in answer.json()["detail"], (url, body, answer.text)
    for raw in (b"{not json", b"[1, 2]", b"\xff"):
        answer = client.post(f"/api/games/{game}/act", content=raw, headers={"content-type": "application/json"})
        assert answer.status_code == 400 and "JSON" in answer.json()["detail"]
    # A form or text body is what another site's page can send without the browser asking first.
    for kind in ("text/plain", "application/x-www-form-urlencoded", None):
        raw = json.dumps({**who, "action": before["legal"][0]}).encode()
        answer = client.post(f"/api/games/{game}/act", content=raw, headers={"content-type": kind} if kind else {})
        assert answer.status_code == 415 and "application/json" in answer.json()["detail"]
    after = view(client, game, who)
    assert after["version"] == before["version"] and after["hand"] == before["hand"]
    assert client.post(f"/api/games/{game}/act", json={**who, "action": before["legal"][0]}).status_code == 200


def test_odd_requests_never_break_the_server() -> None:
    """Values of the wrong type anywhere in a request are a 4xx, never a server error."""
    client = TestClient(create_app(), raise_server_exceptions=False)
    game, who = start(client, seed=1)
    odd = [None, [], {}, "x", -1, 1.5, True, [1], {"a": 1}, "0", 10**30]
    for value in odd:
        for body in (
            {"rules": value},
            {"rules": {"preset": value}},
            {"rules": {"n_players": value}},
            {"seat": value},
            {"players": value},
            {"seed": value},
            {"partner": value},
        ):
            assert client.post("/api/games", json=body).status_code < 500, body
        for body in ({**who, "action": value}, {"seat": value, "token": who["token"]}, {**who, "token": value}):
            assert client.post(f"/api/games/{game}/act", json=body).status_code < 500, body
        for body in ({"records": value}, {"records": [{"data": value}]}, {"records": [{"name": value, "data": {}}]}):
            assert client.post("/api/replays", json=body).status_code < 500, body
    assert view(client, game, who)["phase"] == "play"


def test_agents_from_files_are_for_the_servers_own_machine() -> None:
    """A request from the machine itself may name a run folder (here one that does not exist);
    one from elsewhere (the test client's default address) may not, as the refusals test shows."""
    local = TestClient(create_app(), client=("127.0.0.1", 50000))
    answer = local.post("/api/games", json={"opponents": "runs/no-such-run"})
    assert answer.status_code == 400 and "does not exist" in answer.json()["detail"]
    assert local.post("/api/games", json={"opponents": "search:k=8"}).status_code == 200


def test_a_record_that_does_not_replay_is_refused(client: TestClient) -> None:
    game, who = start(client, seed=3)
    play_hand(client, game, who)
    record = client.get(f"/api/games/{game}/records/1", params=who).json()
    record["actions"][5]["action"] = record["actions"][6]["action"]
    answer = client.post("/api/replays", json={"records": [{"name": "edited.json", "data": record}]})
    assert answer.status_code == 400 and answer.json()["detail"].startswith("edited.json")


def test_friends_play_by_their_own_links(client: TestClient) -> None:
    made = client.post("/api/games", json={"players": ["person", "hard", "person", "hard"], "seed": 8}).json()
    assert set(made["links"]) == {"0", "2"}
    seats = person_seats(made)
    assert seats[0]["token"] == made["token"] != seats[2]["token"]
    game = made["game"]
    wrong = client.get(f"/api/games/{game}", params={"seat": 2, "token": seats[0]["token"]})
    assert wrong.status_code == 403
    v = view(client, game, seats[0])
    while v["phase"] != "over":
        who = seats[v["to_act"]]
        answer = client.post(f"/api/games/{game}/act", json={**who, "action": choose(view(client, game, who))})
        assert answer.status_code == 200, answer.text
        v = view(client, game, seats[0])
    assert v["result"] is not None and view(client, game, seats[2])["result"] == v["result"]


@pytest.mark.parametrize("preset", list(PRESETS))
def test_every_preset_plays_a_hand(client: TestClient, preset: str) -> None:
    game, who = start(client, rules={"preset": preset}, seed=11, opponents="medium", partner="easy")
    assert play_hand(client, game, who)["result"]["winner"] in (0, 1, None)


@pytest.mark.parametrize("n_players", [6, 8])
def test_six_and_eight_players(client: TestClient, n_players: int) -> None:
    game, who = start(client, rules={"preset": "band", "n_players": n_players}, seat=3, seed=2, opponents="random")
    final = play_hand(client, game, who)
    assert len(final["names"]) == n_players and sum(final["result"]["tricks"]) == 52 // n_players


def test_a_match_runs_to_the_target_with_the_rules_rotation(client: TestClient) -> None:
    game, who = start(client, rules={"preset": "app", "target": 3}, seed=5)
    hands = 0
    while True:
        final = play_hand(client, game, who)
        hands += 1
        if final["match"]["over"]:
            break
        nxt = client.post(f"/api/games/{game}/next", json=who).json()
        assert nxt["dealer"] == final["result"]["next_dealer"] and nxt["hand_number"] == hands + 1
    assert max(final["match"]["scores"]) >= 3 and final["match"]["winner"] in (0, 1)
    assert client.post(f"/api/games/{game}/next", json=who).json()["match"]["scores"] == [0, 0]


def test_the_hint_values_every_legal_move(client: TestClient) -> None:
    game, who = start(client, seed=6)
    v = view(client, game, who)
    values = client.post(f"/api/games/{game}/hint", json=who).json()["values"]
    assert sorted(row["action"] for row in values) == sorted(v["legal"])
    assert all(-10 < row["value"] < 10 for row in values)


def test_replay_steps_with_a_seats_belief_and_the_search_values(client: TestClient) -> None:
    game, who = start(client, rules={"preset": "band"}, seed=9)
    play_hand(client, game, who)
    record = client.get(f"/api/games/{game}/records/1", params=who).json()
    made = client.post(
        "/api/replays", json={"records": [{"name": "a", "data": record}, {"name": "s", "data": {"win_rate": 0.5}}]}
    )
    replay = made.json()["replay"]
    assert made.json()["records"] == ["a"], "an arena summary beside the records is skipped"
    whole = client.get(f"/api/replays/{replay}", params={"step": 0}).json()
    assert whole["belief"] is None and whole["steps"] == len(record["actions"]) and len(whole["tricks"]) == 13
    assert len(drawn_cards(whole["svg"])) == 52, "every hand and the face-down card, face up"
    turned = [text for text in whole["events"] if "is turned up" in text]
    assert len(turned) == (record["result"]["trump"] is not None), "the log says when the face-down card showed"
    step = whole["tricks"][3] + 1
    mine = client.get(f"/api/replays/{replay}", params={"step": step, "seat": 1}).json()
    belief = mine["belief"]
    for row in belief["cards"]:
        assert abs(sum(row["chances"]) - 1) < 1e-2, row
    if belief["face_down_suits"] is not None:
        assert abs(sum(belief["face_down_suits"].values()) - 1) < 1e-2
    decision = next(
        s
        for s in range(1, whole["steps"])
        if client.get(f"/api/replays/{replay}", params={"step": s, "seat": 2}).json()["decision"]
    )
    values = client.get(f"/api/replays/{replay}/search", params={"step": decision, "seat": 2}).json()["values"]
    assert values and all("action" in row for row in values)
    assert client.get(f"/api/replays/{replay}/search", params={"step": decision, "seat": 3}).status_code == 409


def test_the_replay_log_says_which_card_cut_and_set_trump(client: TestClient) -> None:
    game, who = start(client, seed=4)  # the standard game: trump set by the first cut
    play_hand(client, game, who)
    record = client.get(f"/api/games/{game}/records/1", params=who).json()
    replay = client.post("/api/replays", json={"records": [{"name": "a", "data": record}]}).json()["replay"]
    events = client.get(f"/api/replays/{replay}", params={"step": 0}).json()["events"]
    trump = record["result"]["trump"]
    assert trump is not None, "someone cut in this hand"
    cuts = [text for text in events if "(cuts:" in text]
    assert len(cuts) == 1 and f"(cuts: {SUIT_NAMES[trump]} are trump)" in cuts[0], cuts


def test_the_web_bench_times_every_kind_of_answer(capsys) -> None:
    """``mendikot bench --web`` (speed is measured by the bench, not asserted by a test): every
    kind of request is timed over whole hands and printed as a row."""
    took = answer_times(Rules.preset("band"), hands=1, seed=12)
    assert set(took) == set(KINDS) and all(times and min(times) > 0 for times in took.values())
    assert len(took["act"]) >= 13 and len(took["belief"]) == len(took["replay"])
    assert main(["bench", "--web", "--rules", "band"]) == 0
    printed = capsys.readouterr().out
    assert all(label in printed for label in KINDS.values()), printed


def test_a_hundred_hands_do_not_grow_the_servers_memory() -> None:
    client = TestClient(create_app())
    game, who = start(client, rules={"target": 1000}, seed=13, partner="random", opponents="random")

    def hands(count: int) -> None:
        for _ in range(count):
            v = view(client, game, who)
            while v["phase"] != "over":
                v = client.post(f"/api/games/{game}/act", json={**who, "action": v["legal"][0]}).json()
            client.post(f"/api/games/{game}/next", json=who)

    tracemalloc.start()  # from the start: what the first hands allocate and later ones free counts too
    try:
        hands(25)  # the kept records fill up, caches warm
        before = tracemalloc.get_traced_memory()[0]
        hands(75)
        growth = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert growth < 300_000, f"the server's memory grew by {growth} bytes over 75 hands"


def test_serve_prints_its_url_and_stops_on_ctrl_c() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "mendikot_env.cli", "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        line = process.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert url, line
        import httpx

        assert httpx.get(url.group(0), timeout=10).status_code == 200
    finally:
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=20)
    assert process.returncode == 0 and "Stopped" in out, err


def test_saved_hands_and_an_arena_run_folder_open_for_replay(tmp_path: Path) -> None:
    saved = tmp_path / "saved"
    client = TestClient(create_app(save_dir=saved))
    game, who = start(client, rules={"preset": "band"}, seed=3)
    play_hand(client, game, who)
    assert main(["replay", "--check", str(saved)]) == 0
    arena = tmp_path / "arena"
    assert main(["arena", "--a", "hard", "--b", "random", "--deals", "1", "--rules", "band", "--no-progress",
                 "--save", str(arena), "--json", str(arena / "summary.json")]) == 0  # fmt: skip
    app = create_app(replay_paths=[str(saved), str(arena)])
    names = TestClient(app).get(f"/api/replays/{app.state.first_replay}").json()["records"]
    assert len(names) == 3 and not any("summary" in name for name in names)


def test_a_replayed_seat_view_shows_nothing_that_seat_did_not_know(client: TestClient) -> None:
    """Every step of a band record seen by each seat: no move after the step in its log, no other
    seat's unplayed card drawn face up or named, no face-down card it did not hide (the belief
    lists every unseen card with its chances, which names no holder, so it is left out)."""
    game, who = start(client, rules={"preset": "band"}, seed=4)
    play_hand(client, game, who)
    record = client.get(f"/api/games/{game}/records/1", params=who).json()
    replay = client.post("/api/replays", json={"records": [{"name": "a", "data": record}]}).json()["replay"]
    session = client.app.state.replays.get(replay)
    steps = len(record["actions"])
    for step in range(0, steps + 1, 3):
        state = session.state_at(0, step)
        for seat in range(4):
            v = client.get(f"/api/replays/{replay}", params={"step": step, "seat": seat}).json()
            assert len(v["events"]) == step, "the log ends at the step"
            secret = secret_cards(state, seat)
            text = json.dumps({key: value for key, value in v.items() if key not in ("svg", "belief")})
            assert not {card for card in secret if re.search(rf"\b{card}\b", text)}, (step, seat)
            assert not drawn_cards(v["svg"]) & secret, (step, seat)


def test_a_local_server_answers_only_to_its_own_host_names() -> None:
    """Bound to this machine, the server refuses a request naming another host (a page of another
    site that rebinds its name to 127.0.0.1 would send one): nothing of a table reaches it."""
    app = create_app(allowed_hosts=["127.0.0.1", "localhost"])
    with TestClient(app, base_url="http://127.0.0.1:8765") as local:
        assert local.get("/api/options").status_code == 200
        made = local.post("/api/games", json={}).json()
    with TestClient(app, base_url="http://attacker.example:8765") as foreign:
        assert foreign.get("/api/options").status_code == 400
        assert (
            foreign.get(f"/api/games/{made['game']}", params={"seat": made["seat"], "token": made["token"]}).status_code
            == 400
        )


def test_a_record_that_cannot_be_saved_leaves_the_hand_played_and_kept(tmp_path: Path, capsys) -> None:
    saved = tmp_path / "saved"
    client = TestClient(create_app(save_dir=saved))
    game, who = start(client, seed=3)
    saved.write_text("a file where the folder was")  # the folder is gone mid-game
    final = play_hand(client, game, who)
    assert final["phase"] == "over", "the last move was played and answered"
    assert "could not save" in capsys.readouterr().err
    assert client.get(f"/api/games/{game}/records/1", params=who).json()["actions"], "the record is kept here"


@pytest.mark.parametrize(
    ("spec", "reads_a_file"),
    [
        ("hard", False),
        ("apprentice:views=24+trained", False),
        ("search:k=2,base=apprentice:views=24,rollout=trained:views=24,z=2", False),
        ("search:k=0", False),  # malformed: loading it refuses it before reading anything
        ("runs/x", True),
        ("apprentice:views=24+runs/x", True),
        ("search:k=2,base=runs/x", True),
        ("search:leaf=runs/x:views=24", True),
        ("x:views=3", True),  # an existing file may be named so
    ],
)
def test_names_files_finds_every_file_a_spec_may_read(spec: str, reads_a_file: bool) -> None:
    assert names_files(spec) is reads_a_file
