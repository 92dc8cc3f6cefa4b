"""``arena compare``: is NEW better than BASE? A sequential test on duplicate deals
(issue 18), and ``arena compare resume|list|show``."""

from __future__ import annotations

import secrets
import time
from pathlib import Path
from typing import Any

import click
from click_default_group import DefaultGroup

from arena import tournament
from arena.compare import runner
from arena.compare.sprt import MODELS, Sprt
from leaderboard import views
from leaderboard.store import Store
from referee.games import GameError, get_game
from referee.match import Clocks

from .cluster import ExecutorChoice, executor, executor_options
from .common import echo_json, interrupted, opened, parse_options
from .options import SQLITE_ID, clock_options, db_option, json_option, limits_from

PROBABILITY = click.FloatRange(0.0, 1.0, min_open=True, max_open=True)


# `arena compare NEW BASE ...` is `arena compare run NEW BASE ...`: the command an
# author types most has the shortest form (click-default-group, sqlite-utils' own).
@click.group("compare", cls=DefaultGroup, default="run")
def compare_group() -> None:
    """Is NEW better than BASE? `arena compare NEW BASE --game GAME` plays them on
    duplicate deals until a sequential probability ratio test decides (fishtest's
    GSPRT); `resume`, `list` and `show` follow it up."""


@compare_group.command("run")
@click.argument("new")
@click.argument("base")
@click.option("--game", required=True, help="The game to compare them at.")
@click.option("--seats", type=click.IntRange(min=2),
              help="Seats per game (default 2); beyond 2, --fillers fill the others.")
@click.option("--fillers", default="", metavar="BOT,...",
              help="The bots of the seats beyond NEW and BASE (one is repeated), such "
                   "as builtin:random.")
@click.option("--elo0", type=float, default=0.0, show_default=True,
              help="H0: NEW is this much better, in Elo (or nElo with --model normalized).")
@click.option("--elo1", type=float, default=5.0, show_default=True,
              help="H1: NEW is this much better.")
@click.option("--alpha", type=PROBABILITY, default=0.05, show_default=True,
              help="The false positive rate: H1 accepted when H0 holds.")
@click.option("--beta", type=PROBABILITY, default=0.05, show_default=True,
              help="The false negative rate: H0 accepted when H1 holds.")
@click.option("--model", type=click.Choice(MODELS), default="logistic", show_default=True,
              help="The kind of Elo of the bounds: logistic (classic Elo) or normalized "
                   "(nElo, fishtest's, independent of the draw rate).")
@click.option("--max-games", type=click.IntRange(min=1),
              help="Stop, inconclusive, after this many games (default: no cap).")
@click.option("--batch", type=click.IntRange(1, 1000), default=4, show_default=True,
              help="Groups per match: bots start once for this many deals.")
@click.option("--workers", type=click.IntRange(min=1),
              help="Parallel matches (default: the number of cores).")
@click.option("--seed", type=SQLITE_ID,
              help="The deals' seed (default: a random one, kept with the comparison).")
@click.option("-o", "--option", "option_pairs", multiple=True, metavar="KEY=VALUE",
              help="A game option (VALUE as JSON), repeatable.")
@executor_options
@db_option
@json_option
@clock_options
def compare_run(new: str, base: str, game: str, seats: int | None, fillers: str,
                elo0: float, elo1: float, alpha: float, beta: float, model: str,
                max_games: int | None, batch: int, workers: int | None, seed: int | None,
                option_pairs: tuple[str, ...], deadline_ms: int, time_bank_ms: int,
                startup_ms: int, strikes: int, sandbox: str, db_path: Path, as_json: bool,
                executor_choice: ExecutorChoice, **limits: int) -> None:
    """Play NEW against BASE at GAME until the test decides, and say whether NEW is
    better (H1), not (H0), or inconclusive at --max-games.

    NEW and BASE are bot files or folders, store names (NAME or NAME@VERSION) or
    built-ins (builtin:random, builtin:heuristic). Each deal is played in every rotation
    of the seats, so that both sit in every seat with the same cards: a game scores 1
    for NEW if it finished ahead of BASE, ½ tied, 0 behind, and the test reads whole
    groups only. Ctrl-C stops it; `arena compare resume ID` goes on."""
    try:
        test = Sprt(elo0, elo1, alpha, beta, model, max_games)  # type: ignore[arg-type]
        get_game(game)
    except (ValueError, GameError) as err:
        raise click.UsageError(str(err)) from None
    settings = tournament.Settings(Clocks(deadline_ms, time_bank_ms, startup_ms, strikes),
                                   sandbox, limits_from(limits))
    if seed is None:  # unguessable: a bot that knew it could rebuild every deal
        seed = secrets.randbelow(1 << 62)
    with opened(db_path, create=True) as store:
        cid = runner.create(store, game=game, new=new, base=base,
                            fillers=[f.strip() for f in fillers.split(",") if f.strip()],
                            seats=seats, test=test, seed=seed,
                            options=parse_options(option_pairs), settings=settings,
                            batch=batch)
        click.echo(f"comparison {cid}: {new} against {base} at {game}", err=True)
        _play(store, cid, workers, executor_choice, as_json)


@compare_group.command("resume")
@click.argument("comparison_id", metavar="ID", type=SQLITE_ID)
@click.option("--workers", type=click.IntRange(min=1),
              help="Parallel matches (default: the number of cores).")
@executor_options
@db_option
@json_option
def compare_resume(comparison_id: int, workers: int | None, db_path: Path, as_json: bool,
                   executor_choice: ExecutorChoice) -> None:
    """Go on with comparison ID after Ctrl-C or a crash: the games stored count once,
    the rest are played."""
    with opened(db_path) as store:
        store.comparison(comparison_id)  # a clear error before any executor starts
        _play(store, comparison_id, workers, executor_choice, as_json)


def _play(store: Store, cid: int, workers: int | None, choice: ExecutorChoice,
          as_json: bool) -> None:
    shown = [0.0]

    def live(state: runner.State) -> None:
        now = time.monotonic()
        if now - shown[0] >= 1.0 or state.decided:  # at most a line a second
            shown[0] = now
            click.echo(state.line(), err=True)

    try:
        with executor(choice, workers, f"compare-{cid}") as chosen:
            result = runner.run(store, cid, chosen, on_group=live)
    except (KeyboardInterrupt, SystemExit) as stop:
        raise interrupted(stop, ["arena", "compare", "resume", str(cid)]) from None
    for error in result.errors:
        click.echo(f"error: {error}", err=True)
    info = _info(store, cid)
    if as_json:
        echo_json(info)
    else:
        _print(info)
    if result.errors:
        raise click.ClickException(f"a match of comparison {cid} failed; fix the cause "
                                   f"above, then go on with: arena compare resume {cid}")


_VERDICTS = {"H1": "H1 accepted: NEW is better", "H0": "H0 accepted: NEW is not better",
             "inconclusive": "inconclusive at the cap", None: "not finished"}


def _info(store: Store, cid: int) -> dict[str, Any]:
    row = store.comparison(cid)
    state = runner.state_of(store, row)
    return {"id": row.id, "game": row.game, "new": row.new, "base": row.base,
            "bots": row.bots, "seats": row.seats, "test": row.test,
            "created_at": row.created_at, "finished_at": row.finished_at,
            "verdict": row.verdict, **state.figures(), "state": state.verdict}


def _print(info: dict[str, Any]) -> None:
    out = views.console()
    out.print(f"comparison {info['id']}: {info['new']} against {info['base']} at "
              f"{info['game']}, {info['seats']} seats")
    click.echo(info["line"])  # one line, never wrapped: scripts grep it, as fastchess's
    click.echo(_VERDICTS.get(info["verdict"], str(info["verdict"])))


@compare_group.command("list")
@db_option
@json_option
def compare_list(db_path: Path, as_json: bool) -> None:
    """List the comparisons, newest first, with their verdicts."""
    with opened(db_path) as store:
        rows = [{"id": r.id, "game": r.game, "new": r.new, "base": r.base,
                 "games": (r.summary or {}).get("games"), "verdict": r.verdict,
                 "created_at": r.created_at, "finished_at": r.finished_at}
                for r in store.comparisons()]
    if as_json:
        echo_json(rows)
    else:
        views.console().print(views.table("Comparisons", rows, [
            ("id", "id"), ("game", "game"), ("new", "new"), ("base", "base"),
            ("games", "games"), ("verdict", "verdict"), ("created_at", "created")]))


@compare_group.command("show")
@click.argument("comparison_id", metavar="ID", type=SQLITE_ID)
@db_option
@json_option
def compare_show(comparison_id: int, db_path: Path, as_json: bool) -> None:
    """Show comparison ID: its bots, its test, its figures and its verdict."""
    with opened(db_path) as store:
        info = _info(store, comparison_id)
    if as_json:
        echo_json(info)
    else:
        _print(info)
