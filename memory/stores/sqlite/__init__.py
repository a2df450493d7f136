"""The SQLite backend of the memory store (:class:`memory.ports.Store`).

Front door: :class:`SQLiteStore` (open, close, maintain; its ports as attributes) and the
WAL bounds it sets. Inside, one module
per port (``identities``, ``conversations``, ``deliveries``, ``facts``, ``episodes``, ``work``,
``privacy`` with ``transfer``, ``records``), the connection (``connection``: the worker thread,
the write lock, the error mapping), the row mapping (``rows``), the numbered migrations
(``migrations``) and the hot cache (``hot``). Only ``memory.stores``, the composition root
(``bot/app.py``) and tests import this package (an import contract in pyproject.toml).
"""

from memory.stores.sqlite.connection import WAL_CHECKPOINT_PAGES, WAL_SIZE_LIMIT_BYTES
from memory.stores.sqlite.store import SQLiteStore

__all__ = ["SQLiteStore", "WAL_CHECKPOINT_PAGES", "WAL_SIZE_LIMIT_BYTES"]
