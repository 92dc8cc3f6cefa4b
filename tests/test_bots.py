"""The example bots, the Python SDK, the codec, the schema files and the bot manifest.

The bots play real matches: real processes, real sockets (or pipes for the
stdio bot), the real referee and supervisor, in the sandbox the referee chooses
by default. Everything is seeded, so the results are the same on every run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol import PROTOCOL_VERSION
from protocol.client import BotError, run
from protocol.codec import (
    ProtocolError,
    decode_bot_message,
    decode_referee_message,
    encode,
    quote_bytes,
)
from protocol.messages import MAX_MESSAGE_BYTES, Action, Hello
from referee.errors import BotSpecError
from referee.match import Clocks, play_match
from referee.programs import BotProgram, build_program, load_program
from referee.records import GameRecord

from .helpers import arena, assert_clean

ROOT = Path(__file__).resolve().parents[1]
BOTS = ROOT / "bots"
RANDOM_BOT = str(BOTS / "random_bot.py")
STOP_ME_BOT = str(BOTS / "stop_me_bot.py")
JS_BOT = str(BOTS / "js_random")
DOC = ROOT / "docs" / "protocol.md"
SCHEMAS = ROOT / "protocol" / "schemas"

# A generous deadline: these tests check the bots' play, not the machine's speed,
# and a timeout would change the actions and with them the results.
CLOCKS = Clocks(deadline_ms=5000, time_bank_ms=10_000, startup_ms=20_000)
MARGIN_SEEDS = range(1000, 1030)
"""The fixed games on which stop_me_bot must beat random_bot (30 games, 4 players)."""


def wins(records: list[GameRecord], seat: int = 0) -> int:
    return sum(record.seats[seat].rank == 1 for record in records)


# ------------------------------------------------------------------ the bots
def test_random_bot_plays_a_clean_match() -> None:
    records = play_match("stop-me", [RANDOM_BOT, "builtin:random", "builtin:heuristic"],
                         3, 1, clocks=CLOCKS)
    assert len(records) == 3
    assert_clean(records)


@pytest.fixture(scope="module")
def margin_matches() -> dict[str, list[GameRecord]]:
    """stop_me_bot and random_bot, each against three builtin:random, on the same games."""
    out = {}
    for bot in (STOP_ME_BOT, RANDOM_BOT):
        out[bot] = play_match("stop-me", [bot] + ["builtin:random"] * 3, len(MARGIN_SEEDS),
                              MARGIN_SEEDS[0], clocks=CLOCKS)
    return out


@pytest.mark.slow
def test_stop_me_bot_plays_a_clean_match(margin_matches: dict[str, list[GameRecord]]) -> None:
    assert_clean(margin_matches[STOP_ME_BOT])
    assert_clean(margin_matches[RANDOM_BOT])


@pytest.mark.slow
def test_stop_me_bot_beats_random_by_a_clear_margin(
        margin_matches: dict[str, list[GameRecord]]) -> None:
    """Same seeds, same three builtin:random opponents: only seat 0 differs.

    A seat of four random players wins about a quarter of the games and of the
    rounds (a round gives one token). Measured on these 30 games: stop_me_bot 15
    wins and 38% of the tokens, random_bot 8 wins and 25% of the tokens (over 200
    games stop_me_bot wins about 70% of the games and 49% of the rounds).
    """
    games = len(MARGIN_SEEDS)
    smart, baseline = margin_matches[STOP_ME_BOT], margin_matches[RANDOM_BOT]

    def token_share(records: list[GameRecord]) -> float:
        mine = sum(r.seats[0].details["tokens"] for r in records)
        return mine / sum(s.details["tokens"] for r in records for s in r.seats)

    assert wins(smart) >= 0.4 * games, (wins(smart), wins(baseline))
    assert wins(smart) >= wins(baseline) + 0.2 * games, (wins(smart), wins(baseline))
    assert token_share(smart) >= token_share(baseline) + 0.08, (
        token_share(smart), token_share(baseline))


@pytest.mark.skipif(shutil.which("node") is None,
                    reason="node (Node.js) is not on PATH; CI installs it for the stdio bot")
def test_the_javascript_stdio_bot_plays_a_clean_match() -> None:
    records = play_match("stop-me", [JS_BOT, "builtin:random"], 2, 5, clocks=CLOCKS)
    assert_clean(records)
    assert load_program(JS_BOT).protocol == "stdio"


EOF_BOT = """\
import json, sys
print(json.dumps({"type": "hello", "protocol": 1, "token": __import__("os").environ["ARENA_TOKEN"],
                  "name": "until-eof"}), flush=True)
for line in sys.stdin:  # the usual loop: it ends at end of input
    message = json.loads(line)
    if message["type"] == "act":
        print(json.dumps({"type": "action", "seq": message["seq"], "action": message["legal"][0]}),
              flush=True)
print("stdin closed after", message["type"], file=sys.stderr, flush=True)
"""


def test_a_stdio_bot_reading_until_end_of_input_ends_by_itself(tmp_path: Path) -> None:
    """After ``bye`` the referee closes the bot's stdin, so a read-until-EOF loop ends."""
    folder = tmp_path / "eof_bot"
    folder.mkdir()
    (folder / "bot.py").write_text(EOF_BOT)
    (folder / "bot.toml").write_text(
        f'run = [{json.dumps(sys.executable)}, "bot.py"]\nprotocol = "stdio"\n')
    logs = tmp_path / "logs"
    records = play_match("stop-me", [str(folder), "builtin:random"], 1, 3, clocks=CLOCKS,
                         log_dir=logs)
    assert_clean(records)
    (log,) = logs.glob("seat0-*.stderr.log")
    assert "stdin closed after bye" in log.read_text()


# ------------------------------------------------------------------- the SDK
def test_run_outside_the_referee_says_how_to_start_a_bot(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ARENA_ENDPOINT", raising=False)
    monkeypatch.delenv("ARENA_TOKEN", raising=False)
    with pytest.raises(BotError, match=r"ARENA_ENDPOINT and ARENA_TOKEN are not set.*arena play"):
        run(lambda observation, legal: legal[0])


def test_a_bot_file_run_by_hand_exits_non_zero_with_that_message() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    done = subprocess.run([sys.executable, RANDOM_BOT], check=False, capture_output=True,
                          text=True, env=env, timeout=60)
    assert done.returncode != 0
    assert "BotError" in done.stderr and "ARENA_ENDPOINT and ARENA_TOKEN" in done.stderr


CRASHING_BOT = """\
from protocol.client import run

decisions = 0

def act(observation, legal):
    global decisions
    decisions += 1
    if decisions == 3:
        raise RuntimeError("deliberate bug on decision three")
    return legal[0]

run(act, name="crashing")
"""


def test_an_exception_in_act_is_a_crash_with_the_traceback_in_stderr(tmp_path: Path) -> None:
    bot = tmp_path / "crashing_bot.py"
    bot.write_text(CRASHING_BOT)
    logs = tmp_path / "logs"
    records = play_match("stop-me", [str(bot), "builtin:random"], 2, 1, clocks=CLOCKS,
                         log_dir=logs)
    for record in records:  # restarted for the second game, where it crashes again
        mine = record.seats[0]
        assert mine.status == "crash" and mine.forfeited and dict(mine.faults) == {"crash": 1}
        assert mine.asked == 3
        assert re.search(r"exit status [1-9]", mine.fault_log[0]), mine.fault_log
        assert record.seats[0].rank == 2 and record.seats[1].status == "ok"
    stderr = (logs / "seat0-crashing_bot.stderr.log").read_text()
    assert "Traceback (most recent call last)" in stderr
    assert "RuntimeError: deliberate bug on decision three" in stderr
    assert "in act" in stderr


# ------------------------------------------------------------- arena bot check
def test_bot_check_passes_the_random_bot() -> None:
    out = arena("bot", "check", "bots/random_bot.py", "--game", "stop-me")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "PASSED" in out.stdout


ILLEGAL_BOT = """\
from protocol.client import run

run(lambda observation, legal: "STOP", name="always-stop")  # illegal once STOP is spent
"""


def test_bot_check_fails_an_illegal_bot_and_names_the_problem(tmp_path: Path) -> None:
    bot = tmp_path / "always_stop.py"
    bot.write_text(ILLEGAL_BOT)
    out = arena("bot", "check", str(bot), "--game", "stop-me")
    assert out.returncode != 0
    assert "FAILED" in out.stdout
    assert "illegal" in out.stdout and "is not one of the legal actions" in out.stdout
    assert "forfeited" in out.stdout


# ------------------------------------------------------------------ the codec
def _decodes_or_protocol_error(data: bytes) -> None:
    try:
        message = decode_bot_message(data)
    except ProtocolError:
        return
    assert isinstance(message, (Hello, Action))


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=512))
def test_arbitrary_bytes_never_raise_anything_but_protocol_error(data: bytes) -> None:
    _decodes_or_protocol_error(data)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=10), inner,
                                                                max_size=5),
    max_leaves=30,
)
message_like = st.fixed_dictionaries(
    {"type": st.sampled_from(["hello", "action", "act", "bye", ""])},
    optional={"seq": json_values, "protocol": json_values, "token": json_values,
              "name": json_values, "action": json_values, "extra": json_values},
)


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_values | message_like)
def test_arbitrary_json_never_raises_anything_but_protocol_error(value: Any) -> None:
    _decodes_or_protocol_error(json.dumps(value).encode())


scalars = st.text(max_size=256) | st.integers(-(2**53), 2**53)
actions = scalars | st.dictionaries(st.text(max_size=256), scalars, max_size=16)


@settings(max_examples=200, deadline=None)
@given(seq=st.integers(1, 2**53), action=actions)
def test_a_valid_action_round_trips(seq: int, action: Any) -> None:
    message = Action(seq=seq, action=action)
    assert decode_bot_message(encode(message)) == message
    assert decode_bot_message(json.dumps({"type": "action", "seq": seq, "action": action})
                              .encode()) == message


@given(token=st.text(max_size=256), name=st.text(max_size=64))
def test_a_valid_hello_round_trips(token: str, name: str) -> None:
    message = Hello(protocol=PROTOCOL_VERSION, token=token, name=name)
    assert decode_bot_message(encode(message)) == message
    assert decode_bot_message(b'{"type":"hello","protocol":1,"token":"t"}') == \
        Hello(protocol=1, token="t", name="")


def test_unknown_fields_are_ignored() -> None:
    data = b'{"type":"action","seq":4,"action":"GO","comment":{"why":[1,2.5,null]}}'
    assert decode_bot_message(data) == Action(seq=4, action="GO")


DEEP = 100_000


@pytest.mark.parametrize("data", [
    b"[" * DEEP + b"]" * DEEP,
    b"{\"a\":" * DEEP + b"1" + b"}" * DEEP,
    b'{"type":"action","seq":1,"action":' + b'{"a":' * DEEP + b"1" + b"}" * DEEP + b"}",
    b'{"type":"action","seq":1,"action":"GO","x":' + b"[" * DEEP + b"]" * DEEP + b"}",
], ids=["arrays", "objects", "in-action", "in-unknown-field"])
def test_deep_nesting_is_refused(data: bytes) -> None:
    with pytest.raises(ProtocolError):
        decode_bot_message(data)


@pytest.mark.parametrize("data", [
    b'{"type":"action","seq":1,"action":' + b"9" * 5000 + b"}",
    b'{"type":"action","seq":1,"action":9007199254740993}',
    b'{"type":"action","seq":1,"action":-9007199254740993}',
    b'{"type":"action","seq":9007199254740993,"action":1}',
    b'{"type":"action","seq":1,"action":1e400}',
    b'{"type":"action","seq":1,"action":{"n":99999999999999999999999}}',
    b'{"type":"hello","protocol":' + b"1" * 400 + b',"token":"t"}',
])
def test_huge_numbers_are_refused(data: bytes) -> None:
    with pytest.raises(ProtocolError):
        decode_bot_message(data)


@pytest.mark.parametrize("action", [
    1.5, 1.0, True, None, [], ["GO"], {"a": {"b": 1}}, {"a": [1]}, {"a": 1.5}, {"a": False},
    "x" * 257, {"k": "x" * 257}, {"x" * 257: 1}, {f"k{i}": i for i in range(17)},
])
def test_actions_outside_the_documented_shapes_are_refused(action: Any) -> None:
    with pytest.raises(ProtocolError, match="wrong shape"):
        decode_bot_message(json.dumps({"type": "action", "seq": 1, "action": action}).encode())


@pytest.mark.parametrize("action", [
    "GO", "", "x" * 256, 0, 2**53, -(2**53), {}, {"lay": "PICK7", "n": 3},
    {f"k{i}": i for i in range(16)},
])
def test_actions_of_the_documented_shapes_are_accepted(action: Any) -> None:
    message = decode_bot_message(json.dumps({"type": "action", "seq": 1, "action": action})
                                 .encode())
    assert message == Action(seq=1, action=action)


@pytest.mark.parametrize("data", [
    b'{"type":"hello","protocol":1,"token":"t","name":"' + b"n" * 65 + b'"}',
    b'{"type":"hello","protocol":1,"token":"' + b"t" * 257 + b'"}',
    b'{"type":"hello","protocol":1}',
    b'{"type":"hello","protocol":"1","token":"t"}',
    b'{"type":"action","action":"GO"}',
    b'{"type":"action","seq":-1,"action":"GO"}',
    b'{"type":"welcome","seq":1,"name":"x","games":1}',
    b'{"seq":1,"action":"GO"}',
    b'\xef\xbb\xbf{"type":"action","seq":1,"action":"GO"}',
    b'{"type":"action","seq":1,"action":"\xff"}',
])
def test_invalid_hellos_and_actions_are_refused(data: bytes) -> None:
    with pytest.raises(ProtocolError):
        decode_bot_message(data)



def test_a_bots_bytes_are_quoted_as_a_json_string() -> None:
    """Issue 13 B4: valid UTF-8 as its text, other bytes as \\xNN, cut at a character."""
    assert quote_bytes(b'{"a": 1}') == '"{\\"a\\": 1}"'
    assert quote_bytes(b"\xff\x00ok") == '"\\\\xff\\u0000ok"'
    assert json.loads(quote_bytes("\u00e9t\u00e9".encode())) == "\u00e9t\u00e9"
    cut = quote_bytes(b"x" * 79 + "\u00e9".encode() + b"tail")  # the cut splits the \u00e9
    assert cut == '"' + "x" * 79 + '"... (85 bytes)'
    with pytest.raises(ProtocolError) as err:
        decode_bot_message(b"\x80" * 200)
    assert str(err.value).endswith(' in "' + "\\\\x80" * 80 + '"... (200 bytes)')


def test_a_message_over_one_mebibyte_is_refused() -> None:
    padding = "x" * MAX_MESSAGE_BYTES
    data = json.dumps({"type": "action", "seq": 1, "action": "GO", "pad": padding}).encode()
    with pytest.raises(ProtocolError, match="over the limit"):
        decode_bot_message(data)


# ------------------------------------------------------- schemas and the spec
def test_the_schema_files_are_up_to_date() -> None:
    done = subprocess.run([sys.executable, "-m", "protocol.gen_schema", "--check"],
                          check=False, capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr


WIRE_LINE = re.compile(r"^(>>|<<|>x) (\{.*\})$")
BOT_TYPES = {"hello", "action"}
REFEREE_TYPES = {"welcome", "start", "act", "end", "bye", "error"}


def _doc_messages() -> tuple[list[tuple[str, dict[str, Any]]], list[dict[str, Any]]]:
    """The wire lines of docs/protocol.md (``>>`` from the bot, ``<<`` to the bot, ``>x``
    from the bot and refused), and every fenced ```json block that is a protocol message."""
    text = DOC.read_text(encoding="utf-8")
    wire = [(m.group(1), json.loads(m.group(2)))
            for line in text.splitlines() if (m := WIRE_LINE.match(line))]
    blocks = []
    for block in re.findall(r"^```json\n(.*?)^```", text, flags=re.DOTALL | re.MULTILINE):
        try:
            value = json.loads(block)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict) and value.get("type") in BOT_TYPES | REFEREE_TYPES:
            blocks.append(value)
    return wire, blocks


def _validator(name: str) -> Any:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((SCHEMAS / name).read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_every_message_in_the_spec_validates_against_the_schema() -> None:
    wire, blocks = _doc_messages()
    # The transcript has every message of a match, in both directions.
    assert {m["type"] for _, m in wire} >= BOT_TYPES | REFEREE_TYPES, "transcript incomplete"
    assert {d for d, _ in wire} == {">>", "<<", ">x"}
    to_referee, to_bot = _validator("bot-to-referee.json"), _validator("referee-to-bot.json")
    for direction, message in wire:
        if direction == ">x":  # shown as refused: the schema and the decoder agree
            assert not to_referee.is_valid(message), message
            with pytest.raises(ProtocolError):
                decode_bot_message(json.dumps(message).encode())
        elif direction == ">>":
            assert message["type"] in BOT_TYPES
            to_referee.validate(message)
            decode_bot_message(json.dumps(message).encode())
        else:
            assert message["type"] in REFEREE_TYPES
            to_bot.validate(message)
            decode_referee_message(json.dumps(message).encode())
    # Each pretty-printed message is one of the raw lines, unchanged.
    assert blocks, "no pretty-printed messages"
    raw = [m for d, m in wire if d != ">x"]
    for block in blocks:
        assert block in raw, block


def test_the_schema_refuses_what_the_decoder_refuses() -> None:
    to_referee = _validator("bot-to-referee.json")
    for bad in ({"type": "action", "seq": 1, "action": 1.5},
                {"type": "action", "seq": 1, "action": [1]},
                {"type": "action", "seq": 1, "action": {"a": {"b": 1}}},
                {"type": "hello", "protocol": 1, "token": "t", "name": "n" * 65}):
        assert not to_referee.is_valid(bad), bad



def _seq_properties(node: Any) -> list[dict[str, Any]]:
    """Every ``seq`` and ``ref_seq`` property of a schema, at any depth (each an integer
    schema, or an ``anyOf`` holding one beside ``null``)."""
    found = []
    if isinstance(node, dict):
        for key, value in node.get("properties", {}).items():
            if key in ("seq", "ref_seq"):
                found += [v for v in value.get("anyOf", [value]) if v.get("type") == "integer"]
        for value in node.values():
            found += _seq_properties(value)
    elif isinstance(node, list):
        for value in node:
            found += _seq_properties(value)
    return found


def test_the_schemas_seq_minimum_is_the_specs_first_seq() -> None:
    """docs/protocol.md: "the referee never sends `seq` 0"; the schemas said minimum 0
    (issue 13 B4). Both directions now say 1, and the decoder agrees."""
    assert "the referee never sends `seq` 0" in DOC.read_text(encoding="utf-8")
    for name in ("bot-to-referee.json", "referee-to-bot.json"):
        found = _seq_properties(json.loads((SCHEMAS / name).read_text()))
        assert found, name
        assert {p.get("minimum") for p in found} == {1}, (name, found)
    assert not _validator("bot-to-referee.json").is_valid(
        {"type": "action", "seq": 0, "action": "GO"})
    with pytest.raises(ProtocolError, match=">= 1"):
        decode_bot_message(b'{"type":"action","seq":0,"action":"GO"}')
    assert decode_bot_message(b'{"type":"action","seq":1,"action":"GO"}').seq == 1

# ------------------------------------------------------------ the manifest
def _folder(tmp_path: Path, manifest: str | None) -> str:
    folder = tmp_path / "mybot"
    folder.mkdir()
    if manifest is not None:
        (folder / "bot.toml").write_text(manifest)
    return str(folder)


def test_load_program_of_each_kind(tmp_path: Path) -> None:
    assert load_program(RANDOM_BOT) == BotProgram(
        "random_bot", Path(RANDOM_BOT), (sys.executable, RANDOM_BOT), BOTS)
    script = tmp_path / "bot.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    assert load_program(str(script)).command == (str(script),)
    folder = _folder(tmp_path, 'run = "./bot --fast"\nbuild = ["make"]\n')
    program = load_program(folder)
    assert (program.name, program.command, program.build, program.protocol) == (
        "mybot", ("./bot", "--fast"), ("make",), "zmq")
    assert program.cwd == Path(folder).resolve()


@pytest.mark.parametrize("manifest, words", [
    (None, "has no bot.toml manifest"),
    ('run = ["x"\n', "not valid TOML"),
    ('run = ["x"]\nlanguage = "go"\n', "unknown keys ['language']"),
    ('name = "x"\n', "missing 'run'"),
    ('run = ["x"]\nprotocol = "http"\n', "protocol must be one of"),
    ('run = 5\n', "'run' must be a command"),
    ('run = []\n', "'run' must be a command"),
    ('run = ["x"]\nbuild = [1]\n', "'build' must be a command"),
    ('run = ["x"]\nname = ""\n', "'name' must be a non-empty string"),
])
def test_bad_manifests_are_refused_clearly(tmp_path: Path, manifest: str | None,
                                           words: str) -> None:
    with pytest.raises(BotSpecError, match=re.escape(words)):
        load_program(_folder(tmp_path, manifest))


def test_a_missing_path_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BotSpecError, match="no such file or folder"):
        load_program(str(tmp_path / "nothing-here"))


def test_a_file_that_is_neither_python_nor_executable_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bot.js"
    path.write_text("console.log(1)\n")
    with pytest.raises(BotSpecError, match="neither a .py file nor executable.*chmod"):
        load_program(str(path))


def test_a_failing_build_is_refused_with_its_output(tmp_path: Path) -> None:
    folder = _folder(tmp_path, 'run = ["./bot"]\n'
                               'build = ["sh", "-c", "echo compiler says no >&2; exit 3"]\n')
    (tmp_path / "work").mkdir()
    with pytest.raises(BotSpecError, match=r"failed with exit status 3:\ncompiler says no"):
        build_program(load_program(folder), tmp_path / "work")


def test_a_build_command_that_does_not_exist_is_refused(tmp_path: Path) -> None:
    folder = _folder(tmp_path, 'run = ["./bot"]\nbuild = ["no-such-compiler-xyz"]\n')
    (tmp_path / "work").mkdir()
    # Bare, the command is not found; in the sandbox, the sandbox's exec of it fails.
    with pytest.raises(BotSpecError, match=r"build (command )?'no-such-compiler-xyz"):
        build_program(load_program(folder), tmp_path / "work")


def test_a_successful_build_runs_on_a_copy_of_the_bot_folder(tmp_path: Path) -> None:
    folder = _folder(tmp_path, 'run = ["./bot"]\nbuild = ["sh", "-c", "echo built > out.txt"]\n')
    (tmp_path / "work").mkdir()
    built = build_program(load_program(folder), tmp_path / "work")
    assert (built.cwd / "out.txt").read_text() == "built\n"
    assert not (Path(folder) / "out.txt").exists()  # the original is never written
