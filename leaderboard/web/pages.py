"""The pages that need only the database: start page, leaderboards, bots, head-to-head,
tournaments. Each function returns one HTML page or raises
:class:`~leaderboard.web.data.PageError` (404 for an unknown game, bot or tournament).

The replay page needs the game engines, so it lives in :mod:`arena.web.replay`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from .. import board
from ..store import StoreReader, as_dicts
from .chart import Series, line_chart
from .data import boards, head_to_head, not_found, rating_history, require_board, tournaments
from .layout import esc, href, link, num, page, progress, status, table, when

UP = "../"  # pages in a folder (leaderboard/, bot/, ...) reach the root through this
FAULT_ROWS = 200
RECENT_ROWS = 20
GAME_ROWS = 2000


def _bot_link(root: str, row: dict[str, Any], name_key: str = "bot") -> str:
    return link(root, "bot", row[name_key], row[name_key])


def _replay_link(root: str, game_id: int, text: Any = None) -> str:
    return link(root, "replay", game_id, f"#{game_id}" if text is None else text)


def index_page(store: StoreReader) -> str:
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
    bot_list = " ".join(
        f'<span class="chip">{link("", "bot", b.name, b.name)}'
        f'{" v" + str(b.newest) if b.versions > 1 else ""}'
        f'{" (removed)" if b.removed else ""}</span>' for b in store.bot_name_summaries())
    recent = as_dicts(tournaments(store)[:5])
    body = ('<h1>Arena</h1><p class="lead">Leaderboards, bots, tournaments and replays of '
            "this arena database.</p>"
            + (f'<div class="cards">{"".join(cards)}</div>' if cards else
               '<p class="muted">No leaderboard yet: run a tournament.</p>')
            + f"<h2>Bots</h2><p>{bot_list or '<span class=muted>None registered.</span>'}</p>"
            + "<h2>Latest tournaments</h2>" + _tournament_table("", recent)
            + f'<p><a href="{href("", "tournaments.html")}">All tournaments</a></p>')
    return page("Arena", body, "", games)


def leaderboard_page(store: StoreReader, game: str) -> str:
    """One game's leaderboard, best first by mu − 3σ, as ``arena leaderboard GAME`` shows it."""
    state = require_board(store, game)
    rows = board.standings(store, game)
    env = {k: getattr(state, k) for k in ("mu", "sigma", "beta", "tau", "draw_probability")}
    body = (f"<h1>Leaderboard: {esc(game)}</h1>"
            f'<p class="lead">TrueSkill ratings of every bot version, sorted by the conservative '
            f"rating mu − 3σ; {state.rated_games} rated games.</p>"
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


def head_to_head_page(store: StoreReader, game: str) -> str:
    """How often each bot version finished strictly ahead of each other one, in ``game``."""
    require_board(store, game)
    players, pairs = head_to_head(store, game)
    names = [f"{p.name}@{p.version}" for p in players]
    head = "".join(f'<th scope="col">{link(UP, "bot", p.name, n)}</th>'
                   for p, n in zip(players, names, strict=True))
    lines = []
    for a, a_name in zip(players, names, strict=True):
        cells = []
        for b in players:
            if a.id == b.id:
                cells.append('<td class="h2h muted">—</td>')
                continue
            ahead, games = pairs.get((a.id, b.id), (0, 0))
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
        lines.append(f'<tr><th scope="row">{link(UP, "bot", a.name, a_name)}</th>'
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


def bot_page(store: StoreReader, name: str) -> str:
    """A bot: its versions, rating history per game, results by seat, faults, recent games."""
    versions = as_dicts(store.bot_versions(name))
    if not versions:
        raise not_found(f"There is no bot named {name!r}.")
    ids = [v["id"] for v in versions]
    parts = [f"<h1>Bot {esc(name)}</h1>", "<h2>Versions</h2>", table(versions, [
        ("version", "version", None), ("kind", "kind", None),
        ("hash", "content hash", lambda r: f"<code>{esc(r['hash'][:16])}</code>"),
        ("added_at", "added", lambda r: when(r["added_at"])),
        ("removed_at", "state", lambda r: "removed " + when(r["removed_at"]) if r["removed_at"]
         else '<span class="status-ok">active</span>')], numeric=("version",),
        table_id="versions")]
    ratings = as_dicts(store.bot_ratings(ids))
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
    by_seat = as_dicts(store.seat_records(ids))
    parts += ["<h2>Results by seat</h2>", table(by_seat, [
        ("game", "game", lambda r: link(UP, "leaderboard", r["game"], r["game"])),
        ("version", "version", None), ("seat", "seat", None), ("games", "games", None),
        ("wins", "wins", None), ("mean_rank", "avg rank", lambda r: num(r["mean_rank"])),
        ("mean_score", "avg score", lambda r: num(r["mean_score"])),
        ("faults", "games with faults", None),
        ("ms", "ms per decision", lambda r: num(r["ms"], 1))],
        numeric=("version", "seat", "games", "wins", "mean_rank", "mean_score", "faults", "ms"),
        table_id="by-seat", empty="No games yet.")]
    parts.append(_faults(store, ids))
    parts.append(_logs(store, ids))
    recent = as_dicts(store.bot_games(ids, RECENT_ROWS))
    parts += ["<h2>Recent games</h2>", table(recent, [
        ("id", "replay", lambda r: _replay_link(UP, r["id"])), ("game", "game", None),
        ("tournament", "tournament", lambda r: link(UP, "tournament", r["tid"], r["tournament"])),
        ("version", "version", None), ("seat", "seat", None), ("rank", "rank", None),
        ("score", "score", lambda r: num(r["score"], 1)), ("status", "status",
                                                           lambda r: status(r["status"]))],
        numeric=("version", "seat", "rank", "score"), empty="No games yet.")]
    return page(f"Bot {name}", "".join(parts), UP, boards(store))


def _faults(store: StoreReader, ids: list[int]) -> str:
    rows = as_dicts(store.bot_faults(ids))
    shown = rows[:FAULT_ROWS]

    def kinds(r: dict[str, Any]) -> str:
        counts = r["faults"]
        return " ".join(f'<span class="chip">{esc(k)} ×{esc(v)}</span>'
                        for k, v in counts.items() if v)

    def log(r: dict[str, Any]) -> str:
        lines = r["fault_log"]
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


def _logs(store: StoreReader, ids: list[int]) -> str:
    """The bot's captured output (stderr, capped at 64 KiB per match), newest first."""
    rows = store.bot_log_entries(ids, FAULT_ROWS)
    if rows is None:
        return ""  # a database from before schema 3
    blocks = "".join(
        f'<details class="log"><summary>{link(UP, "tournament", r.tid, r.tournament)}, '
        f'match {esc(r.match)}, seat {esc(r.seat)}, version {esc(r.version)} '
        f'({len(r.text)} bytes)</summary><pre>{esc(r.text)}</pre></details>'
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


def tournaments_page(store: StoreReader) -> str:
    """Every tournament with its progress: games played of those scheduled."""
    body = ("<h1>Tournaments</h1><p class=\"lead\">Progress is the games played of those "
            "scheduled; an unfinished tournament is running, or stopped and resumable with "
            "<code>arena tournament resume NAME</code>.</p>" + _tournament_table("", as_dicts(tournaments(store))))
    return page("Tournaments", body, "", boards(store))


def tournament_page(store: StoreReader, tournament_id: int) -> str:
    """One tournament: settings, progress, its entrants' results and every game played."""
    found = store.tournament_by_id(tournament_id)
    if found is None:
        raise not_found(f"There is no tournament with id {tournament_id}.")
    t = asdict(found)
    stored = store.played(tournament_id)
    played = {"n": stored.games, "void": stored.void}
    # The one entrants summary (issue 14 §1), its name shown as the bot's.
    entrants = [{"bot": e.pop("name"), **e}
                for e in as_dicts(store.entrant_results(tournament_id))]
    games = as_dicts(store.tournament_games(tournament_id, GAME_ROWS))
    settings = t["settings"]
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
