"""The pages that need only the database: start page, leaderboards, bots, head-to-head,
tournaments. Each function returns one HTML page or raises
:class:`~leaderboard.web.data.PageError` (404 for an unknown game, bot or tournament).

The replay page needs the game engines, so it lives in :mod:`arena.web.replay`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from .. import board
from ..store import Store
from .chart import Series, line_chart
from .data import boards, head_to_head, not_found, rating_history, require_board, tournaments
from .layout import esc, href, link, num, page, progress, status, table, when

UP = "../"  # pages in a folder (leaderboard/, bot/, ...) reach the root through this
FAULT_ROWS = 200
GAME_ROWS = 2000


def _bot_link(root: str, row: dict[str, Any], name_key: str = "bot") -> str:
    return link(root, "bot", row[name_key], row[name_key])


def _replay_link(root: str, game_id: int, text: Any = None) -> str:
    return link(root, "replay", game_id, f"#{game_id}" if text is None else text)


def index_page(store: Store) -> str:
    """The start page: every leaderboard's top five, the bots, the latest tournaments."""
    games = boards(store)
    cards = []
    for game in games:
        rows = board.standings(store, game)[:5]
        body = table(rows, [
            ("rank", "#", None),
            ("bot", "bot", lambda r: link("", "bot", r["bot"], f"{r['bot']}@{r['version']}")),
            ("conservative", "mu−3σ", lambda r: num(r["conservative"])),
            ("games", "games", None)], numeric=("rank", "conservative", "games"))
        cards.append(f'<section class="card"><h2>{link("", "leaderboard", game, game)}</h2>'
                     f'{body}<p>{link("", "leaderboard", game, "full leaderboard")} · '
                     f'{link("", "head-to-head", game, "head-to-head")}</p></section>')
    bots = store.rows("SELECT name, COUNT(*) AS versions, MAX(version) AS newest, "
                      "MIN(removed_at IS NOT NULL) AS removed FROM bots GROUP BY name "
                      "ORDER BY name")
    bot_list = " ".join(
        f'<span class="chip">{link("", "bot", b["name"], b["name"])}'
        f'{" v" + str(b["newest"]) if b["versions"] > 1 else ""}'
        f'{" (removed)" if b["removed"] else ""}</span>' for b in bots)
    recent = tournaments(store)[:5]
    body = ('<h1>Arena</h1><p class="lead">Leaderboards, bots, tournaments and replays of '
            "this arena database.</p>"
            + (f'<div class="cards">{"".join(cards)}</div>' if cards else
               '<p class="muted">No leaderboard yet: run a tournament.</p>')
            + f"<h2>Bots</h2><p>{bot_list or '<span class=muted>None registered.</span>'}</p>"
            + "<h2>Latest tournaments</h2>" + _tournament_table("", recent)
            + f'<p><a href="{href("", "tournaments.html")}">All tournaments</a></p>')
    return page("Arena", body, "", games)


def leaderboard_page(store: Store, game: str) -> str:
    """One game's leaderboard, best first by mu − 3σ, as ``arena leaderboard GAME`` shows it."""
    state = require_board(store, game)
    rows = board.standings(store, game)
    env = {k: state[k] for k in ("mu", "sigma", "beta", "tau", "draw_probability")}
    body = (f"<h1>Leaderboard: {esc(game)}</h1>"
            f'<p class="lead">TrueSkill ratings of every bot version, sorted by the conservative '
            f"rating mu − 3σ; {state['rated_games']} rated games.</p>"
            + table(rows, [
                ("rank", "#", None), ("bot", "bot", lambda r: _bot_link(UP, r)),
                ("version", "version", None), ("mu", "mu", lambda r: num(r["mu"])),
                ("sigma", "sigma", lambda r: num(r["sigma"])),
                ("conservative", "mu−3σ", lambda r: f"<b>{num(r['conservative'])}</b>"),
                ("games", "games", None), ("wins", "wins", None),
                ("mean_rank", "avg rank", lambda r: num(r["mean_rank"])),
                ("faults", "faults", None)],
                numeric=("rank", "version", "mu", "sigma", "conservative", "games", "wins",
                         "mean_rank", "faults"), table_id="leaderboard",
                row_attrs=lambda r: f'data-bot="{esc(r["bot"])}" data-version="{r["version"]}"',
                empty="No rated games yet.")
            + '<p class="muted">TrueSkill: ' + esc(", ".join(f"{k}={v:g}" for k, v in env.items()))
            + "</p>"
            + f'<p>{link(UP, "head-to-head", game, "Head-to-head table")} · '
            f'<a href="{href(UP, "tournaments.html")}">Tournaments</a></p>')
    return page(f"Leaderboard {game}", body, UP, boards(store))


def head_to_head_page(store: Store, game: str) -> str:
    """How often each bot version finished strictly ahead of each other one, in ``game``."""
    require_board(store, game)
    players, pairs = head_to_head(store, game)
    names = [f"{p['name']}@{p['version']}" for p in players]
    head = "".join(f'<th scope="col">{link(UP, "bot", p["name"], n)}</th>'
                   for p, n in zip(players, names, strict=True))
    lines = []
    for a, a_name in zip(players, names, strict=True):
        cells = []
        for b in players:
            if a["id"] == b["id"]:
                cells.append('<td class="h2h muted">—</td>')
                continue
            ahead, games = pairs.get((a["id"], b["id"]), (0, 0))
            if not games:
                cells.append('<td class="h2h muted" data-games="0">·</td>')
                continue
            share = ahead / games
            colour = f"hsla({round(120 * share)},60%,45%,.22)"
            cells.append(f'<td class="h2h" style="background:{colour}" data-a="{esc(a_name)}" '
                         f'data-b="{esc(names[players.index(b)])}" data-ahead="{ahead}" '
                         f'data-games="{games}" title="{esc(a_name)} ahead of '
                         f'{esc(names[players.index(b)])} in {ahead} of {games} games">'
                         f"{round(100 * share)}%<small>{ahead}/{games}</small></td>")
        lines.append(f'<tr><th scope="row">{link(UP, "bot", a["name"], a_name)}</th>'
                     f"{''.join(cells)}</tr>")
    grid = (f'<div class="scroll"><table id="head-to-head"><thead><tr><th>ahead of →</th>{head}'
            f"</tr></thead><tbody>{''.join(lines)}</tbody></table></div>" if players else
            '<p class="muted">No games yet.</p>')
    body = (f"<h1>Head-to-head: {esc(game)}</h1>"
            '<p class="lead">Each cell: how often the row\'s bot finished strictly ahead of the '
            "column's bot, over the games both played (void games left out, ties count for "
            "neither).</p>" + grid
            + f'<p>{link(UP, "leaderboard", game, "Leaderboard")}</p>')
    return page(f"Head-to-head {game}", body, UP, boards(store))


def bot_page(store: Store, name: str) -> str:
    """A bot: its versions, rating history per game, results by seat, faults, recent games."""
    versions = store.rows("SELECT * FROM bots WHERE name = ? ORDER BY version", (name,))
    if not versions:
        raise not_found(f"There is no bot named {name!r}.")
    ids = {v["id"]: v["version"] for v in versions}
    marks = ",".join("?" * len(ids))
    parts = [f"<h1>Bot {esc(name)}</h1>", "<h2>Versions</h2>", table(versions, [
        ("version", "version", None), ("kind", "kind", None),
        ("hash", "content hash", lambda r: f"<code>{esc(r['hash'][:16])}</code>"),
        ("added_at", "added", lambda r: when(r["added_at"])),
        ("removed_at", "state", lambda r: "removed " + when(r["removed_at"]) if r["removed_at"]
         else '<span class="status-ok">active</span>')], numeric=("version",),
        table_id="versions")]
    ratings = store.rows(
        f"SELECT r.*, b.version, r.mu - 3 * r.sigma AS conservative FROM ratings r "
        f"JOIN bots b ON b.id = r.bot_id WHERE r.bot_id IN ({marks}) "
        f"ORDER BY r.game, b.version", list(ids))
    parts.append("<h2>Ratings</h2>")
    if not ratings:
        parts.append('<p class="muted">No rated games yet.</p>')
    for game in sorted({r["game"] for r in ratings}):
        mine = [r for r in ratings if r["game"] == game]
        standing = {(s["bot"], s["version"]): s["rank"] for s in board.standings(store, game)}
        history = rating_history(store, game)
        for r in mine:
            r["place"] = standing.get((name, r["version"]))
        series = []
        for r in mine:
            points = history.get(r["bot_id"], [])
            series.append(Series(
                f"{name}@{r['version']}", [p["n"] for p in points], [p["mu"] for p in points],
                [f"game {p['game_id']}: rank {p['rank']}, mu {p['mu']:.2f}, "
                 f"sigma {p['sigma']:.2f}" for p in points],
                [p["mu"] - 3 * p["sigma"] for p in points]))
        chart = line_chart(series, title=f"Rating of {name} in {game}",
                           x_label=f"rated games of {game}", y_label="mu")
        parts.append(
            f'<section class="card rating" data-game="{esc(game)}"><h3>'
            f'{link(UP, "leaderboard", game, game)}</h3>'
            + table(mine, [
                ("version", "version", None),
                ("place", "place", None),
                ("mu", "mu", lambda r: num(r["mu"])), ("sigma", "sigma", lambda r: num(r["sigma"])),
                ("conservative", "mu−3σ", lambda r: num(r["conservative"])),
                ("games", "games", None), ("wins", "wins", None), ("faults", "faults", None)],
                numeric=("version", "place", "mu", "sigma", "conservative", "games", "wins",
                         "faults"))
            + chart + "</section>")
    by_seat = store.rows(
        f"SELECT g.game, b.version, s.seat, COUNT(*) AS games, SUM(s.rank = 1) AS wins, "
        f"AVG(s.rank) AS mean_rank, AVG(s.score) AS mean_score, SUM(s.status != 'ok') AS faults, "
        f"CASE WHEN SUM(s.asked) > 0 THEN CAST(SUM(s.time_ms) AS REAL) / SUM(s.asked) END AS ms "
        f"FROM seats s JOIN games g ON g.id = s.game_id JOIN bots b ON b.id = s.bot_id "
        f"WHERE s.bot_id IN ({marks}) AND g.void = 0 GROUP BY g.game, b.version, s.seat "
        f"ORDER BY g.game, b.version, s.seat", list(ids))
    parts += ["<h2>Results by seat</h2>", table(by_seat, [
        ("game", "game", lambda r: link(UP, "leaderboard", r["game"], r["game"])),
        ("version", "version", None), ("seat", "seat", None), ("games", "games", None),
        ("wins", "wins", None), ("mean_rank", "avg rank", lambda r: num(r["mean_rank"])),
        ("mean_score", "avg score", lambda r: num(r["mean_score"])),
        ("faults", "games with faults", None),
        ("ms", "ms per decision", lambda r: num(r["ms"], 1))],
        numeric=("version", "seat", "games", "wins", "mean_rank", "mean_score", "faults", "ms"),
        table_id="by-seat", empty="No games yet.")]
    parts.append(_faults(store, ids, marks))
    parts.append(_logs(store, ids, marks))
    recent = store.rows(
        f"SELECT g.id, g.game, t.name AS tournament, t.id AS tid, b.version, s.seat, s.rank, "
        f"s.score, s.status, g.finished_at FROM seats s JOIN games g ON g.id = s.game_id "
        f"JOIN tournaments t ON t.id = g.tournament_id JOIN bots b ON b.id = s.bot_id "
        f"WHERE s.bot_id IN ({marks}) ORDER BY g.id DESC LIMIT 20", list(ids))
    parts += ["<h2>Recent games</h2>", table(recent, [
        ("id", "replay", lambda r: _replay_link(UP, r["id"])), ("game", "game", None),
        ("tournament", "tournament", lambda r: link(UP, "tournament", r["tid"], r["tournament"])),
        ("version", "version", None), ("seat", "seat", None), ("rank", "rank", None),
        ("score", "score", lambda r: num(r["score"], 1)), ("status", "status",
                                                           lambda r: status(r["status"]))],
        numeric=("version", "seat", "rank", "score"), empty="No games yet.")]
    return page(f"Bot {name}", "".join(parts), UP, boards(store))


def _faults(store: Store, ids: dict[int, int], marks: str) -> str:
    rows = store.rows(
        f"SELECT g.id, g.game, t.name AS tournament, t.id AS tid, b.version, s.seat, s.status, "
        f"s.faults, s.fault_log FROM seats s JOIN games g ON g.id = s.game_id "
        f"JOIN tournaments t ON t.id = g.tournament_id JOIN bots b ON b.id = s.bot_id "
        f"WHERE s.bot_id IN ({marks}) AND (s.status != 'ok' OR s.fault_log != '[]') "
        f"ORDER BY g.id DESC", list(ids))
    shown = rows[:FAULT_ROWS]

    def kinds(r: dict[str, Any]) -> str:
        counts = json.loads(r["faults"] or "{}")
        return " ".join(f'<span class="chip">{esc(k)} ×{esc(v)}</span>'
                        for k, v in counts.items() if v)

    def log(r: dict[str, Any]) -> str:
        lines = json.loads(r["fault_log"] or "[]")
        return f"<pre>{esc(chr(10).join(map(str, lines)))}</pre>" if lines else ""

    note = (f'<p class="muted">The {FAULT_ROWS} newest of {len(rows)} games with faults.</p>'
            if len(rows) > FAULT_ROWS else "")
    return ("<h2>Faults</h2><p class=\"lead\">Every game where this bot faulted, with the "
            "referee's fault log for its seat (the cause of each fault, in order).</p>" + note
            + table(shown, [
                ("id", "replay", lambda r: _replay_link(UP, r["id"])), ("game", "game", None),
                ("tournament", "tournament",
                 lambda r: link(UP, "tournament", r["tid"], r["tournament"])),
                ("version", "version", None), ("seat", "seat", None),
                ("status", "status", lambda r: status(r["status"])),
                ("faults", "faults", kinds), ("fault_log", "fault log", log)],
                numeric=("version", "seat"), table_id="faults", empty="No faults."))


def _logs(store: Store, ids: dict[int, int], marks: str) -> str:
    """The bot's captured output (stderr, capped at 64 KiB per match), newest first."""
    if "logs" not in store.db.table_names():
        return ""  # a database from before schema 3
    rows = store.rows(
        f"SELECT l.match, l.seat, l.text, b.version, t.name AS tournament, t.id AS tid "
        f"FROM logs l JOIN bots b ON b.id = l.bot_id JOIN tournaments t ON t.id = l.tournament_id "
        f"WHERE l.bot_id IN ({marks}) ORDER BY l.id DESC LIMIT {FAULT_ROWS}", list(ids))
    blocks = "".join(
        f'<details class="log"><summary>{link(UP, "tournament", r["tid"], r["tournament"])}, '
        f'match {esc(r["match"])}, seat {esc(r["seat"])}, version {esc(r["version"])} '
        f'({len(r["text"])} bytes)</summary><pre>{esc(r["text"])}</pre></details>'
        for r in rows)
    return ('<h2>Logs</h2><p class="lead">What the bot wrote to stderr in each match, capped '
            'at 64 KiB per match.</p>' + (blocks or '<p class="muted">No output kept.</p>'))


def _tournament_table(root: str, rows: Sequence[dict[str, Any]]) -> str:
    return table(rows, [
        ("name", "tournament", lambda r: link(root, "tournament", r["id"], r["name"])),
        ("game", "game", lambda r: link(root, "leaderboard", r["game"], r["game"])),
        ("format", "format", None), ("seats", "seats", None),
        ("played", "played/scheduled", lambda r: progress(r["played"], r["scheduled"])),
        ("void", "void", None), ("created_at", "created", lambda r: when(r["created_at"])),
        ("finished_at", "finished", lambda r: when(r["finished_at"]) if r["finished_at"]
         else '<span class="badge">running or stopped</span>')],
        numeric=("seats", "void"), table_id="tournaments",
        row_attrs=lambda r: f'data-name="{esc(r["name"])}" data-played="{r["played"]}" '
                            f'data-scheduled="{r["scheduled"]}"', empty="No tournaments yet.")


def tournaments_page(store: Store) -> str:
    """Every tournament with its progress: games played of those scheduled."""
    body = ("<h1>Tournaments</h1><p class=\"lead\">Progress is the games played of those "
            "scheduled; an unfinished tournament is running, or stopped and resumable with "
            "<code>arena tournament resume NAME</code>.</p>" + _tournament_table("", tournaments(store)))
    return page("Tournaments", body, "", boards(store))


def tournament_page(store: Store, tournament_id: int) -> str:
    """One tournament: settings, progress, its entrants' results and every game played."""
    t = store.one("SELECT * FROM tournaments WHERE id = ?", (tournament_id,))
    if t is None:
        raise not_found(f"There is no tournament with id {tournament_id}.")
    played = store.one("SELECT COUNT(*) AS n, COALESCE(SUM(void), 0) AS void FROM games "
                       "WHERE tournament_id = ?", (tournament_id,)) or {"n": 0, "void": 0}
    entrants = store.rows(
        "SELECT b.name AS bot, b.version, COUNT(s.game_id) AS games, "
        "SUM(s.rank = 1) AS wins, AVG(s.rank) AS mean_rank, SUM(s.status != 'ok') AS faults "
        "FROM entrants e JOIN bots b ON b.id = e.bot_id "
        "LEFT JOIN games g ON g.tournament_id = e.tournament_id AND g.void = 0 "
        "LEFT JOIN seats s ON s.game_id = g.id AND s.bot_id = e.bot_id "
        "WHERE e.tournament_id = ? GROUP BY e.position ORDER BY e.position", (tournament_id,))
    rows = store.rows(
        "SELECT g.id, g.idx, g.deal_group, g.seed, g.reason, g.void, g.decisions, s.seat, "
        "b.name AS bot, b.version, s.rank, s.status FROM games g JOIN seats s ON s.game_id = g.id "
        "JOIN bots b ON b.id = s.bot_id WHERE g.tournament_id = ? AND g.idx < "
        "(SELECT COALESCE(MIN(idx), 0) FROM games WHERE tournament_id = ?) + ? "
        "ORDER BY g.idx, s.seat", (tournament_id, tournament_id, GAME_ROWS))
    games: list[dict[str, Any]] = []
    for r in rows:
        if not games or games[-1]["id"] != r["id"]:
            games.append({**r, "seats": []})
        games[-1]["seats"].append(r)
    settings = json.loads(t["settings"])
    clocks = settings.get("clocks", {})
    facts = (f"{esc(t['game'])}, {esc(t['format'])}, {t['seats']} seats, "
             f"{t['games_per_seating']} game(s) per seating"
             f"{', duplicate deals' if t['duplicate'] else ''}, seed {t['seed']}; "
             f"deadline {esc(clocks.get('deadline_ms'))} ms, time bank "
             f"{esc(clocks.get('time_bank_ms'))} ms, sandbox {esc(settings.get('sandbox'))}")
    body = (f"<h1>Tournament {esc(t['name'])}</h1><p class=\"lead\">{facts}</p>"
            f"<p>Progress: {progress(played['n'], t['scheduled'])} ({played['void']} void); "
            + (f"finished {when(t['finished_at'])}" if t["finished_at"] else "not finished")
            + f"; created {when(t['created_at'])}.</p><h2>Entrants</h2>"
            + table(entrants, [
                ("bot", "bot", lambda r: _bot_link(UP, r)), ("version", "version", None),
                ("games", "games", None), ("wins", "wins", None),
                ("mean_rank", "avg rank", lambda r: num(r["mean_rank"])),
                ("faults", "faults", None)],
                numeric=("version", "games", "wins", "mean_rank", "faults"))
            + "<h2>Games</h2>"
            + table(games, [
                ("id", "replay", lambda r: _replay_link(UP, r["id"])), ("idx", "#", None),
                ("deal_group", "deal", None), ("reason", "end", lambda r: esc(r["reason"])
                                                + (' <span class="badge">void</span>'
                                                   if r["void"] else "")),
                ("decisions", "decisions", None),
                ("seats", "seat: bot@version → rank", lambda r: " ".join(
                    f'<span class="chip">{s["seat"]}: {esc(s["bot"])}@{s["version"]} → '
                    f'{s["rank"]}{"" if s["status"] == "ok" else " " + status(s["status"])}'
                    "</span>" for s in r["seats"]))],
                numeric=("idx", "deal_group", "decisions"), table_id="games",
                empty="No games played yet.")
            + (f'<p class="muted">The first {GAME_ROWS} games are listed.</p>'
               if played["n"] > GAME_ROWS else ""))
    return page(f"Tournament {t['name']}", body, UP, boards(store))
