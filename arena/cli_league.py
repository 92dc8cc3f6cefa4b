"""The organiser's commands: bots, tournaments, leaderboards, results, replays, demo.

Thin click commands over :mod:`arena.botstore`, :mod:`arena.tournament` and
:mod:`leaderboard`; library errors become click exceptions here, at the edge.
"""

from __future__ import annotations

import json
import math
import secrets
import shlex
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from arena import botstore, demo, executors, progress, tournament
from arena.replay import narrate, visible
from leaderboard import board, views
from leaderboard.store import BUILTIN_PREFIX, NameTaken, Store, StoreError
from referee.errors import RefereeError
from referee.games import GameError, get_game
from referee.match import Clocks

from .schedule import FORMATS, ScheduleError

_ERRORS = (StoreError, GameError, RefereeError, ScheduleError)


def parse_options(pairs: Sequence[str]) -> dict[str, Any]:
    """``KEY=VALUE`` pairs; VALUE is JSON when it parses as JSON, else a string."""
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"expected KEY=VALUE, got {pair!r}", param_hint="--option")
        try:
            options[key] = json.loads(raw)
        except json.JSONDecodeError:
            options[key] = raw
    return options


def db_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--db", "db_path", type=click.Path(dir_okay=False, path_type=Path),
                        envvar="ARENA_DB", default="arena.db", show_default=True,
                        help="The arena database (or set ARENA_DB).")(func)


def json_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON.")(func)


SQLITE_ID = click.IntRange(0, 2**63 - 1)
"""A number stored in (or looked up in) SQLite, whose integers are 64-bit signed."""


def make_log_dir(log_dir: str | Path | None) -> None:
    """Create ``--log-dir`` now, so that a folder that cannot be made is one clear error
    before anything runs, not a failure of every match."""
    if log_dir is None:
        return
    try:
        Path(log_dir).mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise click.BadParameter(f"cannot create the folder {str(log_dir)!r}: "
                                 f"{err.strerror or err}", param_hint="--log-dir") from None


@contextmanager
def opened(db_path: Path, create: bool = False) -> Iterator[Store]:
    """The store, with every library error turned into a clear CLI error."""
    try:
        store = Store(db_path, create=create)
    except StoreError as err:
        raise click.ClickException(str(err)) from None
    try:
        yield store
    except _ERRORS as err:
        raise click.ClickException(str(err)) from None
    finally:
        store.close()


PROGRESS_EVERY = click.FloatRange(0.1, 86400.0)
"""Seconds between progress lines: ``inf`` was a traceback in the progress thread, and
``nan`` passes any range (it compares false) and printed a line in a busy loop (found by
review of issue 13 B5), so it is refused on its own in :func:`_finite`."""


def _finite(ctx: click.Context, param: click.Parameter, value: float) -> float:
    if math.isnan(value):
        raise click.BadParameter(f"{value!r} is not a number of seconds", ctx, param)
    return value


def progress_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--progress-every", type=PROGRESS_EVERY, callback=_finite, default=progress.EVERY_S,
        show_default=True, metavar="SECONDS",
        help="When the output is not a terminal (a pipe, a log file), print a progress "
             "line this often.")(func)


def echo_json(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, default=str))


# ----------------------------------------------------------------------- bots
def register(main: click.Group, bot: click.Group, sandbox_options: Callable[..., Any],
             limits_from: Callable[[dict[str, Any]], Any],
             clock_options: Callable[..., Any]) -> None:
    """Add the organiser's commands to the ``arena`` group and its ``bot`` group.

    ``clock_options`` adds the clock, strike, sandbox and limit options of ``arena play``.
    """

    @bot.command("add")
    @click.argument("name")
    @click.argument("path", type=click.Path(exists=True, path_type=Path))
    @db_option
    @sandbox_options
    def bot_add(name: str, path: Path, db_path: Path, sandbox: str, **limits: int) -> None:
        """Check the bot at PATH in the sandbox and register a copy of it as NAME.

        Changed files under the same NAME make a new version; old versions and
        their results stay."""
        if name.casefold().startswith(BUILTIN_PREFIX):  # before the check: refused anyway
            raise click.BadParameter(f"bot name {name!r}: names beginning with "
                                     f"{BUILTIN_PREFIX!r} are the built-in bots'",
                                     param_hint="NAME")
        with opened(db_path, create=True) as store:
            row, created = botstore.add_bot(store, name, str(path), sandbox, limits_from(limits))
            what = "added" if created else "unchanged:"
            click.echo(f"{what} {row['name']} version {row['version']} ({row['hash'][:12]})")

    @bot.command("list")
    @db_option
    @click.option("--all", "everything", is_flag=True, help="Include removed bots.")
    @json_option
    def bot_list(db_path: Path, everything: bool, as_json: bool) -> None:
        """List the registered bots and their versions."""
        with opened(db_path) as store:
            rows = store.bots(include_removed=everything)
        if as_json:
            echo_json(rows)
        else:
            views.console().print(views.table("Bots", rows, [
                ("name", "name"), ("version", "v"), ("kind", "kind"), ("hash", "hash"),
                ("added_at", "added"), ("removed_at", "removed")]))

    @bot.command("show")
    @click.argument("name")
    @db_option
    @json_option
    def bot_show(name: str, db_path: Path, as_json: bool) -> None:
        """Show a bot: its versions and its record in every game."""
        with opened(db_path) as store:
            # Removed versions too: their results stay, and this is where one looks them up.
            versions = store.rows("SELECT * FROM bots WHERE name = ? ORDER BY version", (name,))
            if not versions:
                store.bot(name)  # the store's own error: no such bot, and which there are
            record = store.rows(
                "SELECT g.game, b.version, COUNT(*) AS games, SUM(s.rank = 1) AS wins, "
                "AVG(s.rank) AS mean_rank, SUM(s.status != 'ok') AS faults FROM seats s "
                "JOIN games g ON g.id = s.game_id JOIN bots b ON b.id = s.bot_id "
                "WHERE b.name = ? AND g.void = 0 GROUP BY g.game, b.version "
                "ORDER BY g.game, b.version", (name,))
        if as_json:
            echo_json({"name": name, "versions": versions, "record": record})
            return
        out = views.console()
        out.print(views.table(f"Bot {name}", versions, [
            ("version", "v"), ("kind", "kind"), ("hash", "hash"), ("path", "stored at"),
            ("added_at", "added"), ("removed_at", "removed")]))
        out.print(views.table("Record", record, [
            ("game", "game"), ("version", "v"), ("games", "games"), ("wins", "wins"),
            ("mean_rank", "avg rank"), ("faults", "faults")], {"mean_rank": ".2f"}))

    @bot.command("remove")
    @click.argument("name")
    @db_option
    def bot_remove(name: str, db_path: Path) -> None:
        """Retire a bot from new tournaments; its results and ratings stay."""
        with opened(db_path) as store:
            count = store.remove_bot(name)
        click.echo(f"removed {name} ({count} version(s)); its results stay")

    # ---------------------------------------------------------- tournaments
    @main.group("tournament")
    def tournament_group() -> None:
        """Run, resume and inspect tournaments."""

    @tournament_group.command("run")
    @click.argument("game")
    @click.option("--bots", required=True, help="Comma-separated bot names (NAME or NAME@V).")
    @click.option("--seats", type=click.IntRange(min=1),
                  help="Seats per game (default: all bots, up to the game's maximum).")
    @click.option("--games-per-seating", type=click.IntRange(min=1), default=1,
                  show_default=True, help="Games each seating plays.")
    @click.option("--duplicate", is_flag=True,
                  help="Replay each deal in every seat rotation, so luck cancels.")
    @click.option("--format", "fmt", type=click.Choice(FORMATS), default="round-robin",
                  show_default=True, help="gauntlet: the first bot against the field.")
    @click.option("--workers", type=click.IntRange(min=1),
                  help="Parallel matches (default: the number of cores).")
    @click.option("--seed", type=SQLITE_ID,
                  help="The schedule's seed, and so every deal's (default: a random one, "
                       "kept with the tournament). Keep it secret: bots can import the "
                       "engines, and a known seed tells them every hidden card.")
    @click.option("--name", help="The tournament's name (default: GAME-N).")
    @click.option("-o", "--option", "option_pairs", multiple=True, metavar="KEY=VALUE",
                  help="A game option (VALUE as JSON), repeatable.")
    @click.option("--log-dir", type=click.Path(file_okay=False),
                  help="Keep each match's bot stderr (DIR/match-M/seatS-NAME@V.stderr.log) "
                       "and each game's record (DIR/game-ID.json, ID as arena results "
                       "shows it) here.")
    @progress_option
    @db_option
    @clock_options
    def tournament_run(game: str, bots: str, seats: int | None, games_per_seating: int,
                       duplicate: bool, fmt: str, workers: int | None, seed: int | None,
                       name: str | None, option_pairs: tuple[str, ...], deadline_ms: int,
                       time_bank_ms: int, startup_ms: int, strikes: int, log_dir: str | None,
                       progress_every: float, db_path: Path, sandbox: str,
                       **limits: int) -> None:
        """Run a tournament of GAME between registered bots, in parallel, rate it, and
        print its standings.

        A bot is NAME or NAME@VERSION from the bot store, or a built-in baseline,
        builtin:random or builtin:heuristic (rated as the bot builtin:random, version 1).
        Ctrl-C stops it cleanly; every finished game is kept, and
        `arena tournament resume NAME` plays the rest."""
        names = [b.strip() for b in bots.split(",") if b.strip()]
        settings = tournament.Settings(Clocks(deadline_ms, time_bank_ms, startup_ms, strikes),
                                       sandbox, limits_from(limits))
        try:
            get_game(game)  # before the database: a typo must not leave a new, empty one
        except GameError as err:
            raise click.ClickException(str(err)) from None
        make_log_dir(log_dir)
        if seed is None:  # unguessable: a bot that knew it could rebuild every deal
            seed = secrets.randbelow(1 << 62)
        with opened(db_path, create=True) as store:
            for attempt in range(1 if name else 10):
                chosen = name or _next_name(store, game)
                try:
                    tournament.create(store, name=chosen, game=game, bots=names,
                                      seats=seats, games_per_seating=games_per_seating,
                                      duplicate=duplicate, fmt=fmt, seed=seed,
                                      options=parse_options(option_pairs), settings=settings)
                    break
                except NameTaken:
                    # Two organisers starting runs at once both chose GAME-N: the later
                    # takes the next name, instead of being told to resume the other's
                    # tournament (found by review of issue 13 B5).
                    if name or attempt == 9:
                        raise
            _run(store, chosen, workers, log_dir, progress_every)

    @tournament_group.command("resume")
    @click.argument("name")
    @click.option("--workers", type=click.IntRange(min=1),
                  help="Parallel matches (default: the number of cores).")
    @click.option("--log-dir", type=click.Path(file_okay=False),
                  help="Keep each match's bot stderr and each game's record here.")
    @progress_option
    @db_option
    def tournament_resume(name: str, workers: int | None, log_dir: str | None,
                          progress_every: float, db_path: Path) -> None:
        """Play the scheduled games of tournament NAME (or id) that have no result yet,
        and print its standings."""
        make_log_dir(log_dir)
        with opened(db_path) as store:
            _run(store, name, workers, log_dir, progress_every)

    @tournament_group.command("list")
    @db_option
    @json_option
    def tournament_list(db_path: Path, as_json: bool) -> None:
        """List the tournaments with their progress. The id is the number of the
        tournament's web page (tournament/ID.html), and works wherever a name does."""
        with opened(db_path) as store:
            rows = store.tournaments_list()
        if as_json:
            echo_json(rows)
        else:
            views.console().print(views.table("Tournaments", rows, [
                ("id", "id"), ("name", "name"), ("game", "game"), ("format", "format"), ("seats", "seats"),
                ("played", "played"), ("scheduled", "scheduled"), ("created_at", "created"),
                ("finished_at", "finished")]))

    @tournament_group.command("show")
    @click.argument("name")
    @db_option
    @json_option
    def tournament_show(name: str, db_path: Path, as_json: bool) -> None:
        """Show tournament NAME (a name or an id): settings, progress and its entrants'
        results."""
        with opened(db_path) as store:
            info = tournament.summary(store, name)
        if as_json:
            echo_json(info)
            return
        out = views.console()
        out.print(f"{info['name']} (id {info['id']}): {info['game']}, {info['format']}, "
                  f"{info['seats']} seats, "
                  f"{info['games_per_seating']} game(s) per seating"
                  f"{', duplicate deals' if info['duplicate'] else ''}, seed {info['seed']}",
                  markup=False)  # a name is anyone's text, never rich markup
        out.print(f"played {info['played']} of {info['scheduled']} ({info['void']} void); "
                  f"{'finished ' + info['finished_at'] if info['finished_at'] else 'not finished'}")
        out.print(views.table("Entrants", info["entrants"], [
            ("name", "bot"), ("version", "v"), ("games", "games"), ("wins", "wins"),
            ("mean_rank", "avg rank"), ("faults", "faults")], {"mean_rank": ".2f"}))

    # ------------------------------------------------------------ replays
    @main.command("replay")
    @click.argument("game_id", type=SQLITE_ID)
    @click.option("--seat", type=click.IntRange(min=0), help="Only what this seat saw.")
    @db_option
    @json_option
    def replay(game_id: int, seat: int | None, db_path: Path, as_json: bool) -> None:
        """The stored event log of one game (GAME_ID from `arena results`), narrated."""
        with opened(db_path) as store:
            row = store.one("SELECT g.*, t.name AS tournament FROM games g JOIN tournaments t "
                            "ON t.id = g.tournament_id WHERE g.id = ?", (game_id,))
            if row is None:
                raise click.ClickException(f"no game with id {game_id}; see arena results")
            seats = store.rows("SELECT s.seat, b.name AS bot, b.version, s.rank, s.status "
                               "FROM seats s JOIN bots b ON b.id = s.bot_id WHERE s.game_id = ? "
                               "ORDER BY s.seat", (game_id,))
        if seat is not None and seat >= len(seats):
            raise click.BadParameter(f"game {game_id} has seats 0..{len(seats) - 1}",
                                     param_hint="--seat")
        events = json.loads(row["events"])
        moves = json.loads(row["moves"])
        seed: int | None = row["seed"]
        if seat is not None:
            # A seat's view: the events it was allowed to see and its own decisions only.
            # Not the steps between them (how many there were tells whether others had a
            # real choice, RULES.md C3), nor the seed (with it, every hidden card).
            events = [e for e in events if visible(e, seat)]
            moves = [{str(seat): m[str(seat)]} for m in moves if str(seat) in m]
            seed = None
        if as_json:
            echo_json({"id": game_id, "game": row["game"], "tournament": row["tournament"],
                       "seed": seed, "seats": seats, "seat": seat, "events": events,
                       "moves": moves})
        else:
            for line in narrate(row["game"], seats, events, seat, moves):
                click.echo(line)

    @main.command("demo")
    @click.option("--db", "db_path", type=click.Path(dir_okay=False, path_type=Path),
                  default="arena-demo.db", show_default=True)
    @click.option("--workers", type=click.IntRange(min=1))
    @click.option("--games-per-seating", type=click.IntRange(min=1), default=4,
                  show_default=True)
    def demo_command(db_path: Path, workers: int | None, games_per_seating: int) -> None:
        """Register the bundled example bots, run a short round-robin of every game on all
        cores, and print the leaderboards."""
        with opened(db_path, create=True) as store:
            # The demo prints each game's whole leaderboard after its one tournament.
            def run_quietly(store: Store, name: str, workers: int | None,
                            log_dir: str | None) -> None:
                _run(store, name, workers, log_dir, standings=False)

            for game, rows, env in demo.run(store, workers, games_per_seating, run_quietly):
                views.print_leaderboard(game, rows, env)
        # Every other command reads ./arena.db by default: without this line a new user's
        # next `arena leaderboard stop-me` or `arena serve` found no database (issue 13 B,
        # outsider).
        db = shlex.quote(str(db_path))
        click.echo(f"the demo's results are in {str(db_path)!r}; look at them with "
                   f"`arena serve --db {db}` or `arena leaderboard stop-me --db {db}`")

    def _next_name(store: Store, game: str) -> str:
        count = store.one("SELECT COUNT(*) AS n FROM tournaments WHERE game = ?", (game,))
        n = (count or {}).get("n", 0) + 1
        while store.one("SELECT 1 AS x FROM tournaments WHERE name = ?", (f"{game}-{n}",)):
            n += 1
        return f"{game}-{n}"

    def _run(store: Store, name: str, workers: int | None, log_dir: str | None,
             progress_every: float = progress.EVERY_S, standings: bool = True) -> None:
        t = store.tournament(name)
        name = t["name"]  # it may have been given by its id
        done = store.one("SELECT COUNT(*) AS n FROM games WHERE tournament_id = ?",
                         (t["id"],))
        try:
            with progress.reporter(name, t["scheduled"], (done or {}).get("n", 0),
                                   views.console(), progress_every) as report:

                def show(now: tournament.Progress) -> None:
                    rows = board.standings(store, t["game"])
                    report(now.done, (f"leader {rows[0]['bot']}@{rows[0]['version']} "
                                      f"{rows[0]['conservative']:.1f}") if rows else "")

                result = tournament.run(store, name, executors.for_workers(workers), log_dir,
                                        on_progress=show)
        except (KeyboardInterrupt, SystemExit) as stop:
            # Ctrl-C, or SIGTERM (arena's handler makes it SystemExit(143)): a service
            # manager stopping the organiser deserves the same hint as a person.
            click.echo(f"interrupted: finished games are kept; continue with "
                       f"`arena tournament resume {name}`", err=True)
            raise SystemExit(130 if isinstance(stop, KeyboardInterrupt)
                             else stop.code) from None
        for error in result.errors:
            click.echo(f"error: {error}", err=True)
        click.echo(f"{name}: {result.done} of {result.total} games played")
        if standings:  # they end it (issue 13 B5): the tournament's games alone, rated
            env = json.loads(board.environment(store, t["game"]).to_json())
            views.print_leaderboard(f"{t['game']}, tournament {name}",
                                    board.tournament_standings(store, t["game"], t["id"]),
                                    env, title="Standings")
        if result.errors:  # a script must see that games are missing
            raise click.ClickException(
                f"{len(result.errors)} match(es) of {name} failed; fix the cause above, "
                f"then play the rest with: arena tournament resume {name}")

