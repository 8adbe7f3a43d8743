"""What the storage's users catch, importable without the shared database's driver (the
single-machine default never loads asyncpg): its errors, and a SQLite file's lock."""

from __future__ import annotations


class StorageError(RuntimeError):
    """The database cannot be used as configured (a start-up error, said as it is), or
    refused a query."""


class StorageUnavailable(StorageError):
    """The server did not answer: the caller keeps what it has and tries later."""


class StorageLocked(StorageUnavailable):
    """A SQLite file another program holds a write lock on (``sqlite3`` in a shell, a
    backup tool): nothing was written; the caller keeps what it has and tries later."""


__all__ = ["StorageError", "StorageLocked", "StorageUnavailable"]
