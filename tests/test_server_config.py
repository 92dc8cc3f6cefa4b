"""arena.toml: defaults, overrides, and a clear refusal of every wrong value (issue 15 §1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.web.config import (
    ConfigError,
    ServerConfig,
    load_config,
    parse_config,
    with_overrides,
)


def test_a_missing_table_or_key_means_the_default(tmp_path: Path) -> None:
    path = tmp_path / "arena.toml"
    path.write_text('[server]\ndatabase = "league.db"\nsubmissions = true\n'
                    "[uploads]\nmax_compressed_mb = 2\n")
    config = load_config(path)
    assert config.server.submissions and config.db_path == Path("league.db")
    assert config.uploads.max_compressed_bytes == 2 * 1024 * 1024
    assert config.uploads.max_entries == ServerConfig().uploads.max_entries
    assert config.data_path == Path("league.server")
    assert config.secret_path == Path("league.server/secret")
    assert load_config(None) == ServerConfig()


@pytest.mark.parametrize(("text", "named"), [
    ("[uploads]\nmax_entriez = 3\n", "max_entriez"),        # a typo is not a default
    ("[server]\nport = 70000\n", "$.server.port"),
    ("[limits]\nsubmissions_per_day = 0\n", "$.limits.submissions_per_day"),
    ("[jobs]\nbuild_timeout_s = 'soon'\n", "$.jobs.build_timeout_s"),
    ("[surver]\n", "surver"),
    ("[server\n", "not valid TOML"),
])
def test_a_wrong_value_is_refused_by_name(tmp_path: Path, text: str, named: str) -> None:
    path = tmp_path / "arena.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match="arena.toml") as err:
        load_config(path)
    assert named in str(err.value)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no config file at .*nowhere.toml"):
        load_config(tmp_path / "nowhere.toml")


def test_options_override_the_file_and_are_checked_too() -> None:
    config = with_overrides(ServerConfig(), port=0, host=None)
    assert config.server.port == 0 and config.server.host == "127.0.0.1"
    with pytest.raises(ConfigError, match=r"\$.server.port"):
        with_overrides(config, port=-1)


def test_the_documented_arena_toml_is_a_valid_config_naming_every_field() -> None:
    """docs/server.md's arena.toml example is read by the server as it is, and names
    every field there is (a field added without its documentation fails here)."""
    import tomllib

    import msgspec

    text = Path(__file__).parent.parent.joinpath("docs", "server.md").read_text()
    block = text.split("```toml\n", 1)[1].split("```", 1)[0]
    raw = tomllib.loads(block)
    assert parse_config(raw, "docs/server.md").server.submissions is True
    every = msgspec.to_builtins(ServerConfig())
    assert {t: sorted(f) for t, f in raw.items()} == {t: sorted(f) for t, f in every.items()}
