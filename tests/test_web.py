"""The web views end to end: a real database from real tournaments, the real HTTP server,
and a real headless browser (Debian's chromium) clicking through the pages.

Screenshots of every page go to test-artifacts/web/ (git-ignored); with
ARENA_DOCS_SCREENSHOTS=DIR they are also written to DIR (docs/web/ for the docs).
The browser tests are skipped only where chromium is missing and CI is unset.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import math
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urljoin, urlsplit

import pytest

from arena import botstore, tournament
from arena.executors import ProcessExecutor
from arena.web.templating import replay_scripts
from leaderboard.confidence import chance
from leaderboard.store import Store, StoreReader
from referee.games import new_game

from .browser_helpers import HAVE_BROWSER, chromium, serving, start, viewport
from .helpers import arena

ROOT = Path(__file__).parent.parent
ARTIFACTS = ROOT / "test-artifacts" / "web"
FIRST_BOT = 'from protocol.client import run\nrun(lambda observation, legal: legal[0], name="first")\n'
FAULTY_BOT = """\
from protocol.client import run
calls = [0]
def act(observation, legal):
    calls[0] += 1
    return "NOT-AN-ACTION" if calls[0] % 9 == 0 else legal[-1]
run(act, name="faulty")
"""
ODD = 'odd <i>name & "#1?"'  # escaping and URL quoting; bot names cannot hold "/"
browser_test = pytest.mark.skipif(not HAVE_BROWSER and not os.environ.get("CI"),
                                  reason="chromium and chromium-driver are not installed")
EXTERNAL = re.compile(r"""(?:src|href|action)\s*=\s*["']?(?:https?:)?//""", re.IGNORECASE)


# ------------------------------------------------------------------ fixtures
@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four finished tournaments (all three games; a bot with two versions; a bot that
    faults) and one scheduled but not played."""
    tmp = tmp_path_factory.mktemp("web")
    (tmp / "first.py").write_text(FIRST_BOT)
    (tmp / "faulty.py").write_text(FAULTY_BOT)
    store = Store(tmp / "arena.db")
    botstore.add_bot(store, "random", str(ROOT / "bots" / "random_bot.py"))
    botstore.add_bot(store, "first", str(tmp / "first.py"))
    botstore.add_bot(store, "faulty", str(tmp / "faulty.py"))
    botstore.add_bot(store, ODD, str(tmp / "first.py"))  # registered, never played

    def play(name: str, game: str, bots: list[str], per_seating: int = 1,
             run: bool = True) -> None:
        tournament.create(store, name=name, game=game, bots=bots, seats=3,
                          games_per_seating=per_seating, duplicate=True, fmt="round-robin",
                          seed=3, options={}, settings=tournament.Settings())
        if run:
            tournament.run(store, name, ProcessExecutor(2))

    play("sm-1", "stop-me", ["random", "first", "faulty"], 2)
    (tmp / "first.py").write_text(FIRST_BOT.replace('"first"', '"first-2"'))
    botstore.add_bot(store, "first", str(tmp / "first.py"))
    play("sm-2", "stop-me", ["random", "first@2", "faulty"])
    play("db-1", "dagens-brott", ["random", "first", "faulty"])
    play("sad-1", "stand-and-deliver", ["random", "first", "faulty"])
    play("sm-later", "stop-me", ["random", "first@2", "faulty"], run=False)
    store.close()
    return tmp / "arena.db"


def fingerprint(path: Path) -> tuple[str, int]:
    return hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns


@pytest.fixture(scope="module")
def base(db: Path) -> Iterator[str]:
    """The server on 127.0.0.1, any free port, over the module's database."""
    yield from serving(db)


# Text that anyone may put on a page: a bot's illegal actions and stderr, a tournament's
# name, game option values, and a bot name as long as the bot store allows (255 bytes).
EVIL = ["<img src=x onerror=alert(1)>", "</script><script>alert(2)</script>", "a\u2028b<!--"]
HOSTILE_BOT = f"""\
import sys
from protocol.client import run
EVIL = {EVIL!r}
calls = [0]
def act(observation, legal):
    calls[0] += 1
    print(EVIL[calls[0] % 3], file=sys.stderr, flush=True)
    return EVIL[calls[0] % 3] if calls[0] % 4 == 0 else legal[0]
run(act, name=EVIL[1])
"""
LONG = "L" * 251  # its page "LLL...L.html" is 256 bytes, too long for a file name
EVIL_TOURNAMENT = '</script><script>alert(3)</script> & "q"'


@pytest.fixture(scope="module")
def hostile_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One stop-me tournament of a bot that sends markup as actions and on stderr, a bot
    with the longest name there can be, and markup in the tournament's name and options."""
    tmp = tmp_path_factory.mktemp("hostile")
    (tmp / "first.py").write_text(FIRST_BOT)
    (tmp / "hostile.py").write_text(HOSTILE_BOT)
    store = Store(tmp / "arena.db")
    botstore.add_bot(store, "first", str(tmp / "first.py"))
    botstore.add_bot(store, EVIL[0], str(tmp / "hostile.py"))
    botstore.add_bot(store, LONG, str(tmp / "first.py"))
    tournament.create(store, name=EVIL_TOURNAMENT, game="stop-me", bots=["first", EVIL[0], LONG],
                      seats=3, games_per_seating=1, duplicate=False, fmt="round-robin", seed=5,
                      options={"colours": EVIL, "max_rounds": 2},
                      settings=tournament.Settings())
    tournament.run(store, EVIL_TOURNAMENT, ProcessExecutor(3))
    store.close()
    return tmp / "arena.db"


@pytest.fixture(scope="module")
def hostile_base(hostile_db: Path) -> Iterator[str]:
    """The server over the hostile database."""
    yield from serving(hostile_db)


class Headers(dict[str, str]):
    """Response headers by name, in any case (HTTP's names are case-insensitive; uvicorn
    sends them in lower case, http.server capitalised)."""

    def __init__(self, items: Any) -> None:
        super().__init__((k.lower(), v) for k, v in items)

    def __getitem__(self, key: str) -> str:
        return super().__getitem__(key.lower())

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        return super().get(key.lower(), default)


def get(url: str, method: str = "GET", data: bytes | None = None
        ) -> tuple[int, str, dict[str, str]]:
    request = urllib.request.Request(url, method=method, data=data)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode(), Headers(response.headers.items())
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode(), Headers(err.headers.items())


def sql(db_path: Path, query: str, params: tuple = ()) -> list[tuple]:
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        return conn.execute(query, params).fetchall()
    finally:
        conn.close()


def known_game(db_path: Path) -> int:
    """The first stop-me game: short, with private events of every seat."""
    return sql(db_path, "SELECT id FROM games WHERE game = 'stop-me' ORDER BY tournament_id, "
                        "idx LIMIT 1")[0][0]


def expected_steps(db_path: Path, game_id: int) -> tuple[list[dict], list[list[int]], list]:
    """From the database, independently of the viewer: the moves, the event numbers
    (1-based) of each position, and the event log."""
    seed, game, options, events, moves = sql(
        db_path, "SELECT g.seed, g.game, t.options, g.events, g.moves FROM games g JOIN "
                 "tournaments t ON t.id = g.tournament_id WHERE g.id = ?", (game_id,))[0]
    seats = sql(db_path, "SELECT COUNT(*) FROM seats WHERE game_id = ?", (game_id,))[0][0]
    engine = new_game(game, seats, seed, json.loads(options))
    bounds = [0, len(engine.log)]
    moves = json.loads(moves)
    for move in moves:
        engine.apply({int(s): m["action"] for s, m in move.items()})
        bounds.append(len(engine.log))
    assert engine.log_json() == json.loads(events)
    numbers = [list(range(a + 1, b + 1)) for a, b in itertools.pairwise(bounds)]
    return moves, numbers, json.loads(events)


def ms(value: float) -> str:
    """Milliseconds as the viewer shows them: JavaScript's Math.round(x * 10) / 10."""
    text = repr(math.floor(float(value) * 10 + 0.5) / 10)
    return text.removesuffix(".0")


# -------------------------------------------------------------- HTTP, no browser
def crawl(base: str, limit: int = 400) -> dict[str, str]:
    """Every page reachable from the start page (relative links only)."""
    seen: dict[str, str] = {}
    todo = [base]
    while todo and len(seen) < limit:
        url = todo.pop()
        if url in seen:
            continue
        status, body, headers = get(url)
        assert status == 200, (url, status, body[:300])
        assert headers["Content-Type"] == "text/html; charset=utf-8"
        seen[url] = body
        for link in re.findall(r'href="([^"#]+)"', body):
            target = urljoin(url, link)
            if target.startswith(base + "static/"):  # the stylesheet: not a page
                continue
            if target.startswith(base) and target not in seen:
                todo.append(target)
    return seen


def test_every_page_loads_offline_and_phone_ready(base: str, db: Path) -> None:
    pages = crawl(base)
    paths = {urlsplit(u).path for u in pages}
    games = [g for (g,) in sql(db, "SELECT id FROM games")]
    for expected in ("/", "/tournaments.html", "/leaderboard/stop-me.html",
                     "/leaderboard/dagens-brott.html", "/leaderboard/stand-and-deliver.html",
                     "/head-to-head/stop-me.html", "/bot/random.html", "/bot/first.html",
                     "/bot/faulty.html", "/tournament/1.html", "/tournament/5.html",
                     f"/replay/{games[0]}.html"):
        assert expected in paths, expected
    seats = sql(db, "SELECT COUNT(*) FROM seats")[0][0]
    assert sum(bool(re.fullmatch(r"/replay/\d+\.html", p)) for p in paths) == len(games)
    assert sum(p.startswith("/replay/") for p in paths) == len(games) + seats  # and each seat
    for url, body in pages.items():
        assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in body
        assert not EXTERNAL.search(body), url  # nothing from another site
        assert "Traceback" not in body
    assert "<svg" in pages[base + "bot/random.html"]
    odd = [body for url, body in pages.items() if "/bot/odd" in url]
    assert len(odd) == 1 and "<i>" not in odd[0] and "odd &lt;i&gt;name &amp; &quot;#1?" in odd[0]


def test_replays_of_odd_rows_explain_themselves(db: Path) -> None:
    from arena.web.replay import load, rebuild, replay_page

    store = StoreReader(db)
    try:
        row = load(store, known_game(db))
        old = {**row, "moves": "[]"}  # a game stored before moves were kept
        rebuilt = rebuild(old, [None])
        assert len(rebuilt.bounds) == 1 and len(rebuilt.notes) == 1
        assert "only its event log" in rebuilt.notes[0]
        assert "only its event log" in replay_page(store, rebuilt, None)
        moves = json.loads(row["moves"])
        moves[3] = {s: {**m, "action": "DANCE"} for s, m in moves[3].items()}
        broken = rebuild({**row, "moves": json.dumps(moves)}, [None, 0])
        assert "Step 4 cannot be replayed" in broken.notes[0]
        assert len(broken.views[0]) == len(broken.bounds) == 5
        assert "Step 4 cannot be replayed" in replay_page(store, broken, 0)
        changed = json.loads(row["events"])
        changed[5] = {**changed[5], "extra": 1}  # as if the engine had changed since
        assert "differs from the stored event log" in rebuild(
            {**row, "events": json.dumps(changed)}, [None]).notes[0]
        assert rebuild(row, [None, 1]).notes == []
    finally:
        store.close()


def test_leaderboard_order_is_the_cli_order(base: str, db: Path) -> None:
    for game in ("stop-me", "dagens-brott", "stand-and-deliver"):
        out = arena("leaderboard", game, "--json", "--db", str(db))
        assert out.returncode == 0, out.stderr
        rows = json.loads(out.stdout)["leaderboard"]
        _, body, _ = get(f"{base}leaderboard/{game}.html")
        shown = re.findall(r'<tr data-bot="([^"]+)" data-version="(\d+)">', body)
        assert shown == [(r["bot"], str(r["version"])) for r in rows]
        assert f"{rows[0]['conservative']:.2f}" in body


def test_head_to_head_matches_a_direct_count(base: str, db: Path) -> None:
    (ahead, games), = sql(
        db, "SELECT SUM(a.rank < b.rank), COUNT(*) FROM seats a JOIN seats b ON "
            "a.game_id = b.game_id JOIN games g ON g.id = a.game_id JOIN bots x ON "
            "x.id = a.bot_id JOIN bots y ON y.id = b.bot_id WHERE g.game = 'stop-me' AND "
            "g.void = 0 AND x.name = 'random' AND y.name = 'faulty'")
    _, body, _ = get(base + "head-to-head/stop-me.html")
    cell = re.search(r'data-a="random@1" data-b="faulty@1" data-ahead="(\d+)" '
                     r'data-games="(\d+)"', body)
    assert cell and (int(cell[1]), int(cell[2])) == (ahead, games) and games == 9
    assert f"{round(100 * ahead / games)}%<small>{ahead}/{games}</small>" in body


def test_bot_page_shows_its_captured_output(base: str, db: Path) -> None:
    """The faulty bot's SDK complains on stderr; the tournament kept it, the page shows it."""
    rows = sql(db, "SELECT text FROM logs l JOIN bots b ON b.id = l.bot_id "
                   "WHERE b.name = 'faulty'")
    assert rows and all("which is not legal" in text for (text,) in rows)
    status, body, _ = get(f"{base}bot/faulty.html")
    assert status == 200 and "<h2>Logs</h2>" in body
    assert "act() returned &#x27;NOT-AN-ACTION&#x27;, which is not legal" in body


def test_tournaments_show_progress(base: str) -> None:
    _, body, _ = get(base + "tournaments.html")
    rows = {name: (int(played), int(scheduled)) for name, played, scheduled in re.findall(
        r'data-name="([^"]+)" data-played="(\d+)" data-scheduled="(\d+)"', body)}
    assert rows == {"sm-1": (6, 6), "sm-2": (3, 3), "db-1": (3, 3), "sad-1": (3, 3),
                    "sm-later": (0, 3)}
    assert "0/3" in body and "6/6" in body and "running or stopped" in body
    # Times are stored in UTC and say so: a reader's own clock may be hours away.
    assert re.search(r'<time datetime="[^"]+Z?"[^>]*>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC</time>',
                     body), body


def test_a_tournament_page_is_found_by_its_name_as_by_its_id(base: str, db: Path) -> None:
    # One identity per thing (issue 13 B6): `arena tournament list` shows the ids of
    # these addresses, and the names it shows work in them too.
    listed = json.loads(arena("tournament", "list", "--json", "--db", str(db)).stdout)
    ids = {t["name"]: t["id"] for t in listed}
    for name in ("sm-1", "sm-later"):
        by_id, by_name = get(f"{base}tournament/{ids[name]}.html"), get(
            f"{base}tournament/{name}.html")
        assert by_id[0] == by_name[0] == 200 and by_id[1] == by_name[1]
        assert name in by_name[1]
    assert get(f"{base}tournament/sm-2")[1] == get(f"{base}tournament/{ids['sm-2']}.html")[1]


def test_a_seats_page_shows_what_it_saw_live_and_no_more(base: str, db: Path) -> None:
    """In dagens-brott a seat is not asked at every step (the other seats' lay turns, the
    winner's escape window): its page shows the setup, its own decisions and the
    end, names no other seat as acting, and gives neither the seed nor others' counts."""
    with sqlite3.connect(db) as conn:
        gid, steps = conn.execute("SELECT id, steps FROM games WHERE game = 'dagens-brott' "
                                  "ORDER BY id LIMIT 1").fetchone()
        asked = conn.execute("SELECT asked FROM seats WHERE game_id = ? AND seat = 0",
                             (gid,)).fetchone()[0]
    _, body, _ = get(f"{base}replay/{gid}-seat0.html")
    data = json.loads(re.search(
        r'<script type="application/json" id="replay-data">(.*?)</script>', body,
        re.DOTALL)[1])
    shown = data["steps"]
    assert all(step["a"] in ([], [0]) for step in shown)
    assert sum(step["a"] == [0] for step in shown) == asked < steps
    assert len(shown) <= asked + 2  # the setup, its decisions, the end
    assert sum(len(step["m"]) for step in shown) == asked
    lead = re.search(r'<p class="lead">(.*?)</p>', body, re.DOTALL)[1]
    assert "seed" not in lead and "steps" not in lead
    assert body.count(" ms / ") == 1  # its own time and count; the others' are hidden
    _, full, _ = get(f"{base}replay/{gid}.html")
    assert "seed" in re.search(r'<p class="lead">(.*?)</p>', full, re.DOTALL)[1]


@pytest.mark.parametrize(("path", "status", "sentence"), [
    ("leaderboard/no-such-game.html", 404, "There is no leaderboard for the game"),
    ("head-to-head/no-such-game", 404, "There is no leaderboard for the game"),
    ("bot/nobody.html", 404, "There is no bot named"),
    ("replay/999999.html", 404, "There is no game with id 999999"),
    ("replay/abc.html", 400, "is not a replay"),
    ("replay/1-seat7.html", 404, "there is no seat 7"),
    # Names work as well as ids now (issue 13 B6): an unknown one is not found.
    ("tournament/x.html", 404, "There is no tournament named 'x'"),
    ("tournament/99.html", 404, "There is no tournament with id 99"),
    ("no/such/page.html", 404, "There is no page at this address"),
    ("%2e%2e/%2e%2e/etc/passwd", 400, "This address is not a page of this site"),
])
def test_bad_input_gets_a_clear_page(base: str, path: str, status: int, sentence: str) -> None:
    code, body, _ = get(base + path)
    assert code == status
    assert sentence in body.replace("&#x27;", "'") and 'id="error"' in body
    assert "Traceback" not in body and 'File "' not in body


def test_the_server_refuses_to_change_anything(base: str) -> None:
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        code, body, headers = get(base + "leaderboard/stop-me.html", method, b"x=1")
        assert code == 405 and headers["Allow"] == "GET, HEAD"
        assert f"{method} is not allowed, only GET and HEAD" in body
    code, body, _ = get(base + "index.html", "HEAD")
    assert code == 200 and body == ""


def test_the_store_is_opened_read_only(db: Path) -> None:
    store = StoreReader(db)
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        store._conn.execute("CREATE TABLE intruder (x)")
    store.close()


def test_it_reads_while_a_tournament_writes_and_says_503_when_locked(
        db: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy.db"
    shutil.copy(db, copy)
    server, url = start(copy, busy_timeout_s=0.3)
    try:
        writer = sqlite3.connect(copy, isolation_level=None)
        writer.execute("BEGIN IMMEDIATE")  # as a running tournament stores a game
        writer.execute("UPDATE games SET reason = 'being written' WHERE id = 1")
        code, body, _ = get(url + "leaderboard/stop-me.html")
        assert code == 200 and "data-bot=" in body
        assert get(url + "replay/1.html")[0] == 200
        writer.execute("ROLLBACK")
        writer.execute("PRAGMA journal_mode = DELETE")  # a writer that blocks readers
        writer.execute("BEGIN EXCLUSIVE")
        writer.execute("UPDATE games SET reason = 'being written' WHERE id = 1")
        code, body, headers = get(url + "leaderboard/stop-me.html")
        assert code == 503 and "The database is busy" in body and headers["Retry-After"]
        writer.execute("ROLLBACK")
        writer.close()
        assert get(url + "leaderboard/stop-me.html")[0] == 200
    finally:
        server.shutdown()
        server.server_close()


def test_serve_and_export_commands(db: Path, tmp_path: Path) -> None:
    missing = arena("serve", "--db", str(tmp_path / "none.db"))
    assert missing.returncode == 1 and "no database at" in missing.stderr
    process = subprocess.Popen([sys.executable, "-m", "arena", "serve", "--port", "0",
                                "--db", str(db)], stdout=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline() if process.stdout else ""
        url = re.search(r"http://\S+/", line)
        assert url and "read-only" in line, line
        assert get(url[0])[0] == 200
    finally:
        process.terminate()
        process.wait(timeout=10)
    out = arena("export-html", str(tmp_path / "site"), "--db", str(db))
    assert out.returncode == 0 and "wrote" in out.stdout, out.stderr
    site = tmp_path / "site"
    files = list(site.rglob("*.html"))
    games, seats = sql(db, "SELECT COUNT(DISTINCT game_id), COUNT(*) FROM seats")[0]
    assert len(list((site / "replay").glob("*.html"))) == games + seats
    for page in files:  # every relative link leads to a written file
        for link in re.findall(r'href="([^"#]+)"', page.read_text()):
            if link == "data:,":  # the empty favicon, so that browsers ask for none
                continue
            assert not link.startswith(("/", "http")), (page, link)
            assert (page.parent / unquote(link)).resolve().is_file(), (page, link)


def test_export_to_a_folder_that_cannot_be_made_is_a_clear_error(db: Path,
                                                                  tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    out = arena("export-html", str(tmp_path / "file" / "site"), "--db", str(db))
    assert out.returncode == 1 and "Traceback" not in out.stderr  # was NotADirectoryError
    assert f"cannot write the pages to {str(tmp_path / 'file' / 'site')!r}: Not a directory" \
        in out.stderr


def test_a_bot_name_too_long_for_a_file_name_is_exported_and_served(
        hostile_db: Path, hostile_base: str, tmp_path: Path) -> None:
    """Its page was bot/LLL...L.html (256 bytes): the export stopped with "File name too long"."""
    out = arena("export-html", str(tmp_path / "site"), "--db", str(hostile_db))
    assert out.returncode == 0, out.stderr
    site = tmp_path / "site"
    index = (site / "index.html").read_text()
    (long_link,) = set(re.findall(r'href="(bot/L[^"]*)"', index))
    page = site / unquote(long_link)
    assert page.is_file() and len(page.name.encode()) <= 255 and "@" in page.name
    assert f"<h1>Bot {LONG}</h1>" in page.read_text()
    for html_file in site.rglob("*.html"):  # every link, from every page, to a written file
        for link in re.findall(r'href="([^"#]+)"', html_file.read_text()):
            assert link == "data:," or (html_file.parent / unquote(link)).resolve().is_file()
    code, body, _ = get(hostile_base + long_link)  # the same address on the server
    assert code == 200 and f"<h1>Bot {LONG}</h1>" in body


def raw_request(base: str, data: bytes) -> tuple[int, dict[str, str], str]:
    """Send bytes as they are (no client tidies them up); (status, headers, body)."""
    split = urlsplit(base)
    with socket.create_connection((split.hostname, split.port), timeout=10) as sock:
        sock.sendall(data)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    assert lines[0].startswith("HTTP/"), answer[:200]  # an answer, not a dropped connection
    headers = Headers(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), headers, body.decode()


@pytest.mark.parametrize(("request_bytes", "status", "sentence"), [
    (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n", 405,
     "POST is not allowed"),  # was a ValueError in the log and no answer at all
    (b"PROPFIND / HTTP/1.1\r\nHost: x\r\n\r\n", 405, "PROPFIND is not allowed"),  # was 501
    (b"GET /" + b"a" * 70000 + b" HTTP/1.1\r\n\r\n", 414, "Request-URI Too Long"),
    (b"GET / HTTP/1.1\r\n" + b"X: y\r\n" * 200 + b"\r\n", 431, "Too many headers"),
], ids=["bad-content-length", "unknown-method", "long-uri", "many-headers"])
def test_malformed_requests_get_the_sites_pages_and_headers(
        base: str, request_bytes: bytes, status: int, sentence: str) -> None:
    """http.server's own error pages had none of the site's headers (CSP, nosniff)."""
    code, headers, body = raw_request(base, request_bytes)
    assert code == status and sentence in body and 'id="error"' in body
    assert headers["Content-Security-Policy"].startswith("default-src 'none'")
    assert headers["X-Content-Type-Options"] == "nosniff"
    if status == 405:
        assert headers["Allow"] == "GET, HEAD"


def test_the_only_scripts_allowed_are_the_sites_own(base: str, db: Path) -> None:
    """script-src names the hashes of the site's scripts, not 'unsafe-inline': markup
    that slipped past the escaping (an <img onerror>, a <script>) could run nothing. They
    are the static files static/replay.js, the viewer (issue 15 §1), static/ladder.js,
    the ladder page's refresh (issue 16 §4), static/live.js, a game watched as it plays
    (issue 19 §3), static/table.js and each game's static/table-GAME.js, the game tables
    (issue 19 §1), each allowed by the hash of
    exactly the bytes served, which the page's script tag also names as its integrity."""
    _, body, headers = get(base + "replay/1.html")
    policy = dict(part.strip().split(" ", 1) for part in
                  headers["Content-Security-Policy"].split(";"))
    names = ["replay.js", "ladder.js", "live.js", "table.js",
             *sorted(p.name for p in (ROOT / "arena/web/static").glob("table-*.js"))]
    digests = {}
    for name in names:
        code, script, script_headers = get(base + f"static/{name}")
        assert code == 200 and script_headers["Content-Type"].startswith("text/javascript")
        digests[name] = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert policy["script-src"] == " ".join(f"'sha256-{d}'" for d in digests.values())
    assert policy["connect-src"] == "'self'"  # the ladder page fetches itself, nothing else
    (game,), = sql(db, "SELECT game FROM games WHERE id = 1")
    for name in replay_scripts(game):  # the helpers, the game's renderer, the viewer
        assert (f'<script src="../static/{name}" integrity="sha256-{digests[name]}">'
                "</script>") in body
    assert "<script>" not in body  # no inline script at all
    assert policy["default-src"] == "'none'" and policy["style-src"] == "'self'"


# ----------------------------------------------------------------- in a browser
@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not HAVE_BROWSER and not os.environ.get("CI"):
        pytest.skip("chromium and chromium-driver are not installed")
    with chromium() as driver:
        viewport(driver, 1000, 700)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        yield driver


DOCS_SHOTS = {"index", "leaderboard", "bot", "bot-faults", "head-to-head", "tournaments",
              "tournament", "replay-step", "replay-seat", "phone-replay", "error-404",
              "bot-recent", "head-to-head-cell", "tournament-standings", "phone-leaderboard"}


def shot(driver: Any, name: str) -> None:
    """A screenshot into test-artifacts/web/ (and the docs' into ARENA_DOCS_SCREENSHOTS)."""
    driver.save_screenshot(str(ARTIFACTS / f"{name}.png"))
    docs = os.environ.get("ARENA_DOCS_SCREENSHOTS")
    if docs and name in DOCS_SHOTS:
        Path(docs).mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(Path(docs) / f"{name}.png"))


def sure_text(row: dict[str, Any]) -> str:
    """The text of a leaderboard row's P > next cell (issue 18 §4): blank on the last row,
    the chance, and before it the ≈ mark and its screen-reader words when not significant."""
    if row["ahead_of_next"] is None:
        return ""
    return (chance(row["ahead_of_next"]) if row["significant"]
            else f"≈not significant: {chance(row['ahead_of_next'])}")


def visit(driver: Any, url: str, status: int = 200) -> str:
    driver.get(url)
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"
              and not (status != 200 and f"status of {status}" in e["message"])]
    assert not errors, errors  # no script error, nothing blocked or missing
    return driver.title


@browser_test
def test_pages_in_the_browser(browser: Any, base: str, db: Path) -> None:
    visit(browser, base)
    assert [e.text for e in browser.find_elements("css selector", "h2 a")] == [
        "dagens-brott", "stand-and-deliver", "stop-me"]
    shot(browser, "index")
    visit(browser, base + "leaderboard/stop-me.html")
    rows = json.loads(arena("leaderboard", "stop-me", "--json", "--db", str(db)).stdout)
    shown = browser.execute_script(
        "return [...document.querySelectorAll('#leaderboard tbody tr')].map("
        "r => [r.cells[1].textContent, +r.cells[2].textContent, r.cells[6].textContent, "
        "r.cells[7].textContent])")
    assert shown == [[r["bot"], r["version"], f"{r['conservative']:.2f}", sure_text(r)]
                     for r in rows["leaderboard"]]
    shot(browser, "leaderboard")
    visit(browser, base + "head-to-head/stop-me.html")
    assert browser.find_elements("css selector", "#head-to-head td[data-ahead]")
    shot(browser, "head-to-head")
    visit(browser, base + "tournaments.html")
    shot(browser, "tournaments")
    visit(browser, base + "tournament/1.html")
    assert len(browser.find_elements("css selector", "#games tbody tr")) == 6
    shot(browser, "tournament")
    code_page = visit(browser, base + "bot/nobody.html", 404)
    assert "404" in code_page and "There is no bot named" in browser.find_element(
        "id", "error").text
    shot(browser, "error-404")


@browser_test
def test_bot_page_versions_chart_seats_and_faults(browser: Any, base: str, db: Path) -> None:
    visit(browser, base + "bot/first.html")
    versions = browser.execute_script(
        "return [...document.querySelectorAll('#versions tbody tr')].map("
        "r => +r.cells[0].textContent)")
    assert versions == [1, 2]
    for game in ("stop-me", "dagens-brott"):
        rated = sum(n for (n,) in sql(db, "SELECT r.games FROM ratings r JOIN bots b ON "
                                          "b.id = r.bot_id WHERE b.name = 'first' AND "
                                          "r.game = ?", (game,)))
        points = browser.find_elements(
            "css selector", f'section.rating[data-game="{game}"] svg circle.pt')
        assert len(points) == rated > 0
    (mu,), = sql(db, "SELECT r.mu FROM ratings r JOIN bots b ON b.id = r.bot_id WHERE "
                     "b.name = 'first' AND b.version = 2 AND r.game = 'stop-me'")
    last = browser.execute_script(
        "const g = document.querySelector('section.rating[data-game=\"stop-me\"] "
        "g.series[data-label=\"first@2\"]'); return g.lastElementChild.textContent")
    assert f"mu {mu:.2f}" in last  # the history ends at the leaderboard's rating
    by_seat = browser.execute_script(
        "return [...document.querySelectorAll('#by-seat tbody tr')].map("
        "r => [r.cells[0].textContent, +r.cells[1].textContent, +r.cells[2].textContent, "
        "+r.cells[3].textContent])")
    expected = sql(db, "SELECT g.game, b.version, s.seat, COUNT(*) FROM seats s JOIN games g "
                       "ON g.id = s.game_id JOIN bots b ON b.id = s.bot_id WHERE b.name = "
                       "'first' AND g.void = 0 GROUP BY g.game, b.version, s.seat "
                       "ORDER BY g.game, b.version, s.seat")
    assert by_seat == [list(r) for r in expected]
    shot(browser, "bot")
    visit(browser, base + "bot/faulty.html")
    faults = browser.find_element("id", "faults")
    assert "NOT-AN-ACTION" in faults.text and "illegal" in faults.text
    browser.execute_script("arguments[0].scrollIntoView(); window.scrollBy(0, -110)", faults)
    shot(browser, "bot-faults")


def _state(driver: Any) -> dict[str, Any]:
    return driver.execute_script(
        "return {label: document.getElementById('step-label').textContent,"
        " moves: [...document.querySelectorAll('#decisions tbody tr')].map(r =>"
        "  [+r.dataset.seat, ...[...r.cells].slice(1).map(c => c.textContent)]),"
        " events: [...document.querySelectorAll('#events li[data-index]')].map(li =>"
        "  +li.dataset.index),"
        " view: document.getElementById('view').textContent}")


def _rows(move: dict[str, Any], seat: int | None = None) -> list[list[Any]]:
    return [[int(s), m["action"], m["by"], f"{ms(m['ms'])} ms"]
            for s, m in sorted(move.items(), key=lambda kv: int(kv[0]))
            if seat is None or int(s) == seat]


@browser_test
def test_replay_steps_forward_and_back(browser: Any, base: str, db: Path) -> None:
    gid = known_game(db)
    moves, numbers, _ = expected_steps(db, gid)
    visit(browser, f"{base}replay/{gid}.html")
    state = _state(browser)
    assert state["label"] == f"Setup (step 0 of {len(moves)})" and state["moves"] == []
    assert state["events"] == numbers[0] and "draw_order" in state["view"]
    shot(browser, "replay")
    forward = browser.find_element("id", "next")
    for step, move in enumerate(moves, 1):
        forward.click()
        state = _state(browser)
        assert state["label"] == f"Step {step} of {len(moves)}"
        assert state["moves"] == _rows(move), step
        assert state["events"] == numbers[step], step
        if step == 4:
            browser.execute_script("document.getElementById('perspectives').scrollIntoView()")
            shot(browser, "replay-step")
    assert not forward.is_enabled()
    back = browser.find_element("id", "prev")
    for step in range(len(moves) - 1, len(moves) - 6, -1):
        back.click()
        state = _state(browser)
        assert state["label"] == f"Step {step} of {len(moves)}"
        assert state["moves"] == _rows(moves[step - 1]) and state["events"] == numbers[step]
    assert browser.current_url.endswith(f"#step={len(moves) - 5}")
    browser.find_element("id", "first").click()
    assert _state(browser)["label"].startswith("Setup")


@browser_test
def test_a_seat_sees_only_its_own_events_and_moves(browser: Any, base: str, db: Path) -> None:
    gid = known_game(db)
    moves, numbers, events = expected_steps(db, gid)
    secret = next(n for n, e in enumerate(events, 1) if e.get("to") == [1])
    visit(browser, f"{base}replay/{gid}-seat0.html")
    assert '"to":[1]' not in browser.page_source and '"to":[]' not in browser.page_source
    # A seat numbers the events it sees from 1, with no gap where one was hidden from it
    # (the gaps would count them).
    own = [n for n, e in enumerate(events, 1) if "to" not in e or 0 in e["to"]]
    number = {n: k for k, n in enumerate(own, 1)}
    seen = [n for n in numbers[0] if n in number]
    assert _state(browser)["events"] == [number[n] for n in seen]
    forward = browser.find_element("id", "next")
    for step, move in enumerate(moves, 1):
        forward.click()
        state = _state(browser)
        assert state["moves"] == _rows(move, seat=0), step
        visible = [n for n in numbers[step] if "to" not in events[n - 1]
                   or 0 in events[n - 1]["to"]]
        assert state["events"] == [number[n] for n in visible]
        seen += visible
        if step == 4:
            browser.execute_script("document.getElementById('perspectives').scrollIntoView()")
            shot(browser, "replay-seat")
    assert secret not in seen and secret in numbers[next(i for i, ns in enumerate(numbers)
                                                         if secret in ns)]
    assert any("to" in events[n - 1] for n in seen)  # its own private events are there
    assert [number[n] for n in seen] == list(range(1, len(seen) + 1))


@browser_test
def test_every_replay_renders_in_the_browser(browser: Any, base: str, db: Path) -> None:
    for game in ("dagens-brott", "stand-and-deliver"):
        (gid,), = sql(db, "SELECT MIN(id) FROM games WHERE game = ?", (game,))
        visit(browser, f"{base}replay/{gid}.html#step=5")
        assert _state(browser)["label"].startswith("Step 5 of")
        shot(browser, f"replay-{game}")
        visit(browser, f"{base}replay/{gid}-seat2.html#step=5")
        assert all(m[0] == 2 for m in _state(browser)["moves"])


@browser_test
def test_pages_fit_a_phone(browser: Any, base: str, db: Path) -> None:
    viewport(browser, 390, 844)
    try:
        for path in ("", "leaderboard/stop-me.html", "bot/first.html", "tournament/1.html",
                     f"replay/{known_game(db)}.html#step=3"):
            visit(browser, base + path)
            wide = browser.execute_script(
                "return document.documentElement.scrollWidth - window.innerWidth")
            assert wide <= 1, (path, wide)  # wide tables scroll inside, not the page
        shot(browser, "phone-replay")
    finally:
        viewport(browser, 1000, 700)


LINES = """
const [cell] = arguments, walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
const tops = new Set(), range = document.createRange();
for (let n = walk.nextNode(); n; n = walk.nextNode()) {  // the line boxes of the text
  range.selectNodeContents(n);
  for (const r of range.getClientRects()) if (r.width > 0) tops.add(Math.round(r.top));
}
range.selectNodeContents(cell);
return [cell.textContent, tops.size, range.getBoundingClientRect().height,
        parseFloat(getComputedStyle(cell).lineHeight)];
"""


@browser_test
def test_short_cells_keep_their_words_at_a_desktop_width(browser: Any, base: str) -> None:
    """Issue 15 §4: game ids, formats and bot names stay on one line while the page has
    room: at 1000 px the home page's tournaments showed "dagens-/brott" and "round-/robin"
    on two lines each."""
    viewport(browser, 1000, 700)
    seen: set[str] = set()
    for path, selector in (("", "#tournaments tbody td:nth-child(-n+3)"),
                           ("tournaments.html", "#tournaments tbody td:nth-child(-n+3)"),
                           ("tournament/3.html", "#standings tbody td.name"),
                           ("bot/first.html", "#recent tbody td.nw")):
        visit(browser, base + path)
        cells = browser.find_elements("css selector", selector)
        assert cells, (path, selector)
        for cell in cells:
            text, lines, height, line = browser.execute_script(LINES, cell)
            assert lines == 1 and height < 1.5 * line, (path, text, lines, height, line)
            seen.add(text)
    assert {"dagens-brott", "stand-and-deliver", "round-robin"} <= seen
    assert browser.execute_script(
        "return document.scrollingElement.scrollWidth <= window.innerWidth")


@browser_test
def test_a_leaderboard_on_a_phone_shows_rank_bot_and_rating(browser: Any, base: str,
                                                            db: Path) -> None:
    """Issue 15 §4: at 390 px the rank, the bot and mu − 3σ are on the screen without any
    sideways scrolling (the page's or the table's); the other columns are hidden."""
    rows = json.loads(arena("leaderboard", "stop-me", "--json", "--db", str(db)).stdout)
    viewport(browser, 390, 844)
    try:
        visit(browser, base + "leaderboard/stop-me.html")
        fit = browser.execute_script(
            "const box = document.querySelector('#leaderboard').parentElement;"
            "return [document.scrollingElement.scrollWidth, window.innerWidth,"
            " box.scrollWidth, box.clientWidth]")
        assert fit[0] <= fit[1] and fit[2] <= fit[3], fit
        shown = browser.execute_script(
            "const w = window.innerWidth;"
            "return [...document.querySelectorAll('#leaderboard tbody tr')].map(r => {"
            " const on = [...r.cells].filter(c => getComputedStyle(c).display !== 'none');"
            " return [on.length, ...[0, 1, 6, 7].map(i => { const b ="
            "  r.cells[i].getBoundingClientRect(); return b.width > 0 && b.left >= 0 &&"
            "  b.right <= w; }), r.cells[0].textContent, r.cells[1].textContent,"
            " r.cells[6].textContent, r.cells[7].textContent]; })")
        assert shown == [[4, True, True, True, True, str(i), r["bot"],
                          f"{r['conservative']:.2f}", sure_text(r)]
                         for i, r in enumerate(rows["leaderboard"], 1)]
        shot(browser, "phone-leaderboard")
    finally:
        viewport(browser, 1000, 700)


@browser_test
def test_new_pages_in_the_browser(browser: Any, base: str, db: Path) -> None:
    """A head-to-head cell leads to its games, each with its replay; the tournament's
    standings, a bot's recent games with its opponents (screenshots for docs/web.md)."""
    visit(browser, base + "head-to-head/stop-me.html")
    cell = browser.find_element("css selector", '#head-to-head td[data-a="random@1"]'
                                                 '[data-b="faulty@1"] a')
    games = int(cell.find_element("xpath", "..").get_attribute("data-games"))
    cell.click()
    assert browser.title.startswith("random@1 and faulty@1 in stop-me")
    listed = browser.find_elements("css selector", "#pair-games tbody tr")
    assert len(listed) == games == 9
    shot(browser, "head-to-head-cell")
    listed[0].find_element("css selector", 'a[href^="../../replay/"]').click()
    assert browser.title.startswith("Replay ")
    visit(browser, base + "tournament/1.html")
    browser.execute_script("document.getElementById('standings').scrollIntoView();"
                           "window.scrollBy(0, -120)")
    shot(browser, "tournament-standings")
    visit(browser, base + "bot/first.html")
    recent = browser.find_element("id", "recent")
    assert recent.find_elements("css selector", "span.opponent a")
    browser.execute_script("arguments[0].scrollIntoView(); window.scrollBy(0, -110)", recent)
    shot(browser, "bot-recent")


@browser_test
def test_exported_pages_open_from_disk(browser: Any, db: Path, tmp_path: Path) -> None:
    out = arena("export-html", str(tmp_path / "site"), "--db", str(db))
    assert out.returncode == 0, out.stderr
    visit(browser, (tmp_path / "site" / "index.html").as_uri())
    browser.find_element("link text", "stop-me").click()
    assert browser.title.startswith("Leaderboard stop-me")
    browser.find_element("css selector", "#leaderboard tbody tr a").click()
    assert browser.title.startswith("Bot ")
    browser.find_element("css selector", 'a[href^="../replay/"]').click()
    assert browser.title.startswith("Replay ")
    browser.find_element("id", "next").click()
    assert _state(browser)["label"].startswith("Step 1 of")
    browser.find_element("partial link text", "seat 1").click()
    assert browser.title.endswith("seat 1 · Arena") and browser.current_url.startswith("file:")
    shot(browser, "export-replay-seat")


@browser_test
def test_hostile_text_runs_nothing_and_fits_a_phone(browser: Any, hostile_base: str,
                                                    hostile_db: Path) -> None:
    """Markup from bots, tournament names and options is shown as text on every page,
    no script runs, and no long name makes a page wider than a phone (was 1,400 px wider)."""
    from selenium.common.exceptions import NoAlertPresentException

    gid = sql(hostile_db, "SELECT MIN(id) FROM games")[0][0]
    viewport(browser, 375, 800)
    try:
        for path in ("", "tournaments.html", "tournament/1.html", f"bot/{quote(EVIL[0])}.html",
                     f"bot/{LONG}.html", "leaderboard/stop-me.html", "head-to-head/stop-me.html",
                     f"replay/{gid}.html#step=99999", f"replay/{gid}-seat1.html#step=99999"):
            visit(browser, hostile_base + path)
            with pytest.raises(NoAlertPresentException):
                browser.switch_to.alert  # noqa: B018 - no alert() ran
            # The data, then the table helpers, stop-me's renderer and the viewer.
            scripts = 1 + len(replay_scripts("stop-me")) if path.startswith("replay/") else 0
            assert browser.execute_script(
                "return [document.images.length, document.scripts.length]") == [0, scripts]
            wide = browser.execute_script(
                "return document.documentElement.scrollWidth - window.innerWidth")
            assert wide <= 1, (path, wide)
        text = browser.find_element("tag name", "main").text  # the seat's replay, at the end
        assert EVIL[0] in text and EVIL_TOURNAMENT in text
        shot(browser, "phone-hostile-replay")
        visit(browser, hostile_base + f"bot/{quote(EVIL[0])}.html")
        logs = browser.find_element("tag name", "main").get_attribute("textContent")
        assert EVIL[1] in logs and "is not one of the legal actions" in logs  # faults, stderr
    finally:
        viewport(browser, 1000, 700)


def test_serving_never_changed_the_database(base: str, db: Path) -> None:
    before = fingerprint(db)
    crawl(base)
    for path in ("bot/nobody.html", "replay/abc.html", "leaderboard/x.html"):
        get(base + path)
    get(base + "index.html", "POST", b"x=1")
    assert fingerprint(db) == before
