"""The submission pipeline (issue 15 §3): each received upload, built and checked in the
sandbox as a background job, ``received -> building -> checking -> active | failed``.

A job, in a worker thread (``jobs.workers`` of them), each step with its time limit:

1. ``building``: the stored archive is unpacked (every archive rule enforced again)
   into a job folder; a bot with a build step is built in the sandbox
   (:func:`referee.programs.build_program`, ``jobs.build_timeout_s``);
2. ``checking``: ``arena bot check --json`` against the built-in bots of its game, in
   a process of its own session, killed whole at ``jobs.check_timeout_s``;
3. ``active``: the bot is copied into the bot store (:func:`arena.botstore.keep_bot`)
   and, in one transaction, added as its name's newest version and the job marked
   active (so tournaments and the ladder pick it); otherwise ``failed`` with the
   reason. The build log, the check's report and the bot's stderr (a tail of
   ``jobs.log_kb``, with its whole size) are kept for the author.

Nothing fails silently: any exception in a job fails it with its message, and is
logged. A kill -9 leaves jobs in building or checking; :meth:`Pipeline.start` sets
them back to received (a job started ``jobs.max_attempts`` times fails instead) and
runs them again: keeping a bot's copy finds the one already made, and a version is
added only with the job's move to active, so each job adds at most one version.

One pipeline per database: a pipeline runs jobs only while it holds the lock file
``DB.pipeline`` (``flock``, which a kill -9 frees). A second server on the same
database by mistake waits: its start once set the first's running jobs back to
received, and ran them a second time beside the first (found by review). When the
first is gone the waiting one takes the lock, recovers what it left, and runs on.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from arena.botstore import keep_bot
from leaderboard.store import Store
from leaderboard.store.rows import SubmissionRow
from leaderboard.store.writes_submissions import AuthorDisabled, BotRetired
from referee import gate, scratch
from referee.botfiles import MANIFEST
from referee.errors import BotSpecError, RefereeError
from referee.programs import build_program, load_program
from referee.text import printable

from .accept import archive_path
from .archive import ArchiveError, ArchiveLimits, unpack

log = logging.getLogger(__name__)

POLL_S = 1.0
"""How often an idle worker looks for received jobs (another process may add them)."""


class JobFailed(Exception):
    """A job's step refused the bot: ``message`` says why, ``fields`` what to keep."""

    def __init__(self, message: str, **fields: Any) -> None:
        super().__init__(message)
        self.fields = fields


def tail(text: str, limit: int) -> str:
    """The end of ``text`` within ``limit`` bytes of UTF-8, with what was cut said."""
    data = text.encode()
    if len(data) <= limit:
        return text
    kept = data[-limit:].decode(errors="ignore")
    return f"[{len(data) - len(kept.encode())} earlier bytes not kept]\n{kept}"


def bot_root(unpacked: Path) -> Path:
    """The bot's folder in an unpacked archive: the archive's root, or its one folder
    when the root holds nothing else and no manifest (``tar czf bot.tgz mybot/``)."""
    names = os.listdir(unpacked)
    if MANIFEST not in names and len(names) == 1 and (unpacked / names[0]).is_dir() \
            and not (unpacked / names[0]).is_symlink():
        return unpacked / names[0]
    return unpacked


class Pipeline:
    """The background runner of received submissions for ``config``'s database."""

    def __init__(self, config: Any) -> None:
        self.config = config
        self.jobs = config.jobs
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._threads: list[threading.Thread] = []
        self.work = config.data_path / "jobs"
        self._leading = threading.Lock()
        self._lock_fd: int | None = None
        self._waiting_said = False

    @property
    def lock_path(self) -> Path:
        """The lock file of the database's one running pipeline."""
        db = Path(self.config.db_path)
        return db.with_name(db.name + ".pipeline")

    def lead(self) -> bool:
        """Whether this pipeline runs the database's jobs: it holds the lock, or takes it
        now (and then recovers what a pipeline before it left); False while another
        pipeline holds it."""
        with self._leading:
            if self._lock_fd is not None:
                return True
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                if not self._waiting_said:
                    self._waiting_said = True
                    log.warning("another pipeline runs the jobs of %s (its lock %s is "
                                "held): this one waits, and takes over when it stops",
                                self.config.db_path, self.lock_path)
                return False
            except BaseException:
                os.close(fd)
                raise
            self._lock_fd = fd
            try:
                self.recover()
            except BaseException:
                self._release()
                raise
            return True

    def _release(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # and with it the flock
            self._lock_fd = None

    # ------------------------------------------------------------- running
    def start(self) -> None:
        """Lead if no other pipeline does (setting interrupted jobs back), then start
        ``jobs.workers`` worker threads (which wait while another pipeline leads)."""
        self._stop.clear()
        self.lead()
        for n in range(self.jobs.workers):
            thread = threading.Thread(target=self._worker, name=f"arena-submissions-{n}",
                                      daemon=True)
            thread.start()
            self._threads.append(thread)

    def wake(self) -> None:
        """A submission was received: an idle worker looks now, not at its next poll."""
        self._wake.set()

    def stop(self, timeout_s: float = 30.0) -> None:
        """Stop the workers after their current job (at most ``timeout_s`` waited)."""
        self._stop.set()
        self._wake.set()
        for thread in self._threads:
            thread.join(timeout_s)
        alive = any(thread.is_alive() for thread in self._threads)
        self._threads.clear()
        with self._leading:
            if not alive:  # a worker still in its job keeps the lead until it ends
                self._release()

    def recover(self) -> list[tuple[int, bool]]:
        """Jobs a kill left in building or checking: set back to received (True) or, after
        ``jobs.max_attempts`` starts, failed (False). Also sweeps dead jobs' folders."""
        self.work.mkdir(parents=True, exist_ok=True)
        scratch.sweep(str(self.work))
        store = Store(self.config.db_path)
        try:
            moved = list(store.requeue_interrupted(self.jobs.max_attempts))
        finally:
            store.close()
        for sid, again in moved:
            log.warning("submission %d was interrupted: %s", sid,
                        "run again" if again else "given up")
        return moved

    def _worker(self) -> None:
        store = Store(self.config.db_path)
        try:
            while not self._stop.is_set():
                try:
                    ran = self.lead() and self.run_once(store)
                except Exception:  # the store busy, say: logged, and the worker goes on
                    log.exception("the submissions worker could not take or finish a job")
                    ran = False
                if not ran:
                    self._wake.wait(POLL_S)
                    self._wake.clear()
        finally:
            store.close()

    def run_once(self, store: Store) -> bool:
        """Take the oldest received job and run it to active or failed; False if none."""
        row = store.start_next()
        if row is None:
            return False
        log.info("submission %d (bot %r): building", row.id, row.bot_name)
        try:
            self.run_job(store, row)
        except JobFailed as failed:
            log.info("submission %d failed: %s", row.id, failed)
            store.fail_submission(row.id, str(failed), **failed.fields)
        except Exception as err:  # nothing fails silently (issue 15 §3)
            log.exception("submission %d: the job broke", row.id)
            store.fail_submission(row.id, f"the server's job broke: {type(err).__name__}: "
                                          f"{err}")
        return True

    # ----------------------------------------------------------------- a job
    def run_job(self, store: Store, row: SubmissionRow) -> None:
        """Build, check and keep one submission (it is ``building``)."""
        if store.author_disabled(row.author_id):  # nothing of theirs is built or run
            raise JobFailed(str(AuthorDisabled(row.id)))
        self.work.mkdir(parents=True, exist_ok=True)
        folder = Path(scratch.mkdtemp("arena-job-", dir=str(self.work)))
        try:
            root = self._unpack(row, folder)
            build_log = self._build(root, folder)
            if not store.move_submission(row.id, "building", "checking",
                                         build_log=build_log):
                raise JobFailed("the job was moved by another runner while building")
            report = self._check(row, root)
            limit = self.jobs.log_kb << 10
            stderr = tail(report.pop("stderr", "") or "", limit)
            kept = {"report": report, "stderr": stderr,
                    "stderr_bytes": int(report.get("stderr_bytes") or 0)}
            if not report.get("passed"):
                problems = report.get("problems") or ["no reason given"]
                raise JobFailed(f"the check failed: {problems[0]}"
                                + (f" (and {len(problems) - 1} more problems)"
                                   if len(problems) > 1 else ""), **kept)
            try:
                digest, stored = keep_bot(store, row.bot_name, str(root), self.jobs.sandbox,
                                          greet=False)
            except BotSpecError as err:
                raise JobFailed(f"the bot could not be stored: {err}", **kept) from None
            try:
                bot, _ = store.activate_submission(row.id, digest, str(stored), "folder",
                                                   **kept)
            except (BotRetired, AuthorDisabled) as err:
                raise JobFailed(str(err), **kept) from None
            log.info("submission %d: active as %s version %d", row.id, row.bot_name,
                     bot["version"])
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def _unpack(self, row: SubmissionRow, folder: Path) -> Path:
        source = archive_path(self.config, row.archive_sha256)
        if not source.is_file():
            raise JobFailed(f"its archive {row.archive_sha256[:16]} is missing from the "
                            f"server's data folder")
        unpacked = folder / "bot"
        try:
            unpack(source, unpacked, row.archive_format or None,
                   ArchiveLimits.of(self.config.uploads))
        except ArchiveError as err:
            raise JobFailed(f"the archive was refused: {err}") from None
        root = bot_root(unpacked)
        if not (root / MANIFEST).is_file():
            raise JobFailed(f"the archive holds no {MANIFEST} at its root (it needs at "
                            f"least: run = [\"command\", \"args\"]; docs/protocol.md)")
        return root

    def _build(self, root: Path, folder: Path) -> str:
        """Build the bot if it has a build step; the build's log, for its author."""
        try:
            program = load_program(str(root))
        except (BotSpecError, RefereeError) as err:
            raise JobFailed(f"the bot cannot be loaded: {err}") from None
        if not program.build:
            return "no build step"
        started = time.monotonic()
        build = folder / "build"
        build.mkdir()
        limit = self.jobs.log_kb << 10
        try:
            built = build_program(program, build, self.jobs.sandbox, None,
                                  timeout_s=self.jobs.build_timeout_s)
        except (BotSpecError, RefereeError) as err:
            raise JobFailed(f"the build failed: {str(err).partition(chr(10))[0]}",
                            build_log=tail(str(err), limit)) from None
        return tail(f"built in {time.monotonic() - started:.1f} s "
                    f"({' '.join(program.build)!r}); its output:\n{built.build_log}"
                    if built.build_log.strip() else
                    f"built in {time.monotonic() - started:.1f} s "
                    f"({' '.join(program.build)!r}), with no output", limit)

    def _check(self, row: SubmissionRow, root: Path) -> dict[str, Any]:
        """``arena bot check --json`` in its own session, killed whole at the limit."""
        argv = [sys.executable, "-m", "arena", "bot", "check", str(root), "--game", row.game,
                "--games", str(self.jobs.check_games), "--sandbox", self.jobs.sandbox,
                "--json"]
        # Its own session, to be killed whole; and it dies with this process, so a
        # server killed with kill -9 leaves no check running (issue 15 §3).
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, start_new_session=True,
                                preexec_fn=gate.die_with(os.getpid()))  # noqa: PLW1509
        try:
            out, err = proc.communicate(timeout=self.jobs.check_timeout_s)
        except subprocess.TimeoutExpired:
            _kill(proc)
            raise JobFailed(f"the check took over {self.jobs.check_timeout_s:.0f} s "
                            f"(jobs.check_timeout_s) and was stopped") from None
        except BaseException:
            _kill(proc)
            raise
        try:
            report = json.loads(out)
        except ValueError:
            said = printable(err.decode(errors="replace"))[-2000:].strip()
            raise JobFailed(f"the check could not run (exit status {proc.returncode}): "
                            f"{said or 'no output'}") from None
        if not isinstance(report, dict):
            raise JobFailed("the check said no report")
        return report


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """Kill the check's whole session and reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.communicate()
