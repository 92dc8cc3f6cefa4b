"""The writes about accounts (issue 15 §2): a mixin of the writing Store.

Only hashes of tokens and session ids reach the database; the secrets themselves are
made and shown by ``arena.accounts``. A token reset and a disable end every session
of the author in the same transaction, so no cookie outlives them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from .base import now
from .errors import NameTaken
from .reads_accounts import AccountReads, fold_bot_name
from .rows import Author


class AccountWrites(AccountReads):
    """Writes of ``authors``, ``sessions`` and ``bot_owners``; mixed into Store."""

    if TYPE_CHECKING:  # Store's own, which every write here runs through
        def transaction(self, doing: str = "writing") -> AbstractContextManager[None]: ...

        def _insert(self, sql: str, params: Sequence[Any], doing: str) -> int: ...

        def _write(self, sql: str, params: Sequence[Any], doing: str) -> int: ...

    def add_author(self, name: str, token_hash: str, *, admin: bool = False,
                   registered_from: str | None = None) -> Author:
        """Store a new author; NameTaken if the name (in any case) or the hash is used."""
        doing = f"adding author {name!r}"
        with self.transaction(doing):
            known = self.author_like(name)
            if known is not None:
                raise NameTaken(f"an author named {known.name!r} exists already"
                                + ("" if known.name == name else
                                   f" (names differing only in case are one: {name!r})"))
            at = now()
            try:
                author_id = self._insert(
                    "INSERT INTO authors (name, token_hash, admin, created_at, token_set_at, "
                    "registered_from) VALUES (?, ?, ?, ?, ?, ?)",
                    (name, token_hash, int(admin), at, at, registered_from), doing)
            except sqlite3.IntegrityError:
                raise NameTaken(f"author {name!r}: that token is in use already") from None
        return Author(author_id, name, admin, at, None)

    def set_author_disabled(self, author_id: int, disabled: bool) -> None:
        """Disable (ending every session) or enable an author."""
        doing = f"{'disabling' if disabled else 'enabling'} author {author_id}"
        with self.transaction(doing):
            self._write("UPDATE authors SET disabled_at = ? WHERE id = ?",
                        (now() if disabled else None, author_id), doing)
            if disabled:
                self.end_sessions(author_id)

    def set_token_hash(self, author_id: int, token_hash: str) -> None:
        """Replace an author's token (by its hash), ending every session of theirs."""
        doing = f"resetting the token of author {author_id}"
        with self.transaction(doing):
            self._write("UPDATE authors SET token_hash = ?, token_set_at = ? WHERE id = ?",
                        (token_hash, now(), author_id), doing)
            self.end_sessions(author_id)

    def add_session(self, id_hash: str, author_id: int, csrf: str, expires_at: str, *,
                    keep: int | None = None) -> None:
        """Store a new session (by the SHA-256 of its id); expired ones are swept first.
        ``keep``: the author's newest sessions kept, this one included; older ones end
        (a sign-in loop must not grow the file without bound; found by review)."""
        doing = "starting a session"
        with self.transaction(doing):
            at = now()
            self._write("DELETE FROM sessions WHERE expires_at <= ?", (at,), doing)
            self._insert("INSERT INTO sessions (id_hash, author_id, csrf, created_at, "
                         "expires_at) VALUES (?, ?, ?, ?, ?)",
                         (id_hash, author_id, csrf, at, expires_at), doing)
            if keep is not None:
                # rowid grows with each insert, so it orders the author's sessions.
                self._write("DELETE FROM sessions WHERE author_id = ? AND rowid NOT IN "
                            "(SELECT rowid FROM sessions WHERE author_id = ? "
                            "ORDER BY rowid DESC LIMIT ?)",
                            (author_id, author_id, max(1, keep)), doing)

    def end_session(self, id_hash: str) -> bool:
        """End one session (sign-out); whether there was one."""
        with self.transaction("ending a session"):
            return self._write("DELETE FROM sessions WHERE id_hash = ?", (id_hash,),
                               "ending a session") > 0

    def end_sessions(self, author_id: int) -> int:
        """End every session of an author; how many there were."""
        doing = f"ending the sessions of author {author_id}"
        with self.transaction(doing):
            return self._write("DELETE FROM sessions WHERE author_id = ?", (author_id,), doing)

    def claim_bot_name(self, name: str, author_id: int) -> Author | None:
        """Record ``author_id`` as the owner of bot name ``name`` unless someone owns it
        (or a name of the same fold: another case or compatibility form) already; the
        owner after the call."""
        doing = f"claiming bot name {name!r}"
        with self.transaction(doing):
            owner = self.bot_owner(name)
            if owner is None:
                self._write("INSERT OR IGNORE INTO bot_owners (name, folded, author_id, "
                            "claimed_at) VALUES (?, ?, ?, ?)",
                            (name, fold_bot_name(name), author_id, now()), doing)
            return self.bot_owner(name)
