"""The PostgreSQL backend (asyncpg, pgvector), selected by ``DATABASE_URL``: the relational
store (:class:`PostgresStore`, one module per port like the SQLite package: ``identities``,
``conversations``, ``deliveries``, ``facts``, ``episodes``, ``work``, ``privacy`` with
``transfer``, ``records``; the pool and error mapping in ``database``; its migrations in
``store_migrations``) and the search index (:class:`PgSearchIndex`, ``search``, with its own
``migrations``)."""

from memory.stores.postgres.connection import redacted
from memory.stores.postgres.search import PgSearchIndex
from memory.stores.postgres.store import PostgresStore

__all__ = ["PgSearchIndex", "PostgresStore", "redacted"]
