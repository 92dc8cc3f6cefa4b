"""The data of the pages a new user missed (issue 15 §4): a bot's recent games with its
opponents, head-to-head cells and the games behind them, a tournament's standings and
crosstable. Over a real database of real tournaments (real bot programs in the
sandbox and a built-in bot), each answer checked against the stored seats.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from arena import botstore, tournament
from arena.executors import ProcessExecutor
from leaderboard.store import Store, StoreReader
from leaderboard.web import author_data, data
from leaderboard.web.data import PageError

from .helpers import sql

FIRST_BOT = """\
import sys
from protocol.client import run
print("\u00e9" * 5000, file=sys.stderr)  # two bytes a character: size in bytes, not chars
def act(observation, legal):
    print("first thinks <b>", file=sys.stderr)
    return legal[0]
run(act, name="first")
"""
FAULTY_BOT = """\
from protocol.client import run
calls = [0]
def act(observation, legal):
    calls[0] += 1
    return "NOT-AN-ACTION" if calls[0] % 5 == 0 else legal[-1]
run(act, name="faulty")
"""


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two stop-me tournaments (a bot with two versions, a bot that faults, the built-in
    random bot) and one dagens-brott tournament."""
    tmp = tmp_path_factory.mktemp("pages")
    (tmp / "first.py").write_text(FIRST_BOT)
    (tmp / "faulty.py").write_text(FAULTY_BOT)
    store = Store(tmp / "arena.db")
    botstore.add_bot(store, "first", str(tmp / "first.py"))
    botstore.add_bot(store, "faulty", str(tmp / "faulty.py"))

    def play(name: str, game: str, bots: list[str], options: dict | None = None) -> None:
        tournament.create(store, name=name, game=game, bots=bots, seats=3,
                          games_per_seating=1, duplicate=True, fmt="round-robin", seed=3,
                          options=options or {}, settings=tournament.Settings())
        tournament.run(store, name, ProcessExecutor(2))

    play("sm-1", "stop-me", ["builtin:random", "first", "faulty"], {"max_rounds": 4})
    (tmp / "first.py").write_text(FIRST_BOT.replace('"first"', '"first-2"'))
    botstore.add_bot(store, "first", str(tmp / "first.py"))
    play("sm-2", "stop-me", ["builtin:random", "first@2", "faulty"], {"max_rounds": 4})
    play("db-1", "dagens-brott", ["builtin:random", "first@1", "faulty"], {"rounds": 1})
    store.close()
    return tmp / "arena.db"


@pytest.fixture
def reader(db: Path) -> StoreReader:
    return StoreReader(db)


def seats_of(db: Path) -> list[dict]:
    """Every stored seat with its game, tournament and bot: the truth to check against."""
    store = StoreReader(db)
    try:
        return sql(store, "SELECT g.id, g.game, g.void, t.name AS tournament, s.seat, "
                          "b.id AS bot_id, b.name, b.version, s.rank, s.score, s.status "
                          "FROM seats s JOIN games g ON g.id = s.game_id "
                          "JOIN tournaments t ON t.id = g.tournament_id "
                          "JOIN bots b ON b.id = s.bot_id ORDER BY g.id, s.seat")
    finally:
        store.close()


# --------------------------------------------------------------- recent games
def test_a_bots_recent_games_show_its_seat_and_every_opponent(db: Path,
                                                              reader: StoreReader) -> None:
    seats = seats_of(db)
    games = data.recent_games(reader, "first", limit=5)
    mine = [s for s in seats if s["name"] == "first"]
    newest = sorted({s["id"] for s in mine}, reverse=True)[:5]
    assert [g["id"] for g in games] == newest  # newest first, limited
    assert {g["version"] for g in data.recent_games(reader, "first", 100)} == {1, 2}
    for g in games:
        truth = [s for s in seats if s["id"] == g["id"]]
        own = next(s for s in truth if s["name"] == "first")
        assert (g["seat"], g["rank"], g["score"], g["status"], g["tournament"]) == (
            own["seat"], own["rank"], own["score"], own["status"], own["tournament"])
        assert g["label"] == f"first@{own['version']}"
        assert g["replay"] == f"{g['id']}-seat{own['seat']}"
        assert [(o["seat"], o["label"], o["rank"], o["status"]) for o in g["opponents"]] == [
            (s["seat"], f"{s['name']}@{s['version']}", s["rank"], s["status"])
            for s in truth if s["seat"] != own["seat"]]
        assert {o["bot"] for o in g["opponents"]} == {"builtin:random", "faulty"}
    json.dumps(games, allow_nan=False)  # a template (or the API) shows it as it is


def test_recent_games_of_an_unknown_bot_are_a_404(reader: StoreReader) -> None:
    with pytest.raises(PageError) as err:
        data.recent_games(reader, "nobody")
    assert err.value.status == 404 and "'nobody'" in err.value.message
    assert data.games_with_opponents(reader, ["nobody"]) == []


# ---------------------------------------------------------------- head to head
def test_each_head_to_head_cell_links_to_the_games_it_counts(db: Path,
                                                             reader: StoreReader) -> None:
    seats = [s for s in seats_of(db) if s["game"] == "stop-me" and not s["void"]]
    table = data.head_to_head_table(reader, "stop-me")
    ids = [p["id"] for p in table["players"]]
    assert [r["player"]["id"] for r in table["rows"]] == ids
    linked = 0
    for row in table["rows"]:
        for col, cell in zip(table["players"], row["cells"], strict=True):
            a, b = row["player"]["id"], col["id"]
            by_game: dict[int, dict[int, int]] = {}
            for s in seats:
                by_game.setdefault(s["id"], {})[s["bot_id"]] = s["rank"]
            met = {g: r for g, r in by_game.items() if a in r and b in r}
            if a == b or not met:
                assert cell is None
                continue
            linked += 1
            assert cell["key"] == f"{a}-{b}" and data.parse_cell(cell["key"]) == (a, b)
            listed = data.pair_games(reader, "stop-me", a, b)
            assert [g["id"] for g in listed["listed"]] == sorted(met, reverse=True)
            outcomes = Counter(g["ahead"] for g in listed["listed"])
            assert (cell["ahead"], cell["behind"], cell["even"], cell["games"]) == (
                outcomes["a"], outcomes["b"], outcomes["even"], len(met)) == (
                listed["ahead"], listed["behind"], listed["even"], listed["games"])
            for g in listed["listed"]:
                assert (g["a_rank"], g["b_rank"]) == (met[g["id"]][a], met[g["id"]][b])
    assert linked >= 6  # random, faulty, first@1, first@2: every pair but first@1-first@2


def test_a_head_to_head_list_is_limited_and_says_how_many_are_left(
        reader: StoreReader) -> None:
    table = data.head_to_head_table(reader, "stop-me")
    cell = next(c for r in table["rows"] for c in r["cells"] if c and c["games"] > 2)
    cut = data.pair_games(reader, "stop-me", cell["a"], cell["b"], limit=2)
    assert len(cut["listed"]) == 2 and cut["more"] == cell["games"] - 2
    assert cut["games"] == cell["games"]


@pytest.mark.parametrize("key", ["1", "1-2-3", "a-b", "-1-2", "1-", "١-٢", "9" * 30 + "-1",
                                 "../1-2", "<b>1-2"])
def test_a_malformed_cell_key_is_a_404_quoting_it(key: str) -> None:
    with pytest.raises(PageError) as err:
        data.parse_cell(key)
    assert err.value.status == 404 and repr(key[:80]) in err.value.message


def test_a_cell_of_bots_that_never_met_there_is_a_404(reader: StoreReader) -> None:
    players = data.head_to_head_table(reader, "stop-me")["players"]
    a = players[0]["id"]
    for b in (a, 10**9):
        with pytest.raises(PageError) as err:
            data.pair_games(reader, "stop-me", a, b)
        assert err.value.status == 404
    with pytest.raises(PageError):
        data.pair_games(reader, "no-such-game", a, players[1]["id"])


# ------------------------------------------------------ standings, crosstable
@pytest.mark.parametrize("name", ["sm-1", "sm-2", "db-1"])
def test_a_tournament_shows_standings_sorted_by_result_and_a_crosstable(
        db: Path, reader: StoreReader, name: str) -> None:
    tid = reader.tournament_id(name)
    assert tid is not None
    result = data.tournament_results(reader, tid)
    seats = [s for s in seats_of(db) if s["tournament"] == name and not s["void"]]
    standings = result["standings"]
    assert len(standings) == 3 and result["tournament"]["name"] == name
    for row in standings:
        mine = [s for s in seats if s["bot_id"] == row["id"]]
        assert row["games"] == len(mine) > 0
        assert row["wins"] == sum(s["rank"] == 1 for s in mine)
        assert row["mean_rank"] == pytest.approx(sum(s["rank"] for s in mine) / len(mine))
        assert row["total_score"] == pytest.approx(sum(s["score"] for s in mine))
        assert row["faults"] == sum(s["status"] != "ok" for s in mine)
    keys = [(r["mean_rank"], -r["wins"], -r["mean_score"]) for r in standings]
    assert keys == sorted(keys)  # sorted by result, the tie rule's order
    for i, row in enumerate(standings):
        shared = i and keys[i - 1] == keys[i]
        assert row["place"] == (standings[i - 1]["place"] if shared else i + 1)
    order = [r["id"] for r in standings]
    assert [r["entrant"]["id"] for r in result["crosstable"]] == order
    for row in result["crosstable"]:
        a = row["entrant"]["id"]
        assert [c["b"] if c else a for c in row["cells"]] == order
        for cell in row["cells"]:
            if cell is None:
                continue
            both = {}
            for s in seats:
                both.setdefault(s["id"], {})[s["bot_id"]] = s["rank"]
            met = [r for r in both.values() if a in r and cell["b"] in r]
            assert (cell["ahead"], cell["behind"], cell["even"], cell["games"]) == (
                sum(r[a] < r[cell["b"]] for r in met), sum(r[a] > r[cell["b"]] for r in met),
                sum(r[a] == r[cell["b"]] for r in met), len(met))
    json.dumps(result, allow_nan=False)


def test_standings_share_a_place_on_a_full_tie_and_list_idle_entrants_last(
        tmp_path: Path) -> None:
    """A tie on every merit key is one place, in entrant order; an entrant with no game
    has no place and comes last (the tie rule, in words on the page)."""
    from leaderboard import board

    from .helpers import game_record
    store = Store(tmp_path / "arena.db")
    bots = [store.add_bot(n, n, f"/bots/{n}", "file")[0]["id"] for n in "abcd"]
    board.environment(store, "stop-me")
    schedule = [{"idx": i, "match": i, "deal_group": i, "seed": i, "seating": bots[:3]}
                for i in range(2)]
    tid = store.create_tournament(
        {"name": "tie", "game": "stop-me", "format": "round-robin", "seats": 3,
         "games_per_seating": 1, "duplicate": False, "seed": 1, "options": {},
         "settings": {}}, bots, schedule)
    for row, ranks in zip(schedule, [[1, 2, 3], [2, 1, 3]], strict=True):
        store.record_game(tid, row, "stop-me", game_record([{"rank": r} for r in ranks]))
    result = data.tournament_results(StoreReader(store.path), tid)
    assert [(r["name"], r["place"]) for r in result["standings"]] == [
        ("a", 1), ("b", 1), ("c", 3), ("d", None)]
    assert result["crosstable"][0]["cells"][1] == {"a": bots[0], "b": bots[1], "ahead": 1,
                                                   "behind": 1, "even": 0, "games": 2}
    assert result["crosstable"][0]["cells"][3]["games"] == 0
    assert "mean rank" in result["tie_rule"]
    with pytest.raises(PageError) as err:
        data.tournament_results(StoreReader(store.path), tid + 99)
    assert err.value.status == 404
    store.close()




# ----------------------------------------------------------- an author's pages
def test_an_author_sees_their_bots_and_every_version(reader: StoreReader) -> None:
    bots = author_data.author_bots(reader, ["first", "faulty", "pending"])
    assert [b["name"] for b in bots] == ["faulty", "first", "pending"]
    first = bots[1]
    assert [(v["version"], v["label"], v["removed"]) for v in first["versions"]] == [
        (1, "first@1", False), (2, "first@2", False)]
    rows = reader.bot_versions("first")
    assert [(v["hash"], v["added_at"], v["id"]) for v in first["versions"]] == [
        (r.hash, r.added_at, r.id) for r in rows]
    assert first["newest"] == 2 and not first["removed"]
    assert bots[2] == {"name": "pending", "newest": None, "removed": False, "versions": []}
    json.dumps(bots)


def test_an_author_reads_each_matchs_stderr_cut_with_its_size_said(
        db: Path, reader: StoreReader) -> None:
    logs = author_data.bot_logs(reader, ["first"], "first", max_chars=100)
    truth = sql(reader, "SELECT l.id, l.text, b.version FROM logs l JOIN bots b "
                        "ON b.id = l.bot_id WHERE b.name = 'first' ORDER BY l.id DESC")
    assert [g["id"] for g in logs] == [t["id"] for t in truth][:author_data.LOGS]
    assert {g["version"] for g in logs} == {1, 2}
    for log, stored in zip(logs, truth, strict=False):
        whole = stored["text"]
        assert log["text"] == whole[:100] and log["truncated"] == (len(whole) > 100)
        assert (log["bytes"], log["chars"]) == (len(whole.encode()), len(whole))
        assert log["bytes"] > log["chars"]  # the accented line: bytes, not characters
    only = author_data.bot_logs(reader, ["first"], "first", version=2, limit=1,
                                max_chars=10**6)
    assert len(only) == 1 and only[0]["version"] == 2 and only[0]["label"] == "first@2"
    assert not only[0]["truncated"] and only[0]["chars"] == len(only[0]["text"])
    assert "first thinks <b>" in only[0]["text"]  # as written: the template escapes it


@pytest.mark.parametrize(("names", "name", "version"), [
    (["first"], "faulty", None),  # another author's bot
    (["first"], "nobody", None),  # no such bot at all: the same 404
    ([], "first", None),
    (["first"], "first", 9),
])
def test_another_authors_or_an_unknown_bots_logs_are_a_404(
        reader: StoreReader, names: list[str], name: str, version: int | None) -> None:
    with pytest.raises(PageError) as err:
        author_data.bot_logs(reader, names, name, version)
    assert err.value.status == 404
    if version is None:  # a bot not theirs reads as one that does not exist
        assert err.value.message == f"You have no bot named {name!r}."


def test_an_authors_games_link_the_replay_from_their_own_seat(
        db: Path, reader: StoreReader) -> None:
    games = author_data.author_games(reader, ["faulty"], limit=100)
    seats = [s for s in seats_of(db) if s["name"] == "faulty"]
    assert sorted((g["id"], g["seat"]) for g in games) == sorted(
        (s["id"], s["seat"]) for s in seats)
    for g in games:
        assert g["replay"] == f"{g['id']}-seat{g['seat']}" and g["bot"] == "faulty"
        assert author_data.seat_of(reader, g["id"], ["faulty"]) == [g["seat"]]
        assert g["seat"] not in [o["seat"] for o in g["opponents"]]


def test_seat_of_is_empty_for_a_game_without_the_authors_bots(
        db: Path, reader: StoreReader) -> None:
    seats = seats_of(db)
    sm2 = {s["id"] for s in seats if s["tournament"] == "sm-2"}
    game = min(sm2)
    assert author_data.seat_of(reader, game, ["first"]) == [
        s["seat"] for s in seats if s["id"] == game and s["name"] == "first"]
    assert author_data.seat_of(reader, game, ["nobody"]) == []
    assert author_data.seat_of(reader, game, []) == []
    assert author_data.seat_of(reader, 10**9, ["first"]) == []
    both = author_data.seat_of(reader, game, ["first", "faulty", "first"])
    assert both == sorted(s["seat"] for s in seats if s["id"] == game
                          and s["name"] in ("first", "faulty"))


def test_an_author_sees_each_fault_with_its_causes(db: Path, reader: StoreReader) -> None:
    faults = author_data.author_faults(reader, ["faulty", "first"])
    stored = sql(reader, "SELECT s.game_id, s.seat, s.status, s.fault_log FROM seats s "
                         "JOIN bots b ON b.id = s.bot_id WHERE b.name = 'faulty' AND "
                         "(s.status != 'ok' OR s.fault_log != '[]') ORDER BY s.game_id DESC")
    assert stored, "the fixture's faulty bot must fault"
    assert [(f["id"], f["seat"], f["status"]) for f in faults] == [
        (s["game_id"], s["seat"], s["status"]) for s in stored][:author_data.FAULTS]
    for f, s in zip(faults, stored, strict=False):
        log = json.loads(s["fault_log"])
        assert [f"{c['kind']}: {c['detail']}" for c in f["causes"]] == log
        assert all(c["kind"] and c["kind"] in f["faults"] for c in f["causes"])
        assert "NOT-AN-ACTION" in " ".join(c["detail"] for c in f["causes"])
        assert f["replay"] == f"{f['id']}-seat{f['seat']}" and f["label"] == "faulty@1"
    assert author_data.author_faults(reader, ["first"]) == []
    assert author_data.cause("no colon here") == {"kind": "", "detail": "no colon here"}


# ------------------------------------------------ a new version's rating start
def test_a_second_version_started_near_its_bot_and_the_history_ends_at_the_board(
        db: Path, tmp_path: Path) -> None:
    """first@2 joined the stop-me leaderboard after first@1 had played there: it started
    at first@1's mu then, with the initial sigma (issue 15 §3); the web's rating
    history ends at each stored rating, and a rebuild of a copy gives the same numbers."""
    import shutil

    from leaderboard import board
    from leaderboard.ratings import Rating, rate_ffa

    reader = StoreReader(db)
    history = data.rating_history(reader, "stop-me")
    stored = {r.bot_id: r for r in reader.ratings_of("stop-me")}
    for bot, points in history.items():
        assert (points[-1]["mu"], points[-1]["sigma"]) == (stored[bot].mu, stored[bot].sigma)
    v1, v2 = (b.id for b in reader.bot_versions("first"))
    first_v2 = history[v2][0]
    before = [p for p in history[v1] if p["n"] < first_v2["n"]][-1]  # v1's mu just then
    [result] = [r for r in reader.result_stream("stop-me") if r.game_id == first_v2["game_id"]]
    env = board.environment_of(reader.leaderboard("stop-me"))
    others = {b: [p for p in pts if p["n"] < first_v2["n"]] for b, pts in history.items()}
    starts = [Rating(before["mu"], env.sigma) if s.bot_id == v2 else
              Rating(others[s.bot_id][-1]["mu"], others[s.bot_id][-1]["sigma"])
              for s in result.seats]
    new = rate_ffa(env, starts, [s.rank for s in result.seats])
    mine = next(i for i, s in enumerate(result.seats) if s.bot_id == v2)
    assert (first_v2["mu"], first_v2["sigma"]) == (new[mine].mu, new[mine].sigma)
    assert before["sigma"] < env.sigma  # so the start did reset it, not keep v1's
    reader.close()
    copy = tmp_path / "copy.db"
    shutil.copy(db, copy)
    store = Store(copy)
    board.rebuild(store, "stop-me")
    assert {r.bot_id: (r.mu, r.sigma, r.games) for r in store.ratings_of("stop-me")} == {
        b: (r.mu, r.sigma, r.games) for b, r in stored.items()}
    store.close()
