"""The config checks: the file loads, and what validation lets through but a user would
want to know."""

from __future__ import annotations

import ipaddress
from pathlib import Path
from urllib.parse import urlsplit

from streamscope.config import (
    Config,
    ConfigError,
    UpstreamConfig,
    exposure_problem,
    is_loopback,
    keys_exposed,
    load_config,
)
from streamscope.doctor.check import Check, count
from streamscope.redact import mask

KEYED = ("openai-chat", "anthropic", "responses")  # protocols whose providers want a key


def check_config(path: Path) -> tuple[list[Check], Config | None]:
    """The config check, and the config (None when it does not load)."""
    try:
        config = load_config(path)
    except ConfigError as exc:
        fix = f"correct the file (or move it away to start from the defaults): {path}"
        return [Check("config", "fail", str(exc), fix)], None
    if not path.exists():
        detail = f"no config file at {path}; defaults are used: the demo upstream"
        return [Check("config", "ok", detail)], config
    ups = config.upstreams
    if not ups:
        detail = f"{path} parsed: no upstreams, so the demo is used"
        return [Check("config", "ok", detail), *_exposure(config, path)], config
    accounts = sum(len(u.accounts) for u in ups)
    detail = f"{path} parsed: {count(len(ups), 'upstream')}, {count(accounts, 'account')}"
    return [Check("config", "ok", detail), *_exposure(config, path)], config


def _exposure(config: Config, path: Path) -> list[Check]:
    """A warning when the file holds keys that other users of the machine can read."""
    warning = keys_exposed(config, path)
    return [] if warning is None else [Check("config", "warn", warning, f"chmod 600 {path}")]


def config_warnings(config: Config) -> list[Check]:
    """What validation lets through but a user would want to know (``Config``'s own
    validators already reject a missing base_url, two defaults, duplicate names)."""
    keys = config.proxy.api_keys
    if keys:
        masked = ", ".join(mask(k.get_secret_value()) for k in keys)
        out = [Check("key", "ok", f"{count(len(keys), 'local key')}: {masked}")]
    else:
        fix = (
            "`streamscope serve` (or the window) generates one on its first run and saves "
            "it in the config; clients send it as their API key"
        )
        out = [Check("key", "warn", "no local API key in [proxy] api_keys yet", fix)]
    for u in filter(_needs_key, config.upstreams):
        if not u.accounts:
            why = f"upstream {u.name} ({u.base_url}) has no accounts: it is sent no key"
            fix = f"give upstream {u.name} an account with its api_key ([[upstreams.accounts]])"
            out.append(Check("config", "warn", why, fix))
        for a in u.accounts:
            if not a.api_key.get_secret_value():
                why = f"account {u.name}/{a.name} has an empty api_key"
                out.append(Check("config", "warn", why, "set its api_key, or remove it"))
    out += _alias_warnings(config)
    host = config.proxy.host
    if not is_loopback(host):
        why = f"the proxy listens on {host}: other machines can reach it"
        fix = 'set [proxy] host = "127.0.0.1" (or --host) unless you mean to share it'
        problem = exposure_problem(config.proxy)
        if problem:  # serve refuses to start so
            out.append(Check("config", "fail", f"{why}; {problem}", fix))
        else:
            out.append(Check("config", "warn", why, fix))
    return out


def _alias_warnings(config: Config) -> list[Check]:
    """Aliases the router (proxy/routing.py) cannot resolve: one pointing at another alias
    (an alias is resolved once), or at a model no upstream can serve — knowable only when
    there is no default upstream and every upstream's model list is configured."""
    full = config.with_defaults()
    known = full.upstreams and all(u.models is not None for u in full.upstreams)
    out = []
    for alias, target in config.aliases.items():
        head, sep, rest = target.partition("/")
        if target in config.aliases and target != alias:
            why = f"alias {alias} points at alias {target}, and aliases are resolved only once"
            fix = f"point {alias} at what {target} points at: {config.aliases[target]}"
        elif (
            known
            and not any(u.default for u in full.upstreams)
            and not (sep and rest and full.upstream(head) is not None)
            and not any(target in (u.models or []) for u in full.upstreams)
        ):
            why = f"alias {alias} points at {target}, which no upstream serves"
            fix = "point it at UPSTREAM/MODEL or at a model of an upstream's models list"
        else:
            continue
        out.append(Check("config", "warn", why, fix))
    return out


def _needs_key(u: UpstreamConfig) -> bool:
    """A provider's protocol at a non-local address (a local OpenAI-compatible server or LM
    Studio usually takes no key)."""
    return u.protocol in KEYED and not _is_local(urlsplit(u.base_url).hostname or "")


def _is_local(host: str) -> bool:
    """This machine or the local network (a server there rarely wants a key)."""
    if is_loopback(host) or host.endswith(".local"):
        return True
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return address.is_private and not address.is_unspecified


__all__ = ["check_config", "config_warnings"]
