"""``arena ladder`` (run, status, show, list, stop, pause, resume, finals): the
continuous ladder from the command line (issue 16 §1, docs/ladder.md)."""

from __future__ import annotations

import re
import secrets
import shlex
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import click

from arena import tournament
from arena.ladder import actions, service, snapshot
from leaderboard import views
from leaderboard.store import Store
from leaderboard.store.rows_ladders import LadderRow
from referee.games import GameError, get_game
from referee.match import Clocks

from .cluster import LOCAL, ExecutorChoice, executor, executor_options
from .common import echo_json, interrupted, make_log_dir, opened, parse_options
from .options import (
    LIMIT_NAMES,
    SQLITE_ID,
    clock_options,
    db_option,
    json_option,
    limits_from,
)

_DURATION = re.compile(r"([0-9]{1,9})([smhd])")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}


class Until(click.ParamType):
    """``--until``: a time (ISO 8601, UTC unless it says otherwise) or a duration from
    now (``90s``, ``30m``, ``8h``, ``2d``)."""

    name = "TIME"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> datetime:
        if isinstance(value, datetime):
            return value
        text = str(value).strip()
        found = _DURATION.fullmatch(text)
        if found:
            try:
                amount = timedelta(**{_UNITS[found.group(2)]: int(found.group(1))})
                return datetime.now(UTC) + amount
            except OverflowError:  # 999999999d: past the year 9999 (found by review)
                self.fail(f"{text!r} ends after the year 9999: give a shorter duration",
                          param, ctx)
        try:
            when = datetime.fromisoformat(text)
        except ValueError:
            self.fail(f"{text!r} is neither a time (2026-12-24T18:00) nor a duration "
                      f"(90s, 30m, 8h, 2d)", param, ctx)
        return when if when.tzinfo else when.replace(tzinfo=UTC)


def _seat_counts(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[
        int, ...] | None:
    if value is None:
        return None
    try:
        counts = tuple(sorted({int(v) for v in value.split(",") if v.strip()}))
    except ValueError:
        raise click.BadParameter(f"{value!r}: expected seat counts such as 3,4") from None
    if not counts:
        raise click.BadParameter(f"{value!r}: expected seat counts such as 3,4")
    return counts


@click.group("ladder")
def ladder_group() -> None:
    """Run a continuous ladder, and watch, steer and end it (docs/ladder.md)."""


@ladder_group.command("run")
@click.argument("game")
@click.option("--name", help="The ladder's name (default: GAME-ladder).")
@click.option("--seats", callback=_seat_counts, metavar="K[,K...]",
              help="Seat counts a match may have (default: the game's, up to 4).")
@click.option("--duplicate", is_flag=True,
              help="Play each deal in every rotation of the match's seats.")
@click.option("--workers", type=click.IntRange(min=1),
              help="Parallel matches (default: the number of cores).")
@click.option("--games", type=click.IntRange(min=1),
              help="Stop after this run has scheduled N games (default: never).")
@click.option("--until", type=Until(),
              help="Stop pairing at this time (ISO 8601, UTC) or after this long "
                   "(90s, 30m, 8h, 2d).")
@click.option("--same-author", is_flag=True,
              help="Allow two versions of one author in a game.")
@click.option("--baselines", metavar="BOT[,BOT...]",
              help="Built-in bots on the ladder too (builtin:random,builtin:heuristic).")
@click.option("--crash-streak", type=click.IntRange(0, 2**63 - 1),  # stored in SQLite
              default=service.CRASH_STREAK,
              show_default=True,
              help="Faulty games in a row that pause a version (0: never).")
@click.option("--seed", type=SQLITE_ID,
              help="The ladder's seed, and so every deal's (default: a random one, kept "
                   "with it). Keep it secret: a known seed tells bots every hidden card.")
@click.option("-o", "--option", "option_pairs", multiple=True, metavar="KEY=VALUE",
              help="A game option (VALUE as JSON), repeatable.")
@click.option("--log-dir", type=click.Path(file_okay=False),
              help="Keep each match's bot stderr and each game's record here.")
@executor_options
@db_option
@clock_options
@click.pass_context
def ladder_run(ctx: click.Context, game: str, name: str | None,
               seats: tuple[int, ...] | None, duplicate: bool, workers: int | None,
               games: int | None, until: datetime | None, same_author: bool,
               baselines: str | None, crash_streak: int, seed: int | None,
               option_pairs: tuple[str, ...], log_dir: str | None, deadline_ms: int,
               time_bank_ms: int, startup_ms: int, strikes: int, db_path: Path,
               sandbox: str, executor_choice: ExecutorChoice, **limits: int) -> None:
    """Play matches of GAME without end among the active bot versions (each bot's
    newest), picking up new bots, new versions and removed bots as it runs.

    The first run creates the ladder (its settings are kept); a run on an existing
    ladder continues it, with every game counted once, also after `kill -9`.
    Ctrl-C or SIGTERM stops it at once; `arena ladder stop L` after its matches in
    flight. One runner per ladder: a second one says who runs it and exits 1."""
    if games is not None and until is not None:
        raise click.UsageError("give --games N or --until TIME, not both")
    try:
        cls = get_game(game)  # before the database: a typo must not leave a new one
    except GameError as err:
        raise click.ClickException(str(err)) from None
    name = name or f"{game}-ladder"
    make_log_dir(log_dir)
    settings = tournament.Settings(Clocks(deadline_ms, time_bank_ms, startup_ms, strikes),
                                   sandbox, limits_from(limits))
    # Everything the ladder stores: given again to a run of an existing ladder, it is
    # refused, never silently ignored.
    given = {p for p in ("seats", "duplicate", "same_author", "baselines", "crash_streak",
                         "seed", "option_pairs", "deadline_ms", "time_bank_ms",
                         "startup_ms", "strikes", "sandbox", *LIMIT_NAMES)
             if ctx.get_parameter_source(p) is not click.core.ParameterSource.DEFAULT}
    with opened(db_path, create=True) as store:
        found = store.ladder_or_none(name)
        if found is None:
            if store.tournament_exists(name):
                raise click.ClickException(f"{name!r} is a tournament, not a ladder; "
                                           f"choose another --name")
            low, high = cls.player_range(parse_options(option_pairs))
            spec = service.LadderSpec(
                game, seats or tuple(range(max(2, low), min(high, 4) + 1)), duplicate,
                same_author, tuple(b.strip() for b in (baselines or "").split(",")
                                   if b.strip()), crash_streak,
                options=parse_options(option_pairs))
            found = service.create(store, name, spec, secrets.randbelow(1 << 62)
                                   if seed is None else seed, settings)
            click.echo(f"ladder {name}: created ({game}, seats "
                       f"{','.join(map(str, found.seat_counts))})")
        else:
            stored = {b["id"]: b["name"] for b in store.bots(include_removed=True)}
            same = {
                "seats": tuple(seats or ()) == found.seat_counts,
                "duplicate": duplicate == found.duplicate,
                "same_author": same_author == found.same_author,
                "crash_streak": crash_streak == found.crash_streak,
                "seed": seed == found.seed,
                "baselines": sorted(b.strip() for b in (baselines or "").split(",")
                                    if b.strip()) == sorted(stored[i] for i in found.baselines),
                "option_pairs": all(found.options.get(k) == v
                                    for k, v in parse_options(option_pairs).items()),
            }
            kept = found.settings
            for key, value in settings.to_json()["clocks"].items():
                same[key] = kept.get("clocks", {}).get(key) == value
            same["strikes"] = same.pop("max_strikes", False)  # the option's name
            same["sandbox"] = kept.get("sandbox") == sandbox
            for key, value in settings.to_json()["limits"].items():
                same[key] = kept.get("limits", {}).get(key) == value
            # A service unit's command line may repeat what is stored; only a change is
            # refused, never silently ignored.
            _check_same(found, game, {g for g in given if not same.get(g, False)})
            click.echo(f"ladder {name}: continued"
                       + (" (its finals)" if found.in_finals else ""))
        _run(store, name, workers, games, until, log_dir, executor_choice)


def _check_same(ladder: LadderRow, game: str, given: set[str]) -> None:
    """A run of an existing ladder keeps its stored settings: ``given``, the defining
    options given with another value than the stored one, are refused (they would be
    ignored)."""
    if ladder.game != game:
        raise click.ClickException(f"ladder {ladder.name!r} is of game {ladder.game!r}, "
                                   f"not {game!r}")
    if given:
        flags = ", ".join(f"--{g.replace('_', '-').replace('option-pairs', 'option')}"
                          for g in sorted(given))
        raise click.ClickException(
            f"ladder {ladder.name!r} exists: its settings were fixed when it was created "
            f"(seats {','.join(map(str, ladder.seat_counts))}, duplicate "
            f"{ladder.duplicate}, crash streak {ladder.crash_streak}, its clocks, sandbox "
            f"and limits); run it without "
            f"{flags}, or start another ladder with --name")


def _run(store: Store, name: str, workers: int | None, games: int | None,
         until: datetime | None, log_dir: str | None,
         choice: ExecutorChoice = LOCAL) -> None:
    out = views.console()

    def progress(now: service.RunResult) -> None:
        if now.played % 10 == 0:
            out.print(f"ladder {name}: {now.played} games played", markup=False)

    with executor(choice, workers, name) as chosen:
        runner = service.Runner(store, name, chosen, games=games, until=until,
                                log_dir=log_dir, on_game=progress, parallel=chosen.parallel())
        try:
            result = runner.run()
        except (KeyboardInterrupt, SystemExit) as stop:
            raise interrupted(stop, ["arena", "ladder", "run", runner.ladder.game,
                                     "--name", name]) from None
    for error in result.errors:
        click.echo(f"error: {error}", err=True)
    if result.more_errors:
        click.echo(f"error: and {result.more_errors} more (the log has them all)", err=True)
    click.echo(f"ladder {name}: {result.played} game{'' if result.played == 1 else 's'} "
               f"played in this run, "
               f"{store.stored_count(runner.ladder.tournament_id)} in all"
               + (f", {result.withdrawn} withdrawn" if result.withdrawn else "")
               + ("; its finals are over" if result.finished else ""))


@ladder_group.command("status")
@click.argument("name", required=False)
@db_option
@json_option
def ladder_status(name: str | None, db_path: Path, as_json: bool) -> None:
    """Whether ladder NAME (or every ladder) runs, who runs it, its matches in flight,
    games and failures."""
    with opened(db_path) as store:
        ladders = [store.ladder(name)] if name else store.ladder_list()
        rows = [_status(store, ladder) for ladder in ladders]
    if as_json:
        echo_json(rows[0] if name else rows)
        return
    views.console().print(views.table("Ladders", rows, [
        ("name", "ladder"), ("game", "game"), ("state", "state"), ("runner", "runner"),
        ("heartbeat_at", "heartbeat"), ("in_flight", "in flight"), ("games", "games"),
        ("failures", "withdrawn")]))


def _status(store: Store, ladder: LadderRow) -> dict[str, Any]:
    return {"name": ladder.name, "game": ladder.game, "state": snapshot.state(ladder),
            "running": snapshot.running(ladder),
            "runner": ladder.runner if snapshot.running(ladder) else None,
            "heartbeat_at": ladder.heartbeat_at,
            "stop_requested_at": ladder.stop_requested_at,
            "in_flight": len(store.ladder_unplayed(ladder.tournament_id)),
            "games": store.stored_count(ladder.tournament_id),
            "failures": ladder.scheduled - store.ladder_schedule_size(ladder.tournament_id)}


@ladder_group.command("show")
@click.argument("name")
@db_option
@json_option
def ladder_show(name: str, db_path: Path, as_json: bool) -> None:
    """Ladder NAME: its standings among the roster (confidence, games, the last hour's,
    last fault, paused and why), the queue, the matches in flight, recent games."""
    with opened(db_path) as store:
        info = snapshot.snapshot(store, name)
    if as_json:
        echo_json(info)
        return
    out = views.console()
    out.print(f"{info['name']}: {info['game']}, {info['state']}, seats "
              f"{','.join(map(str, info['seat_counts']))}"
              f"{', duplicate deals' if info['duplicate'] else ''}; {info['games']} games, "
              f"{info['failures']} withdrawn", markup=False)
    if info["finals"]:
        out.print(f"finals: {info['finals']['games_per_bot']} games per bot from match "
                  f"{info['finals']['from_match']} ({info['finals']['started_at']})")
    rows = [r | {"interval": views.interval_cell(r), "sure": views.sure_cell(r),
                 "fault": (f"{r['last_fault']['kind']} (game {r['last_fault']['game_id']})"
                           if r["last_fault"] else ""),
                 "why": r["paused"]["reason"] if r["paused"] else ""}
            for r in info["standings"]]
    out.print(views.table("Standings", rows, [
        ("rank", "#"), ("bot", "bot"), ("version", "v"), ("author", "author"),
        ("mu", "mu"), ("sigma", "sigma"), ("interval", "95%"), ("sure", "P>next"),
        ("games", "games"), ("games_last_hour", "last hour"), ("fault", "last fault"),
        ("why", "paused")], {"mu": ".2f", "sigma": ".2f"}, whole=("bot",)))
    if rows:
        out.print(views.LEGEND)
    for r in info["standings"]:
        if r["paused"]:
            out.print(f"{r['bot']}@{r['version']} is paused ({r['paused']['reason']}): it "
                      f"plays again with a new version, or after: arena ladder resume "
                      f"{shlex.quote(name)} {shlex.quote(r['bot'])}@{r['version']}",
                      markup=False)
    out.print("queue: " + (", ".join(info["queue"]) or "nobody"), markup=False)
    for match in info["in_flight"]:
        out.print(f"in flight: match {match['match']}: {' v '.join(match['seating'])}",
                  markup=False)
    for game in info["recent"][:5]:
        seats = ", ".join(f"{s['bot']}@{s['version']} {s['rank']}"
                          + ("" if s["status"] == "ok" else f" ({s['status']})")
                          for s in game["seating"])
        out.print(f"game {game['game_id']}: {seats}", markup=False)


@ladder_group.command("list")
@db_option
@json_option
def ladder_list(db_path: Path, as_json: bool) -> None:
    """List the ladders with their game, state and settings."""
    with opened(db_path) as store:
        rows: list[dict[str, Any]] = [{"name": ld.name, "game": ld.game, "state": snapshot.state(ld),
                 "seat_counts": list(ld.seat_counts), "duplicate": ld.duplicate,
                 "same_author": ld.same_author, "crash_streak": ld.crash_streak,
                 "games": store.stored_count(ld.tournament_id),
                 "created_at": ld.created_at, "finished_at": ld.finished_at}
                for ld in store.ladder_list()]
    if as_json:
        echo_json(rows)
        return
    views.console().print(views.table("Ladders", [
        r | {"seats": ",".join(map(str, r["seat_counts"]))} for r in rows], [
        ("name", "ladder"), ("game", "game"), ("state", "state"), ("seats", "seats"),
        ("games", "games"), ("created_at", "created"), ("finished_at", "finished")]))


@ladder_group.command("stop")
@click.argument("name")
@db_option
def ladder_stop(name: str, db_path: Path) -> None:
    """Ask ladder NAME's runner to stop once its matches in flight end."""
    with opened(db_path) as store:
        asked = actions.stop(store, name)
    click.echo(f"ladder {name}: asked its runner to stop after its matches in flight"
               if asked else f"ladder {name} is not running: nothing to stop")


@ladder_group.command("pause")
@click.argument("name")
@click.argument("bot")
@click.option("--note", help="Why, for the bot's author (shown with the pause).")
@db_option
def ladder_pause(name: str, bot: str, note: str | None, db_path: Path) -> None:
    """Pause BOT (NAME or NAME@V) in ladder NAME: it begins no match until it is
    resumed or a new version of it is added."""
    with opened(db_path) as store:
        entry = actions.pause(store, name, bot, note)
    click.echo(f"ladder {name}: {entry.label} paused")


@ladder_group.command("resume")
@click.argument("name")
@click.argument("bot")
@db_option
def ladder_resume(name: str, bot: str, db_path: Path) -> None:
    """Resume BOT (NAME or NAME@V), paused in ladder NAME by the organiser or by a
    crash streak; its streak counts again from now."""
    with opened(db_path) as store:
        entry = actions.resume(store, name, bot)
    click.echo(f"ladder {name}: {entry.label} resumed")


@ladder_group.command("finals")
@click.argument("name")
@click.option("--games-per-bot", type=click.IntRange(1, 2**63 - 1), required=True,
              help="Finals games every finalist plays.")
@click.option("--workers", type=click.IntRange(min=1),
              help="Parallel matches (default: the number of cores).")
@click.option("--log-dir", type=click.Path(file_okay=False),
              help="Keep each match's bot stderr and each game's record here.")
@executor_options
@db_option
def ladder_finals(name: str, games_per_bot: int, workers: int | None, log_dir: str | None,
                  db_path: Path, executor_choice: ExecutorChoice) -> None:
    """Begin (or continue) ladder NAME's finals: freeze its roster and refuse new
    submissions of its game, set tau to 0, play N games per finalist, then end it."""
    make_log_dir(log_dir)
    with opened(db_path) as store:
        ladder = actions.start_finals(store, name, games_per_bot)
        click.echo(f"ladder {name}: finals of {len(ladder.finalists or ())} bots, "
                   f"{games_per_bot} games each, tau 0 from match {ladder.finals_from}")
        if snapshot.running(ladder):
            click.echo(f"its runner ({ladder.runner}) plays them")
            return
        _run(store, name, workers, None, None, log_dir, executor_choice)
