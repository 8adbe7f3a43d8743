"""Secrets known by where they stand rather than by their value: a header or query
parameter whose name says it holds a credential (:func:`credential_name`), the password
of a URL's userinfo (:func:`url_password`, :func:`mask_userinfo`), and the password of a
database URL, in its userinfo or its ``password`` query parameter
(:func:`mask_database_url`, :func:`database_passwords`).

The masker of secrets by their value, which learns these passwords from the config, is
:class:`streamscope.redact.Redactor`; it masks a URL's credential-named query parameters
in free text (:func:`streamscope.redact.mask_params`) by :func:`credential_name`.
"""

from __future__ import annotations

import functools
import re
from urllib.parse import unquote, unquote_plus, urlsplit


def url_password(url: str) -> str | None:
    """The password in ``url``'s userinfo (``http://user:pw@host``), if any."""
    try:
        password = urlsplit(url).password
    except ValueError:
        return None
    return unquote(password) if password else None


# A header's or query parameter's name that says it holds a credential: one of its words
# (split at - _ .) is one of these, or ends with one of the first group ("x-goog-api-key",
# "x-amz-security-token", "accesstoken"). "tokens" is a count ("x-ratelimit-remaining-
# tokens"), and "www-authenticate" a challenge: neither is a credential.
_CREDENTIAL_WORD = re.compile(
    r"(?:.*(?:token|key|secret|password|passwd|cookie|session))|auth|authorization|pwd"
    r"|sig|signature|credentials?|sessionid|jwt|bearer"
)
_NAME_WORDS = re.compile(r"[-_.\s]+")


@functools.lru_cache(maxsize=1024)  # (asked per header of every flow: names repeat)
def credential_name(name: str) -> bool:
    """Whether a header or query parameter named ``name`` holds a credential."""
    words = _NAME_WORDS.split(unquote_plus(name).lower())
    return any(_CREDENTIAL_WORD.fullmatch(w) for w in words if w)


def database_passwords(url: str) -> list[str]:
    """The passwords a database URL holds: its userinfo's and any ``password`` query
    parameter's (libpq and asyncpg take either), as written and decoded."""
    found: list[str] = []
    scheme, sep, rest = url.partition("://")
    if not sep:
        return found
    authority = rest.split("/", 1)[0].split("?", 1)[0]
    userinfo, at, _ = authority.rpartition("@")
    if at and ":" in userinfo:
        found.append(userinfo.split(":", 1)[1])
    query = rest.partition("?")[2].partition("#")[0]
    for part in query.split("&"):
        name, eq, value = part.partition("=")
        if eq and unquote_plus(name).lower() == "password":
            found.append(value)
    found += [unquote_plus(p) for p in found] + [unquote(p) for p in found]
    return [p for p in dict.fromkeys(found) if p]


def mask_database_url(url: str) -> str:
    """A database URL as it may be shown (doctor, ``serve``'s errors, the log): the
    password of its userinfo and of any ``password`` query parameter replaced by
    ``***``, the rest as it was."""
    url = mask_userinfo(url)
    path, sep, query = url.partition("?")
    if not sep:
        return url
    query, hash_, fragment = query.partition("#")
    parts = []
    for part in query.split("&"):
        name, eq, value = part.partition("=")
        if eq and value and unquote_plus(name).lower() == "password":
            part = f"{name}=***"
        parts.append(part)
    return f"{path}?{'&'.join(parts)}{hash_}{fragment}"


def mask_userinfo(url: str) -> str:
    """``url`` with the password of its userinfo replaced by ``***``."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    authority, slash, tail = rest.partition("/")
    userinfo, at, host = authority.rpartition("@")
    if not at or ":" not in userinfo:
        return url
    user = userinfo.split(":", 1)[0]
    return f"{scheme}://{user}:***@{host}{slash}{tail}"


__all__ = [
    "credential_name",
    "database_passwords",
    "mask_database_url",
    "mask_userinfo",
    "url_password",
]
