"""Bot authors' accounts (issue 15 §2): API tokens, web sessions and bot ownership.

No password is stored at all. An author signs in with an API token of 256 random bits
(``secrets.token_urlsafe(32)`` behind the prefix ``arena_``, which secret scanners
can recognise), shown once; the database keeps only its SHA-256. SHA-256 is right for
a random token, unlike a password: nothing can be guessed, so no slow hash is needed,
and the hash is looked up by its index, never compared byte by byte in Python.

A web session is a row too: its random id only as a SHA-256, its CSRF token, its
expiry. Sign-out, a token reset and a disable delete the rows, so a cookie that still
holds an id is worth nothing after them. A bot name belongs to the author who first
submitted it; only that author, or an admin (the organiser), may add versions.

Every error is an :class:`AccountError` (a ValueError) quoting the input.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import re
import secrets
from datetime import UTC, datetime, timedelta
from typing import Any

from leaderboard.store import BUILTIN_PREFIX, NameTaken, Store, StoreReader, now
from leaderboard.store.rows import Author
from referee.text import hidden

TOKEN_PREFIX = "arena_"
"""Every API token begins with it (issue 15 §2: recognisable in a leaked file or log)."""
TOKEN_BYTES = 32
"""256 random bits per token and per session id (issue 15 §2)."""
MAX_SESSIONS = 20
"""Open web sessions kept per author: a new sign-in past it ends their oldest."""
_TOKEN_RE = re.compile(rf"{TOKEN_PREFIX}[A-Za-z0-9_-]{{43}}")
_TOKEN_INSIDE = re.compile(rf"{TOKEN_PREFIX}[A-Za-z0-9_-]{{43}}(?![A-Za-z0-9_-])")

NAME_RULE = ("1 to 40 characters of letters A-Z or a-z, digits, '_', '.' or '-', "
             "beginning with a letter or a digit")
"""What an author name may be, as the refusals say it."""
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")
# Stricter than a bot name (arena.botstore): an author name appears in URLs, pages,
# logs and `ps`, so plain ASCII without '/', ',', '@', spaces or lookalikes; a leading
# '.' or '-' would hide a file or pose as an option. Case does not tell two apart.


class AccountError(ValueError):
    """Something about an account that cannot be done; the message says why."""


class AuthorNameError(AccountError):
    """An author name that breaks :data:`NAME_RULE`."""


class AuthorExists(AccountError):
    """An author of that name (in any case) exists already."""


class UnknownAuthor(AccountError):
    """No author of that name."""


class BotNameError(AccountError):
    """A bot name no version could be added under (the bot store's rules)."""


class BotOwned(AccountError):
    """The bot name belongs to another author (or to the organiser)."""


class BotLimitReached(AccountError):
    """A new bot name would pass the author's limit of bots (``limits.bots_per_author``)."""


class RegistrationLimited(AccountError):
    """Too many accounts made from one address within the last hour."""


def hash_secret(secret: str) -> str:
    """The SHA-256 (hex) of a token or session id: all the database keeps of it."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def new_token() -> str:
    """A new API token: ``arena_`` and 256 random bits, URL-safe base64."""
    return TOKEN_PREFIX + secrets.token_urlsafe(TOKEN_BYTES)


def looks_like_token(text: str) -> bool:
    """Whether ``text`` has the shape of an API token (the prefix and 43 characters)."""
    return _TOKEN_RE.fullmatch(text) is not None


def holds_token(text: str) -> bool:
    """Whether ``text`` holds something of a token's shape anywhere (a URL, a log line)."""
    return _TOKEN_INSIDE.search(text) is not None


def quoted(text: str, limit: int = 60) -> str:
    """``text`` quoted for a message: repr (so control characters show as escapes), and
    a long one cut, with its length said (a 10 KB name is not echoed whole into a page
    or a log line; found by review)."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text)} characters)"


def check_author_name(name: str) -> str:
    """``name`` if it can name an author, else AuthorNameError quoting it and the rule."""
    if _NAME_RE.fullmatch(name) is None:
        raise AuthorNameError(f"author name {quoted(name)} is not valid: use {NAME_RULE}")
    return name


BOT_NAME_MAX = 100
"""The longest bot name an author may claim (a name is a folder's name, at most 255
bytes on most file systems, and shown in every table)."""


def check_bot_name(name: str) -> str:
    """``name`` if a bot could be stored under it (arena.botstore's rules, checked
    before the name is claimed), else BotNameError quoting it. claim_bot took any
    string: a name of escape sequences was owned, and `arena author list` wrote it to
    the organiser's terminal (found by review)."""
    if not name or len(name) > BOT_NAME_MAX:
        raise BotNameError(f"bot name {quoted(name)} must be 1 to {BOT_NAME_MAX} "
                           f"characters")
    if any(c in name for c in "/,@") or name.startswith(".") or name != name.strip():
        raise BotNameError(f"bot name {quoted(name)} must be a plain name (no '/', ',' or "
                           f"'@', no leading dot or surrounding space)")
    unseen = sorted({f"U+{ord(c):04X}" for c in name if hidden(c)})
    if unseen:
        raise BotNameError(f"bot name {quoted(name)} holds a control or invisible "
                           f"character ({', '.join(unseen[:10])}): use letters, digits "
                           f"and punctuation")
    return name


# --------------------------------------------------------------------- authors
def add_author(store: Store, name: str, *, admin: bool = False,
               registered_from: str | None = None) -> tuple[Author, str]:
    """Make an account; returns it with its API token, which is shown once and never
    stored (only its hash is). ``admin``: the organiser's account, which may act on any
    bot. AuthorNameError, or AuthorExists for a name taken in any case."""
    check_author_name(name)
    token = new_token()
    try:
        author = store.add_author(name, hash_secret(token), admin=admin,
                                  registered_from=registered_from)
    except NameTaken as err:
        raise AuthorExists(str(err)) from None
    return author, token


def address_key(address: str) -> str:
    """What the registration limit counts ``address`` as (issue 15 §2, "per address"):
    an IPv4 address itself (also written IPv4-mapped, ``::ffff:192.0.2.7``); an IPv6
    address as its /64, since one subscriber is given a whole /64 (2^64 addresses: per
    address, the limit stopped nobody; found by review); anything else (no address
    known) as itself, cut to 100 characters."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address[:100]
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if isinstance(ip, ipaddress.IPv4Address):
        return str(ip)
    return f"{ipaddress.IPv6Address(int(ip) >> 64 << 64)}/64"


def register(store: Store, name: str, address: str, per_hour: int) -> tuple[Author, str]:
    """Open registration (issue 15 §2): an account made on the web form from client
    ``address``, refused with RegistrationLimited once ``per_hour`` accounts were made
    from it (from its /64, for IPv6: :func:`address_key`, which is what is stored)
    within the last hour. Counted in the database, in the same write transaction as
    the new account, so the limit holds across restarts and between concurrent
    requests."""
    check_author_name(name)
    key = address_key(address)
    since = (datetime.now(UTC) - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    with store.transaction(f"registering author {quoted(name)}"):
        made = store.registrations_since(key, since)
        if made >= per_hour:
            where = repr(address[:100]) + ("" if key == address else f" (counted as {key})")
            raise RegistrationLimited(
                f"address {where} made {made} accounts within the last hour, the "
                f"limit ({per_hour} an hour); try again later")
        return add_author(store, name, registered_from=key)


def get_author(reader: StoreReader, name: str) -> Author:
    """The author named ``name``, else UnknownAuthor quoting it and the known names."""
    author = reader.author(name)
    if author is None:
        known = [a.name for a in reader.authors()]
        raise UnknownAuthor(f"no author {quoted(name)}"
                            + (f"; authors: {', '.join(known[:20])}"
                               + (", ..." if len(known) > 20 else "") if known
                               else "; add one with: arena author add NAME"))
    return author


def authenticate(reader: StoreReader, token: str) -> Author | None:
    """The enabled author whose API token this is, or None (unknown, malformed or
    disabled). The token is looked up by its hash, never compared as text."""
    if not looks_like_token(token):
        return None  # not even hashed: nothing of that shape was ever issued
    digest = hash_secret(token)
    author = reader.author_by_token_hash(digest)
    if author is None or author.disabled_at is not None:
        return None
    return author


def disable(store: Store, name: str) -> Author:
    """Disable an author: their token no longer signs in and every session ends.
    AccountError if disabled already."""
    author = get_author(store, name)
    if author.disabled_at is not None:
        raise AccountError(f"author {name!r} is disabled already, since {author.disabled_at}")
    store.set_author_disabled(author.id, True)
    return get_author(store, name)


def enable(store: Store, name: str) -> Author:
    """Enable a disabled author again (with the token they had). AccountError if enabled."""
    author = get_author(store, name)
    if author.disabled_at is None:
        raise AccountError(f"author {name!r} is not disabled")
    store.set_author_disabled(author.id, False)
    return get_author(store, name)


def reset_token(store: Store, name: str) -> tuple[Author, str]:
    """A new API token for author ``name`` (shown once): the old one stops working at
    once, and every session of theirs ends."""
    author = get_author(store, name)
    token = new_token()
    store.set_token_hash(author.id, hash_secret(token))
    return author, token


# -------------------------------------------------------------------- sessions
def start_session(store: Store, author: Author, hours: float) -> tuple[str, str]:
    """A new web session of ``author`` lasting ``hours``: (its id, for the signed
    cookie; its CSRF token, for the forms). Only the id's hash is stored. The author's
    sessions past the newest :data:`MAX_SESSIONS` end."""
    session_id = secrets.token_urlsafe(TOKEN_BYTES)
    csrf = secrets.token_urlsafe(TOKEN_BYTES)
    expires = (datetime.now(UTC) + timedelta(hours=hours)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    store.add_session(hash_secret(session_id), author.id, csrf, expires, keep=MAX_SESSIONS)
    return session_id, csrf


def session_of(reader: StoreReader, session_id: str) -> tuple[Author, str] | None:
    """The author of an open session and its CSRF token, or None for a session that
    never was, has expired or was ended, or whose author is disabled."""
    if not session_id or len(session_id) > 128:
        return None
    row = reader.session(hash_secret(session_id))
    if row is None or row.expires_at <= now():
        return None
    author = reader.author_by_id(row.author_id)
    if author is None or author.disabled_at is not None:
        return None
    return author, row.csrf


def end_session(store: Store, session_id: str) -> bool:
    """End a session (sign-out): its id is worth nothing after. Whether it was open."""
    return bool(session_id) and store.end_session(hash_secret(session_id))


def csrf_matches(expected: str, given: str) -> bool:
    """Whether a form's CSRF token is the session's, compared in constant time."""
    return bool(expected) and hmac.compare_digest(expected.encode(), given.encode())


# --------------------------------------------------------------- bot ownership
def claim_bot(store: Store, author: Author, name: str, *,
              max_bots: int | None = None) -> Author | None:
    """Let ``author`` add versions to bot ``name``: the first author to submit a name
    owns it (issue 15 §2). Returns the owner after the call (None: a bot the organiser
    added from the CLI, which only an admin may add to). BotOwned when the name (or one
    of the same NFKC case fold: ``fold_bot_name``) is another author's, the
    organiser's, or a built-in's;
    BotLimitReached when it is new and ``author`` (not an admin) owns ``max_bots``
    names already (counted in the same transaction as the claim). BotNameError for a
    name no bot could be stored under (:func:`check_bot_name`)."""
    # One write transaction: two authors submitting one new name at once cannot both
    # pass the check and each believe the name is theirs.
    with store.transaction(f"claiming bot name {quoted(name)}"):
        owner = check_claim(store, author, name)
        if owner is None and store.registered_bot_like(name) is not None:
            return None  # the organiser's bot, and an admin adds to it
        if owner is None:
            owned = store.owned_bots(author.id)
            if max_bots is not None and not author.admin and len(owned) >= max_bots:
                raise BotLimitReached(
                    f"bot name {quoted(name)} would be bot {len(owned) + 1} of author "
                    f"{author.name!r}, past the limit of {max_bots}; add versions to one "
                    f"of {', '.join(owned)} instead")
            owner = store.claim_bot_name(name, author.id)
    return owner


def check_claim(reader: StoreReader, author: Any, name: str) -> Author | None:
    """What :func:`claim_bot` would refuse, read only, so a server can refuse an upload
    to another author's bot before reading its body (found by review): BotNameError,
    BotOwned, or the owner (None: nobody yet, or the organiser's bot for an admin).
    ``author`` needs ``id`` and ``admin``."""
    check_bot_name(name)
    if name.casefold().startswith(BUILTIN_PREFIX):
        raise BotOwned(f"bot name {quoted(name)}: names beginning with {BUILTIN_PREFIX!r} are "
                       f"the built-in bots'")
    owner = reader.bot_owner(name)
    # Registered by the organiser (`arena bot add`) before anyone submitted it, in
    # this or another case (which the bot store would refuse as a second name, so
    # the claim was of a name no version could ever be added to; found by review).
    known = reader.registered_bot_like(name) if owner is None else None
    if known is not None and not author.admin:
        shown = "" if known == name else f" (as {known!r})"
        raise BotOwned(f"bot name {quoted(name)} belongs to the organiser{shown}; choose "
                       f"another name")
    if owner is not None and owner.id != author.id and not author.admin:
        raise BotOwned(f"bot name {quoted(name)} belongs to another author; choose another name")
    return owner


def bot_owner(reader: StoreReader, name: str) -> Author | None:
    """The author who owns bot name ``name``, or None (nobody, or the organiser)."""
    return reader.bot_owner(name)


def owned_bots(reader: StoreReader, author: Author) -> list[str]:
    """The bot names ``author`` owns, sorted."""
    return reader.owned_bots(author.id)


def may_act_on(reader: StoreReader, author: Author, name: str) -> bool:
    """Whether ``author`` may see and change bot ``name``: its owner, or an admin."""
    if author.admin:
        return True
    owner = reader.bot_owner(name)
    return owner is not None and owner.id == author.id
