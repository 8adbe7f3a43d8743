"""Saving the config back to its TOML file without losing what the user wrote there.

The file is hand-edited, so it is updated, not regenerated. The old text is parsed with
``tomlkit`` (which keeps comments and layout) and compared with the new config value by
value: what did not change is not touched, a changed value is replaced in place (its
trailing comment stays), a key whose value became absent is removed, and a key that was
not written before is added only when its value is not the default (the file stays
small). Arrays of tables (``[[upstreams]]``, ``[[upstreams.accounts]]``,
``[[pool.rules]]``) are matched entry by entry: by ``name``, else (a rename) by position;
else (a rename, an unnamed rule) by content equal but for the name.

Secrets are written as their real values: it is the user's own file. The text is read
back through :func:`~streamscope.config.parse_config` before anything is written, so a
save never leaves a file that loads differently; the write is atomic (a temporary file
beside it, then ``os.replace``) and the file's mode is 0600 when it holds any key.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

import tomlkit
from pydantic import SecretStr, ValidationError
from tomlkit.container import Container
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import AoT, Comment, InlineTable, Item, Table, Whitespace

from streamscope.config import (
    OLD_KIND,
    Config,
    ConfigError,
    generate_local_key,
    load_config,
    parse_config,
)

__all__ = ["ensure_local_key", "render_config", "save_config"]

Data = dict[str, Any]


def save_config(config: Config, path: Path) -> None:
    """Write ``config`` to ``path`` so that ``load_config(path) == config``, keeping the
    comments and layout of what did not change. Raises :class:`ConfigError` when the
    existing file is not TOML (it is left as it is) and ``OSError`` when it cannot be
    written (the old file is then unchanged)."""
    target = Path(os.path.realpath(path))  # a symlinked config stays a symlink
    try:
        old_text = target.read_bytes().decode("utf-8")  # bytes: keep its line endings
    except FileNotFoundError:
        old_text = ""
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8, so not updated ({exc.reason})") from None
    text = render_config(config, old_text, source=str(path))
    _write_atomic(target, text, private=_holds_keys(config))


def render_config(config: Config, old_text: str = "", source: str = "config") -> str:
    """The TOML text of ``config``: ``old_text`` updated where the two differ. Pure."""
    try:
        config = Config.model_validate(_data(config, minimal=False))  # re-run validators
    except ValidationError as exc:
        raise ConfigError(f"{source}: not saved ({exc})") from None
    try:
        doc = tomlkit.parse(old_text)
    except TOMLKitError as exc:
        raise ConfigError(f"{source}: not valid TOML, so not updated ({exc})") from None
    _say_protocol(doc)
    old = _old_data(doc)
    _merge_table(doc, old, _data(config, minimal=False), _data(config, minimal=True))
    text = tomlkit.dumps(doc)
    if parse_config(text, source) != config:
        # NOTE: a safety net, not a path the tests reach: some layout tomlkit cannot
        # edit faithfully. Refusing keeps the user's file as it was.
        raise ConfigError(f"{source}: could not be updated without changing its meaning")
    return text


# -- the values to write ----------------------------------------------------------------


def _data(config: Config, *, minimal: bool) -> Data:
    """The config as TOML-shaped data (None: absent), secrets revealed; ``minimal``
    leaves out every value that equals its default."""
    dumped = config.model_dump(
        mode="python", by_alias=True, exclude_none=True, exclude_defaults=minimal
    )
    revealed = _reveal(dumped)
    assert isinstance(revealed, dict)
    return revealed


def _reveal(value: Any) -> Any:
    if isinstance(value, SecretStr):
        return value.get_secret_value()
    if isinstance(value, dict):
        return {k: _reveal(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_reveal(v) for v in value]
    return value


def _old_data(doc: tomlkit.TOMLDocument) -> Data:
    """What the old file means, normalized like the new data (implicit account names,
    defaults filled in) so that only real changes differ; the raw values when it is
    not a valid config (it is still updated, as well as can be)."""
    raw = doc.unwrap()
    try:
        return _data(Config.model_validate(raw), minimal=False)
    except ValidationError:
        return raw


def _holds_keys(config: Config) -> bool:
    keys = list(config.proxy.api_keys) + list(config.proxy.admin_keys)
    keys += [a.api_key for u in config.upstreams for a in u.accounts]
    return any(k.get_secret_value() for k in keys)


# -- updating the document --------------------------------------------------------------


def _say_protocol(doc: tomlkit.TOMLDocument) -> None:
    """An older file's ``kind = "openai"`` becomes ``protocol = "openai-chat"`` in its
    place, its comment kept (the migration the model does on reading: ``OLD_KIND``)."""
    upstreams = doc.get("upstreams")
    if not isinstance(upstreams, AoT):
        return
    for table in upstreams:
        kind = table.get("kind")
        if not isinstance(kind, str) or "protocol" in table:
            continue
        new = tomlkit.item(OLD_KIND.get(kind, kind))
        comment = table.value.item("kind").trivia.comment
        if comment:
            new.comment(comment.lstrip("#").strip())
        # NOTE: Container._replace keeps the key's place; tomlkit has no public rename.
        table.value._replace("kind", "protocol", new)


Node = MutableMapping[str, Any]  # TOMLDocument, Table or InlineTable


def _is_tables(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def _merge_table(node: Node, old: Data, new: Data, small: Data) -> None:
    """Bring ``node`` (which says ``old``) to ``new``; ``small``: new without defaults."""
    for key in old:
        if key not in new and key in node:
            del node[key]
    for key, value in new.items():
        before = old.get(key)
        if before is not None and before == value:
            continue  # unchanged: the user's text stays exactly as it is
        if key in node:
            current = node[key]
            if isinstance(value, dict) and isinstance(current, Table | InlineTable):
                _merge_table(
                    current, before if isinstance(before, dict) else {}, value, small.get(key, {})
                )
                continue
            if _is_tables(value) and isinstance(current, AoT):
                _merge_tables(
                    current, before if isinstance(before, list) else [], value, small.get(key, [])
                )
                continue
            if not isinstance(value, dict) and not _is_tables(value):
                if not isinstance(current, Table | AoT):
                    node[key] = value  # in place: the line's comment is kept
                    continue
            del node[key]  # a different shape (inline array of tables, say): rewritten
        if key in small:
            _add(node, key, tomlkit.item(small[key]))


def _merge_tables(aot: AoT, old: list[Any], new: list[Data], small: list[Data]) -> None:
    """Bring an array of tables to ``new``: matched entries are updated in place, the
    others dropped or added.

    NOTE: tomlkit files the comment lines above a ``[[header]]`` (and the blank line)
    at the end of the *previous* entry's body. Dropping an entry would take with it the
    comment about the next one, and a new last entry would land below the comment about
    whatever follows the array. So the text between entries is lifted out first, and
    each kept entry gets back the text that stood above it (as its header's indent);
    the text after the last entry goes back after the new last one.
    """
    tables = list(aot.body)
    if len(old) != len(tables):
        old = aot.unwrap()
    gaps = [_pop_tail(t) for t in tables]  # gaps[i]: the text between entry i and i + 1
    matches = _match(old, new)
    result: list[Table] = []
    for j, (value, i) in enumerate(zip(new, matches, strict=True)):
        if i is None:
            table = _fresh_table(small[j])
            lead = "\n" if j else ""
        else:
            table = tables[i]
            _merge_table(table, old[i], value, small[j])
            lead = _text(gaps[i - 1]) if i else ""
        table.trivia.indent = lead + table.trivia.indent
        result.append(table)
    del aot[:]
    for table in result:
        aot.append(table)
    _last_container(result[-1]).body.extend(gaps[-1] if gaps else [])


def _fresh_table(data: Data) -> Table:
    table = tomlkit.table()
    for key, value in data.items():
        table[key] = tomlkit.item(value)
    return table


def _match(old: list[Any], new: list[Data]) -> list[int | None]:
    """For each new entry, the old entry it continues (None: a new one): the one of the
    same name, else one equal to it but for the name (a rename, or an unnamed rule)."""
    found: list[int | None] = [None] * len(new)
    taken: set[int] = set()
    named = {o["name"]: i for i, o in enumerate(old) if isinstance(o, dict) and "name" in o}
    for j, entry in enumerate(new):
        i = named.get(entry["name"]) if "name" in entry else None
        if i is not None and i not in taken:
            found[j] = i
            taken.add(i)
    for j, entry in enumerate(new):
        if found[j] is not None:
            continue
        for i, before in enumerate(old):
            if i not in taken and isinstance(before, dict) and _unnamed(before) == _unnamed(entry):
                found[j] = i
                taken.add(i)
                break
    return found


def _unnamed(entry: Data) -> Data:
    return {k: v for k, v in entry.items() if k != "name"}


def _container(node: Any) -> Container:
    if isinstance(node, Container):
        return node
    assert isinstance(node, Table)
    return node.value


def _last_container(node: Any) -> Container:
    """The container whose body ends where ``node``'s text ends (its last subtable's)."""
    container = _container(node)
    while container.body:
        last = container.body[-1][1]
        if isinstance(last, Table) and not last.is_super_table():
            container = last.value
        elif isinstance(last, AoT) and last.body:
            container = last.body[-1].value
        else:
            break
    return container


def _pop_trivia(container: Container) -> list[tuple[Any, Item]]:
    """Remove the blank lines and comments that end ``container``'s body.

    NOTE: only key-less items at the very end are removed, so the container's index of
    its keys (``_map``) stays right without going through private methods."""
    body = container.body
    tail: list[tuple[Any, Item]] = []
    while body and body[-1][0] is None and isinstance(body[-1][1], Whitespace | Comment):
        tail.insert(0, body.pop())
    return tail


def _pop_tail(table: Table) -> list[tuple[Any, Item]]:
    return _pop_trivia(_last_container(table))


def _text(items: list[tuple[Any, Item]]) -> str:
    return "".join(item.as_string() for _, item in items)


def _add(node: Node, key: str, item: Item) -> None:
    """Add a key that was not there: a value below the table's last value, a table
    after its last subtable; either way above the comments that end the table, which
    are about what follows it.

    NOTE: tomlkit puts a new value after the table's last item that is not whitespace,
    so below any comment there. Each comment is first turned into whitespace of the
    same text (it renders the same, and reads back as the same comment), which makes
    tomlkit put the value after the last real value. Replacing an item in place keeps
    the container's index of its keys right without its private methods.
    """
    if isinstance(node, InlineTable):
        node[key] = item
        return
    if isinstance(item, Table | AoT):
        tail = _pop_trivia(_last_container(node))
        node[key] = item
        _last_container(node).body.extend(tail)
        return
    body = _container(node).body
    for i, (k, v) in enumerate(body):
        if k is None and isinstance(v, Comment):
            body[i] = (None, Whitespace(v.as_string()))
    node[key] = item


def _write_atomic(path: Path, text: str, *, private: bool) -> None:
    """Replace ``path`` with ``text`` at once: a reader (or a crash) sees the old file or
    the new one, never a part of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        mode = 0o644
    if private:
        mode = 0o600
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def ensure_local_key(config: Config, path: Path) -> str | None:
    """Give a config without local keys a generated one, saved into the file.

    Returns the new key (for the caller to print once), or None if keys were configured.
    The file is edited as a TOML document (:func:`~streamscope.config.save.save_config`),
    so its comments and layout stay and whatever way it spells ``[proxy]`` (a header with
    a comment or spaces, dotted keys, an inline table, none at all) it keeps its meaning.
    Only the key is added: what ``config`` holds beyond the file (``--port``, say) is not
    written. Raises :class:`ConfigError` when the file cannot be edited, ``OSError`` when
    it cannot be written.
    """
    if config.proxy.api_keys:
        return None
    key = generate_local_key()
    saved = load_config(path)  # the file's own values, not the command line's
    saved.proxy.api_keys = [SecretStr(key)]
    save_config(saved, path)  # 0600: it now holds a key
    config.proxy.api_keys = [SecretStr(key)]
    return key
