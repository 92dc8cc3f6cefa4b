"""The public pages of issue 15 §4, over Starlette's TestClient and a real database of
real tournaments (real bot programs, the built-in random bot): a bot's recent games
with its opponents, head-to-head cells and their pages, a tournament's standings,
owners, and what the public side hides when submissions are on (the competition app):
no author's logs or fault causes, and replays only as a spectator's public view.
"""

from __future__ import annotations

import html
import json
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote, urljoin

import pytest
from starlette.testclient import TestClient

from arena import accounts, botstore, tournament
from arena.executors import ProcessExecutor
from arena.web.app import create_app
from arena.web.competition import competition_app
from arena.web.config import ServerConfig, parse_config
from arena.web.replay import load, positions, rebuild
from arena.web.site import export_html
from leaderboard.store import Store, StoreReader
from referee.history import History, public_events

from .helpers import sql

STDERR_MARK = "TALKER-STDERR-7f3a"
ILLEGAL = "TALKER-ILLEGAL-9c1e"
TALKER = f"""\
import sys
from protocol.client import run
calls = [0]
def act(observation, legal):
    calls[0] += 1
    print("{STDERR_MARK} <b>thinking</b>", calls[0], file=sys.stderr, flush=True)
    return "{ILLEGAL}" if calls[0] % 4 == 0 else legal[0]
run(act, name="talker")
"""
FIRST = 'from protocol.client import run\nrun(lambda observation, legal: legal[-1])\n'


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A stop-me and a dagens-brott tournament of an author's bot that writes to stderr
    and faults (owned by ada), the organiser's bot and the built-in random bot."""
    tmp = tmp_path_factory.mktemp("public")
    (tmp / "talker.py").write_text(TALKER)
    (tmp / "first.py").write_text(FIRST)
    store = Store(tmp / "arena.db")
    ada, _ = accounts.add_author(store, "ada")
    accounts.claim_bot(store, ada, "talker")
    botstore.add_bot(store, "talker", str(tmp / "talker.py"))
    botstore.add_bot(store, "first", str(tmp / "first.py"))
    for name, game, options in (("sm", "stop-me", {"max_rounds": 4}),
                                ("db", "dagens-brott", {"rounds": 1})):
        tournament.create(store, name=name, game=game, bots=["builtin:random", "first", "talker"],
                          seats=3, games_per_seating=1, duplicate=True, fmt="round-robin",
                          seed=11, options=options, settings=tournament.Settings())
        tournament.run(store, name, ProcessExecutor(2))
    store.close()
    return tmp / "arena.db"


def config(db: Path, tmp: Path | None = None) -> ServerConfig:
    server: dict[str, object] = {"database": str(db)}
    if tmp is not None:
        server |= {"data_dir": str(tmp / "data"), "submissions": True}
    return parse_config({"server": server})


@pytest.fixture(scope="module")
def public(db: Path) -> Iterator[TestClient]:
    """The read-only site (no submissions): today's pages."""
    with TestClient(create_app(config(db))) as client:
        yield client


@pytest.fixture(scope="module")
def competition(db: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """The competition server's public side (submissions on), without a pipeline."""
    app = competition_app(config(db, tmp_path_factory.mktemp("server")), pipeline=False)
    with TestClient(app) as client:
        yield client


def truth(db: Path, query: str, params: tuple = ()) -> list[dict]:
    store = StoreReader(db)
    try:
        return sql(store, query, params)
    finally:
        store.close()


def page(client: TestClient, path: str) -> str:
    reply = client.get(path)
    assert reply.status_code == 200, (path, reply.status_code, reply.text[:300])
    return reply.text


def crawl(client: TestClient) -> dict[str, str]:
    """Every page reachable from the start page by relative links."""
    seen: dict[str, str] = {}
    todo = ["http://testserver/"]
    while todo:
        url = todo.pop()
        if url in seen:
            continue
        seen[url] = page(client, url)
        for link in re.findall(r'href="([^"#]+)"', seen[url]):
            target = urljoin(url, html.unescape(link))
            if target.startswith("http://testserver/") and "/static/" not in target \
                    and target not in seen:
                todo.append(target)
    return seen


# ------------------------------------------------------------ what a new user missed
def test_a_bots_recent_games_show_its_opponents_and_link_the_replays(public, db) -> None:
    body = page(public, "/bot/first.html")
    table = body[body.index('<table id="recent">'):]
    table = table[:table.index("</table>")]
    rows = re.findall(r'<tr data-game="(\d+)" data-seat="(\d+)">(.*?)</tr>', table, re.DOTALL)
    seats = truth(db, "SELECT s.game_id, s.seat, b.name, b.version, s.rank, s.status "
                      "FROM seats s JOIN bots b ON b.id = s.bot_id")
    mine = sorted(((s["game_id"], s["seat"]) for s in seats if s["name"] == "first"),
                  reverse=True)
    assert [(int(g), int(s)) for g, s, _ in rows] == mine and len(mine) == 6
    for gid, seat, cells in rows:
        assert f'href="../replay/{gid}.html"' in cells
        assert f'href="../replay/{gid}-seat{seat}.html"' in cells  # from its own seat
        shown = re.findall(r'<span class="chip opponent" data-seat="(\d+)"><a href="../bot/'
                           r'([^"]+)\.html">([^<]+)</a> → (\d+)', cells)
        expected = [(str(s["seat"]), s["name"], f"{s['name']}@{s['version']}",
                     str(s["rank"])) for s in seats
                    if s["game_id"] == int(gid) and s["seat"] != int(seat)]
        assert [(a, unquote(b), html.unescape(c), d) for a, b, c, d in shown] == sorted(expected)
    assert 'href="../bot/builtin%3Arandom.html">builtin:random@' in table
    assert "forfeit" in table or "illegal" in table  # the faulting opponent's status


def test_head_to_head_cells_link_pages_whose_games_add_up(public, db, tmp_path) -> None:
    body = page(public, "/head-to-head/stop-me.html")
    cells = re.findall(r'data-ahead="(\d+)" data-games="(\d+)" title="[^"]*"><a href="'
                       r'(\.\./head-to-head/stop-me/(\d+)-(\d+)\.html)">', body)
    assert len(cells) == 6  # three bot versions, every ordered pair met
    for ahead, games, link, a, b in cells:
        pair = page(public, urljoin("/head-to-head/stop-me.html", link))
        rows = re.findall(r'<tr data-game="(\d+)" data-ahead="(a|b|even)">', pair)
        count = Counter(who for _, who in rows)
        assert len(rows) == int(games) and count["a"] == int(ahead), link
        stored = truth(db, "SELECT COUNT(*) AS n, SUM(x.rank < y.rank) AS ahead, "
                           "SUM(x.rank > y.rank) AS behind FROM seats x JOIN seats y ON "
                           "x.game_id = y.game_id JOIN games g ON g.id = x.game_id WHERE "
                           "g.game = 'stop-me' AND g.void = 0 AND x.bot_id = ? AND "
                           "y.bot_id = ?", (int(a), int(b)))[0]
        assert (stored["n"], stored["ahead"], stored["behind"]) == (
            len(rows), count["a"], count["b"])
        for gid, _ in rows:
            assert f'href="../../replay/{gid}.html"' in pair
    assert public.get("/head-to-head/stop-me/1-1.html").status_code == 404
    assert public.get("/head-to-head/stop-me/x-y.html").status_code == 404
    # The static export writes every cell's page, at the address the table links.
    export_html(StoreReader(db), tmp_path / "site")
    for _, _, link, _, _ in cells:
        assert (tmp_path / "site" / link.removeprefix("../")).is_file()


def test_a_tournaments_standings_are_sorted_by_result(public, db) -> None:
    (tid,) = [t["id"] for t in truth(db, "SELECT id FROM tournaments WHERE name = 'sm'")]
    body = page(public, f"/tournament/{tid}.html")
    assert "by mean rank (lower is better), then wins, then mean score" in body
    shown = re.findall(r'<tr data-bot="([^"]+)" data-version="(\d+)"><td class="num">(\d+)'
                       r'</td>', body)
    stats = truth(db, "SELECT b.name, b.version, AVG(s.rank) AS mean_rank, "
                      "SUM(s.rank = 1) AS wins, AVG(s.score) AS mean_score FROM seats s "
                      "JOIN bots b ON b.id = s.bot_id JOIN games g ON g.id = s.game_id "
                      "WHERE g.tournament_id = ? AND g.void = 0 GROUP BY b.id", (tid,))
    ordered = sorted(stats, key=lambda r: (r["mean_rank"], -r["wins"], -r["mean_score"]))
    assert [(html.unescape(n), int(v)) for n, v, _ in shown] == [
        (r["name"], r["version"]) for r in ordered]
    assert shown[0][2] == "1"
    cross = body[body.index('<table id="crosstable">'):]
    for a, b, ahead, behind in re.findall(
            r'data-a="(\d+)" data-b="(\d+)" data-ahead="(\d+)" data-behind="(\d+)"', cross):
        stored = truth(db, "SELECT SUM(x.rank < y.rank) AS ahead, SUM(x.rank > y.rank) AS "
                           "behind FROM seats x JOIN seats y ON x.game_id = y.game_id JOIN "
                           "games g ON g.id = x.game_id WHERE g.tournament_id = ? AND "
                           "g.void = 0 AND x.bot_id = ? AND y.bot_id = ?", (tid, int(a), int(b)))[0]
        assert (stored["ahead"], stored["behind"]) == (int(ahead), int(behind))


def test_public_pages_say_who_owns_each_bot(public) -> None:
    bot = page(public, "/bot/talker.html")
    assert '<p class="lead owner" id="owner">by <b>ada</b></p>' in bot
    assert 'id="owner"' not in page(public, "/bot/first.html")  # the organiser's bot
    board = page(public, "/leaderboard/stop-me.html")
    assert '<th scope="col" class="more">author</th>' in board
    owner_of = dict(re.findall(r'<tr data-bot="([^"]+)".*?<td class="more owner">([^<]*)</td>',
                               board))
    assert owner_of == {"talker": "ada", "first": "", "builtin:random": ""}
    index = page(public, "/")
    assert index.count('<small class="owner">by ada</small>') == 3  # two cards and the chip


# ------------------------------------------------------------ with submissions on
def stored_games(db: Path) -> list[int]:
    return [g["id"] for g in truth(db, "SELECT id FROM games ORDER BY id")]


def test_the_read_only_site_shows_logs_and_fault_causes(public, db) -> None:
    """The control: what the competition server must hide is there without submissions."""
    body = page(public, "/bot/talker.html")
    assert STDERR_MARK in body and ILLEGAL in body and "fault log" in body
    gid = stored_games(db)[0]
    assert 'id="replay-data"' in page(public, f"/replay/{gid}-seat0.html")


def test_with_submissions_no_page_shows_an_authors_logs_or_fault_causes(competition,
                                                                       db) -> None:
    pages = crawl(competition)
    for gid in stored_games(db):  # every game, linked or not
        pages[f"/replay/{gid}.html"] = page(competition, f"/replay/{gid}.html")
    assert any(u.endswith("/bot/talker.html") for u in pages) and len(pages) > 20
    for url, body in pages.items():
        assert STDERR_MARK not in body and ILLEGAL not in body, url
        assert "is not one of the legal actions" not in body, url
        assert not re.search(r'href="[^"]*replay/\d+-seat\d+\.html"', body), url
    talker = next(b for u, b in pages.items() if u.endswith("/bot/talker.html"))
    assert "<h2>Logs</h2>" not in talker and "fault log" not in talker
    assert re.search(r'<span class="chip">illegal ×\d+</span>', talker)  # the counts stay
    assert "by <b>ada</b>" in talker


def test_with_submissions_replays_are_the_spectators_view(competition, db) -> None:
    store = StoreReader(db)
    try:
        for gid in stored_games(db):
            row = load(store, gid)
            seats = range(len(row["seat_rows"]))
            for seat in seats:
                assert competition.get(f"/replay/{gid}-seat{seat}.html").status_code == 404
            assert competition.get(f"/replay/{gid}-seat9.html").status_code == 404
            body = page(competition, f"/replay/{gid}.html")
            assert 'id="replay-data"' not in body and "<script" not in body
            assert f"seed {row['seed']}" not in body and " ms / " not in body
            listed = [(html.unescape(t), html.unescape(f)) for t, f in re.findall(
                r"<li><b>([^<]*)</b>(?: <code>([^<]*)</code>)?</li>", body)]
            events = json.loads(row["events"])
            assert listed == [(e["type"], fields(e)) for e in public_events(events)]
            # Every private event a seat's view holds is absent from the public page.
            rebuilt = rebuild(row, list(seats))
            private = {(e["type"], fields(e)) for seat in seats
                       for step in positions(rebuilt, seat) for _, e, *_ in step["e"] if "to" in e}
            private -= {(e["type"], fields(e)) for e in public_events(events)}
            assert private and not private & set(listed), gid
            history = History.load({"game": row["game"], "players": len(seats),
                                    "seed": row["seed"], "events": events})
            over = [e for e in public_events(history.events or ()) if e["type"] == "game_over"]
            assert over and '<dl class="kv" id="result">' in body
    finally:
        store.close()


def fields(event: dict) -> str:
    """An event's fields as the public page writes them."""
    return ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in event.items()
                     if k not in ("type", "to"))
