"""Accounts (issue 15 §2) on a real SQLite file: tokens stored only as hashes, sessions
that end for good, bot ownership and the registration limit across restarts."""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

import pytest

from arena import accounts
from arena.accounts import (
    AccountError,
    AuthorExists,
    AuthorNameError,
    BotLimitReached,
    BotOwned,
    RegistrationLimited,
    UnknownAuthor,
)
from leaderboard.store import Store, StoreReader


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "arena.db")


def test_a_token_is_256_bits_shown_once_and_stored_only_as_its_sha256(
        store: Store, tmp_path: Path) -> None:
    author, token = accounts.add_author(store, "ada")
    assert token.startswith("arena_") and len(token) == len("arena_") + 43
    assert accounts.looks_like_token(token)
    assert (author.name, author.admin, author.disabled_at) == ("ada", False, None)
    store.close()
    raw = (tmp_path / "arena.db").read_bytes() + b"".join(
        p.read_bytes() for p in tmp_path.glob("arena.db-*"))
    assert token.encode() not in raw
    assert token[6:].encode() not in raw
    assert hashlib.sha256(token.encode()).hexdigest().encode() in raw
    reader = StoreReader(tmp_path / "arena.db")
    assert accounts.authenticate(reader, token) == author


def test_two_tokens_differ(store: Store) -> None:
    tokens = {accounts.add_author(store, f"a{i}")[1] for i in range(20)}
    assert len(tokens) == 20


@pytest.mark.parametrize("token", ["", "arena_", "arena_" + "x" * 42, "arena_" + "x" * 44,
                                   "bearer", "arena_" + "x" * 42 + "!", "a" * 10_000])
def test_unknown_and_malformed_tokens_authenticate_nobody(store: Store, token: str) -> None:
    accounts.add_author(store, "ada")
    assert accounts.authenticate(store, token) is None


def test_a_well_formed_token_nobody_has_is_none(store: Store) -> None:
    accounts.add_author(store, "ada")
    assert accounts.authenticate(store, accounts.new_token()) is None


@pytest.mark.parametrize("name", ["", "-ada", ".ada", "_ada", "a" * 41, "ada lovelace",
                                  "ada/x", "ada@x", "ädä", "ada\n", "<b>", "a,b"])
def test_bad_author_names_are_refused_with_the_rule(store: Store, name: str) -> None:
    with pytest.raises(AuthorNameError) as err:
        accounts.add_author(store, name)
    assert repr(name) in str(err.value) and "1 to 40 characters" in str(err.value)
    assert store.authors() == []


@pytest.mark.parametrize("name", ["a", "A" * 40, "ada.l-2_x", "9lives"])
def test_good_author_names(store: Store, name: str) -> None:
    assert accounts.add_author(store, name)[0].name == name


def test_a_taken_name_in_any_case_is_refused(store: Store) -> None:
    accounts.add_author(store, "Ada")
    for name in ("Ada", "ada", "ADA"):
        with pytest.raises(AuthorExists, match="'Ada' exists already"):
            accounts.add_author(store, name)
    assert [a.name for a in store.authors()] == ["Ada"]


def test_disable_enable_and_reset(store: Store) -> None:
    ada, token = accounts.add_author(store, "ada")
    sid, _ = accounts.start_session(store, ada, 1)
    disabled = accounts.disable(store, "ada")
    assert disabled.disabled_at is not None
    assert accounts.authenticate(store, token) is None
    assert accounts.session_of(store, sid) is None
    with pytest.raises(AccountError, match="'ada' is disabled already"):
        accounts.disable(store, "ada")
    assert accounts.enable(store, "ada").disabled_at is None
    assert accounts.authenticate(store, token) == ada
    assert accounts.session_of(store, sid) is None  # ended for good, not paused
    with pytest.raises(AccountError, match="'ada' is not disabled"):
        accounts.enable(store, "ada")
    sid, _ = accounts.start_session(store, ada, 1)
    _, new = accounts.reset_token(store, "ada")
    assert new != token
    assert accounts.authenticate(store, token) is None
    assert accounts.authenticate(store, new) == ada
    assert accounts.session_of(store, sid) is None


def test_unknown_authors_are_named(store: Store) -> None:
    accounts.add_author(store, "ada")
    for act in (accounts.disable, accounts.enable, accounts.reset_token):
        with pytest.raises(UnknownAuthor, match="no author 'bob'; authors: ada"):
            act(store, "bob")


def test_sessions(store: Store) -> None:
    ada, _ = accounts.add_author(store, "ada")
    sid, csrf = accounts.start_session(store, ada, 1)
    assert accounts.session_of(store, sid) == (ada, csrf)
    assert store.session(sid) is None  # the id itself is no key: only its hash is
    row = store.session(accounts.hash_secret(sid))
    assert row is not None and row.author_id == ada.id and sid not in str(row)
    other, other_csrf = accounts.start_session(store, ada, 1)
    assert other != sid and other_csrf != csrf
    assert accounts.end_session(store, sid)
    assert accounts.session_of(store, sid) is None
    assert not accounts.end_session(store, sid)
    assert accounts.session_of(store, other) == (ada, other_csrf)
    assert accounts.session_of(store, "") is None
    assert accounts.session_of(store, "x" * 1000) is None


def test_an_expired_session_is_none(store: Store) -> None:
    ada, _ = accounts.add_author(store, "ada")
    sid, _ = accounts.start_session(store, ada, 1e-9)
    assert accounts.session_of(store, sid) is None


def test_a_token_is_found_inside_text() -> None:
    token = accounts.new_token()
    assert accounts.holds_token(f"GET /x?next=/y%3F{token}&z=1")
    assert not accounts.holds_token("arena_bot and arena_" + "x" * 42)
    assert not accounts.holds_token(token + "x")  # longer: not one of ours


def test_csrf_matches() -> None:
    assert accounts.csrf_matches("abc", "abc")
    assert not accounts.csrf_matches("abc", "abd")
    assert not accounts.csrf_matches("", "")


def test_a_bot_name_belongs_to_its_first_submitter(store: Store) -> None:
    ada, _ = accounts.add_author(store, "ada")
    bob, _ = accounts.add_author(store, "bob")
    boss, _ = accounts.add_author(store, "boss", admin=True)
    assert boss.admin
    assert accounts.claim_bot(store, ada, "rocket") == ada
    assert accounts.claim_bot(store, ada, "rocket") == ada  # again: still hers
    for name in ("rocket", "Rocket", "ROCKET"):
        with pytest.raises(BotOwned, match=f"bot name '{name}' belongs to another author"):
            accounts.claim_bot(store, bob, name)
    assert accounts.claim_bot(store, boss, "rocket") == ada  # the organiser may act on it
    assert accounts.bot_owner(store, "rocket") == ada
    assert accounts.bot_owner(store, "nobody") is None
    assert accounts.claim_bot(store, bob, "comet") == bob
    assert accounts.owned_bots(store, ada) == ["rocket"]
    assert accounts.owned_bots(store, bob) == ["comet"]
    assert store.bot_owners() == {"comet": "bob", "rocket": "ada"}
    assert accounts.may_act_on(store, ada, "rocket") and accounts.may_act_on(store, boss, "comet")
    assert not accounts.may_act_on(store, bob, "rocket")


def test_the_bots_per_author_limit_counts_new_names_only(store: Store) -> None:
    ada, _ = accounts.add_author(store, "ada")
    boss, _ = accounts.add_author(store, "boss", admin=True)
    for name in ("a1", "a2"):
        accounts.claim_bot(store, ada, name, max_bots=2)
    assert accounts.claim_bot(store, ada, "a1", max_bots=2) == ada  # a new version: fine
    with pytest.raises(BotLimitReached, match="'a3' would be bot 3 of author 'ada', past "
                                              "the limit of 2; add versions to one of a1, a2"):
        accounts.claim_bot(store, ada, "a3", max_bots=2)
    assert accounts.owned_bots(store, ada) == ["a1", "a2"]
    for name in ("b1", "b2", "b3"):
        accounts.claim_bot(store, boss, name, max_bots=2)  # the organiser has no limit


def test_the_organisers_bots_and_the_builtins_are_not_claimable(store: Store) -> None:
    ada, _ = accounts.add_author(store, "ada")
    boss, _ = accounts.add_author(store, "boss", admin=True)
    store.add_bot("house", "h" * 64, "/x", "program")
    with pytest.raises(BotOwned, match="'house' belongs to the organiser"):
        accounts.claim_bot(store, ada, "house")
    assert accounts.claim_bot(store, boss, "house") is None
    for name in ("builtin:random", "Builtin:x"):
        with pytest.raises(BotOwned, match="built-in"):
            accounts.claim_bot(store, boss, name)


def test_two_authors_claiming_one_name_at_once_give_it_to_one(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    setup = Store(db)
    authors = [accounts.add_author(setup, f"a{i}")[0] for i in range(6)]
    setup.close()
    won: list[str] = []
    lost: list[str] = []
    barrier = threading.Barrier(len(authors))

    def claim(author: accounts.Author) -> None:
        store = Store(db)
        barrier.wait()
        try:
            accounts.claim_bot(store, author, "contested")
            won.append(author.name)
        except BotOwned:
            lost.append(author.name)
        finally:
            store.close()

    threads = [threading.Thread(target=claim, args=(a,)) for a in authors]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(won) == 1 and len(lost) == len(authors) - 1
    assert StoreReader(db).bot_owners() == {"contested": won[0]}


def test_registration_is_limited_per_address_across_restarts(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    store = Store(db)
    for i in range(3):
        accounts.register(store, f"r{i}", "203.0.113.5", 3)
    store.close()
    store = Store(db)  # a restarted server counts what the database holds
    with pytest.raises(RegistrationLimited, match="'203.0.113.5' made 3 accounts"):
        accounts.register(store, "r3", "203.0.113.5", 3)
    assert store.author("r3") is None
    author, token = accounts.register(store, "r3", "198.51.100.7", 3)
    assert accounts.authenticate(store, token) == author
    with pytest.raises(AuthorExists):
        accounts.register(store, "R0", "192.0.2.1", 3)


def test_an_old_database_reads_as_having_no_authors(tmp_path: Path) -> None:
    """A reader of a file from before schema 5 (it never migrates) finds nobody."""
    import sqlite3

    from leaderboard.store.schema import MIGRATIONS, statements
    db = tmp_path / "old.db"
    conn = sqlite3.connect(db)
    for target in range(1, 5):
        for statement in statements(MIGRATIONS[target]):
            conn.execute(statement)
    conn.execute("INSERT INTO meta VALUES ('application', 'arena')")
    conn.execute("INSERT INTO meta VALUES ('schema_version', '4')")
    conn.commit()
    conn.close()
    reader = StoreReader(db)
    assert reader.schema_version == 4
    assert reader.authors() == [] and reader.bot_owner("x") is None
    assert accounts.authenticate(reader, accounts.new_token()) is None
    assert accounts.session_of(reader, "abc") is None
