"""Storage shared by several replicas: a PostgreSQL database (``[storage] url``), its
tables and their migrations. The single-machine default (SQLite files beside the config)
lives with its users: ``capture.store`` and ``pool.store``."""

from streamscope.storage.database import Database, StorageError, StorageUnavailable, display_url

__all__ = ["Database", "StorageError", "StorageUnavailable", "display_url"]
