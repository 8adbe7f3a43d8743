"""Storage shared by several replicas: a PostgreSQL database (``[storage] url``,
``storage.database``), its tables and their migrations (``storage.schema``). The errors
its users catch (``storage.errors``) are importable without the driver. The single-
machine default (SQLite files beside the config) lives with its users:
``capture.sqlite_rows`` and ``pool.store``."""

from streamscope.storage.errors import StorageError, StorageUnavailable

__all__ = ["StorageError", "StorageUnavailable"]
