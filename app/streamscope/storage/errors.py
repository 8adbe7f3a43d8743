"""What the shared database's users catch, importable without its driver (the single-
machine default never loads asyncpg)."""

from __future__ import annotations


class StorageError(RuntimeError):
    """The database cannot be used as configured (a start-up error, said as it is), or
    refused a query."""


class StorageUnavailable(StorageError):
    """The server did not answer: the caller keeps what it has and tries later."""


__all__ = ["StorageError", "StorageUnavailable"]
