"""``arena tournament`` (run, resume, list, show) and ``arena demo``, which runs one
short tournament of every game."""

from __future__ import annotations

import json
import secrets
import shlex
from pathlib import Path

import click

from arena import demo, progress, tournament
from arena.schedule import FORMATS
from leaderboard import board, views
from leaderboard.store import NameTaken, Store
from referee.games import GameError, get_game
from referee.match import Clocks

from .cluster import LOCAL, ExecutorChoice, executor, executor_options
from .common import echo_json, interrupted, make_log_dir, opened, parse_options
from .options import (
    SQLITE_ID,
    clock_options,
    db_option,
    json_option,
    limits_from,
    progress_option,
)


@click.group("tournament")
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
@executor_options
@progress_option
@db_option
@clock_options
def tournament_run(game: str, bots: str, seats: int | None, games_per_seating: int,
                   duplicate: bool, fmt: str, workers: int | None, seed: int | None,
                   name: str | None, option_pairs: tuple[str, ...], deadline_ms: int,
                   time_bank_ms: int, startup_ms: int, strikes: int, log_dir: str | None,
                   progress_every: float, db_path: Path, sandbox: str,
                   executor_choice: ExecutorChoice, **limits: int) -> None:
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
        _run(store, chosen, workers, log_dir, progress_every, choice=executor_choice)


@tournament_group.command("resume")
@click.argument("name")
@click.option("--workers", type=click.IntRange(min=1),
              help="Parallel matches (default: the number of cores).")
@click.option("--log-dir", type=click.Path(file_okay=False),
              help="Keep each match's bot stderr and each game's record here.")
@executor_options
@progress_option
@db_option
def tournament_resume(name: str, workers: int | None, log_dir: str | None,
                      progress_every: float, db_path: Path,
                      executor_choice: ExecutorChoice) -> None:
    """Play the scheduled games of tournament NAME (or id) that have no result yet,
    and print its standings."""
    make_log_dir(log_dir)
    with opened(db_path) as store:
        _run(store, name, workers, log_dir, progress_every, choice=executor_choice)


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
            ("id", "id"), ("name", "name"), ("game", "game"), ("format", "format"),
            ("seats", "seats"), ("played", "played"), ("scheduled", "scheduled"),
            ("created_at", "created"), ("finished_at", "finished")]))


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


@click.command("demo")
@click.option("--db", "db_path", type=click.Path(dir_okay=False, path_type=Path),
              default="arena-demo.db", show_default=True,
              help="The demo's own database (not ARENA_DB: the demo never writes yours).")
@click.option("--workers", type=click.IntRange(min=1),
              help="Parallel matches (default: the number of cores).")
@click.option("--games-per-seating", type=click.IntRange(min=1), default=4,
              show_default=True, help="Games each seating of the round-robin plays.")
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
    n = store.tournament_count(game) + 1
    while store.tournament_exists(f"{game}-{n}"):
        n += 1
    return f"{game}-{n}"


def _run(store: Store, name: str, workers: int | None, log_dir: str | None,
         progress_every: float = progress.EVERY_S, standings: bool = True,
         choice: ExecutorChoice = LOCAL) -> None:
    t = store.tournament(name)
    name = t["name"]  # it may have been given by its id
    try:
        with progress.reporter(name, t["scheduled"], store.stored_count(t["id"]),
                               views.console(), progress_every) as report:

            def show(now: tournament.Progress) -> None:
                rows = board.standings(store, t["game"])
                report(now.done, (f"leader {rows[0]['bot']}@{rows[0]['version']} "
                                  f"{rows[0]['conservative']:.1f}") if rows else "")

            with executor(choice, workers, name, progress_every) as chosen:
                result = tournament.run(store, name, chosen, log_dir, on_progress=show)
    except (KeyboardInterrupt, SystemExit) as stop:
        raise interrupted(stop, ["arena", "tournament", "resume", name]) from None
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
