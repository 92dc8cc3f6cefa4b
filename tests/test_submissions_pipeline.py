"""The submission pipeline (issue 15 §3): real bots built and checked in the real
sandbox, each step's failure kept for the author, and a kill -9 mid-build survived."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from arena.submissions import accept
from arena.submissions.pipeline import Pipeline, bot_root, tail
from arena.web.config import ServerConfig
from leaderboard.store import Store
from tests.helpers import GOOD_BOT, environment, processes_mentioning_now
from tests.hostile import archives as hostile

from .server_helpers import Who, bubblewrap, pipeline_setup


def bot_archive(files: dict[str, str]) -> bytes:
    return hostile.files({name: text.encode() for name, text in files.items()})


GOOD = {"bot.toml": 'run = ["bot.py"]\n', "bot.py": GOOD_BOT}


def run(store: Store, config: ServerConfig, files: dict[str, str], name: str = "mine"):
    row = accept(store, config, Who(1), name, "stop-me", [bot_archive(files)], None)
    assert Pipeline(config).run_once(store)
    done = store.submission(row.id)
    assert done is not None
    return done


@pytest.mark.sandbox
@bubblewrap
def test_a_good_bot_goes_active_as_its_names_newest_version(tmp_path: Path) -> None:
    store, config = pipeline_setup(tmp_path)
    done = run(store, config, {**GOOD, "bot.py": GOOD_BOT.replace(
        "from protocol", "import sys\nprint('hello from the bot', file=sys.stderr)\nfrom protocol")})
    assert done.state == "active", (done.error, done.report)
    assert done.version == 1 and done.bot_id is not None
    assert done.report is not None and done.report["passed"] is True
    assert done.stderr_bytes and "hello from the bot" in (done.stderr or "")
    assert done.build_log == "no build step"
    newest = store.bot("mine")
    assert newest["id"] == done.bot_id and Path(newest["path"], "bot.toml").is_file()
    again = run(store, config, {**GOOD, "extra.txt": "v2"})
    assert again.state == "active" and again.version == 2
    assert store.bot("mine")["version"] == 2


@pytest.mark.sandbox
@bubblewrap
def test_a_failing_build_fails_with_its_log(tmp_path: Path) -> None:
    store, config = pipeline_setup(tmp_path)
    done = run(store, config, {**GOOD, "bot.toml": f'run = ["bot.py"]\nbuild = '
                               f'["{sys.executable}", "-c", "import sys; print(\'make: '
                               f'*** no rule <b>\', file=sys.stderr); sys.exit(2)"]\n'})
    assert done.state == "failed" and done.error is not None
    assert done.error.startswith("the build failed"), done.error
    assert "make: *** no rule <b>" in (done.build_log or "")
    assert not store.bot_exists("mine")


@pytest.mark.sandbox
@bubblewrap
def test_a_successful_builds_output_is_kept_for_its_author(tmp_path: Path) -> None:
    store, config = pipeline_setup(tmp_path)
    done = run(store, config, {**GOOD, "bot.toml": f'run = ["bot.py"]\nbuild = '
                               f'["{sys.executable}", "-c", "print(\'compiled 3 files\')"]\n'})
    assert done.state == "active", done.error
    assert done.build_log is not None and done.build_log.startswith("built in ")
    assert "compiled 3 files" in done.build_log


@pytest.mark.sandbox
@bubblewrap
def test_a_crashing_bot_fails_the_check_with_its_report_and_stderr(tmp_path: Path) -> None:
    store, config = pipeline_setup(tmp_path)
    done = run(store, config, {"bot.toml": 'run = ["bot.py"]\n', "bot.py":
                               "import sys\nprint('Traceback: oops', file=sys.stderr)\n"
                               "sys.exit(3)\n"})
    assert done.state == "failed" and (done.error or "").startswith("the check failed")
    assert done.report is not None and done.report["passed"] is False
    assert "Traceback: oops" in (done.stderr or "") and done.stderr_bytes
    assert not store.bot_exists("mine")


def test_an_archive_without_a_manifest_fails_by_name(tmp_path: Path) -> None:
    store, config = pipeline_setup(tmp_path)
    done = run(store, config, {"readme.txt": "hi"})
    assert done.state == "failed" and "bot.toml" in (done.error or "")


def test_a_broken_job_fails_with_its_message_and_never_silently(tmp_path: Path) -> None:
    store, config = pipeline_setup(tmp_path)
    row = accept(store, config, Who(1), "mine", "stop-me", [bot_archive(GOOD)], None)
    os.unlink(config.data_path / "archives" / row.archive_sha256)
    assert Pipeline(config).run_once(store)
    done = store.submission(row.id)
    assert done is not None and done.state == "failed" and "missing" in (done.error or "")


def test_a_folder_at_the_root_is_the_bot(tmp_path: Path) -> None:
    (tmp_path / "u" / "mybot").mkdir(parents=True)
    assert bot_root(tmp_path / "u") == tmp_path / "u" / "mybot"
    (tmp_path / "u" / "bot.toml").write_text("")
    assert bot_root(tmp_path / "u") == tmp_path / "u"
    assert tail("x" * 100, 10).endswith("x" * 10) and "90 earlier bytes" in tail("x" * 100, 10)


@pytest.mark.slow
@pytest.mark.sandbox
@bubblewrap
def test_a_pipeline_killed_mid_build_runs_the_job_again_to_one_version(tmp_path: Path) -> None:
    """kill -9 of the process running the pipeline while the bot's build sleeps; a new
    pipeline sets the job back to received and runs it: active exactly once, one
    version, and no build process of the killed one left."""
    store, config = pipeline_setup(tmp_path, build_timeout_s=120)
    files = {**GOOD, "bot.toml": f'run = ["bot.py"]\nbuild = ["{sys.executable}", "-c", '
                                 f'"import time; time.sleep(6)", "sleepy-{tmp_path.name}"]\n'}
    row = accept(store, config, Who(1), "mine", "stop-me", [bot_archive(files)], None)
    script = textwrap.dedent(f"""
        import time
        from arena.submissions.pipeline import Pipeline
        from arena.web.config import parse_config
        config = parse_config({{"server": {{"database": {str(tmp_path / "arena.db")!r},
            "data_dir": {str(tmp_path / "data")!r}}},
            "jobs": {{"sandbox": "required", "check_games": 1, "build_timeout_s": 120}}}})
        pipeline = Pipeline(config)
        pipeline.start()
        time.sleep(600)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], env=environment())
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            now = store.submission(row.id)
            if now is not None and now.state == "building" and sleeping(tmp_path.name):
                break
            time.sleep(0.2)
        else:
            pytest.fail("the build never started")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
    # Its undertaker kills the build once it sees its owner gone: soon, but a loaded
    # machine may take a while (the guarantee is that it ends, not how fast).
    gone = time.monotonic() + 60
    while sleeping(tmp_path.name) and time.monotonic() < gone:
        time.sleep(0.2)
    assert not sleeping(tmp_path.name), "the killed pipeline's build lives on"
    pipeline = Pipeline(config)
    assert pipeline.recover() == [(row.id, True)]
    assert pipeline.run_once(store)
    done = store.submission(row.id)
    assert done is not None and done.state == "active", (done and done.error)
    assert done.attempts == 2 and done.version == 1
    assert len(store.bot_versions("mine")) == 1
    assert not pipeline.run_once(store), "the job ran twice"


def sleeping(tag: str) -> bool:
    """Whether a build process carrying ``tag`` in its command line runs."""
    return bool(processes_mentioning_now(f"sleepy-{tag}"))
