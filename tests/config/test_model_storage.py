"""config.model, [storage]: the shared database's URL, from the file or the environment."""

from __future__ import annotations

import pytest

from streamscope.config import ConfigError, parse_config


def test_no_storage_means_the_sqlite_files() -> None:
    assert parse_config("").storage.database_url() is None


def test_a_postgres_url_is_read_and_never_shown() -> None:
    config = parse_config('[storage]\nurl = "postgresql://ss:pw0rd@db:5432/ss"\n')
    assert config.storage.database_url() == "postgresql://ss:pw0rd@db:5432/ss"
    assert "pw0rd" not in repr(config)


def test_the_url_may_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    config = parse_config('[storage]\nurl_env = "SS_DB"\n')
    monkeypatch.delenv("SS_DB", raising=False)
    with pytest.raises(ConfigError, match=r"\$SS_DB is not set"):
        config.storage.database_url()
    monkeypatch.setenv("SS_DB", "mysql://x@db/ss")
    with pytest.raises(ConfigError, match="postgresql://"):
        config.storage.database_url()
    monkeypatch.setenv("SS_DB", "postgres://x@db/ss")
    assert config.storage.database_url() == "postgres://x@db/ss"


@pytest.mark.parametrize(
    ("toml", "says"),
    [
        ('url = "sqlite:///x.db"', "postgresql://"),
        ('url = "postgresql://a@b/c"\nurl_env = "X"', "not both"),
        ('url_env = "1BAD"', "url_env"),
        ('host = "db"', "host"),
    ],
)
def test_a_bad_storage_table_names_its_problem(toml: str, says: str) -> None:
    with pytest.raises(ConfigError, match=says):
        parse_config(f"[storage]\n{toml}\n")
