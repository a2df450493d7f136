"""The PostgreSQL backend (asyncpg, pgvector): today the search index; selected by
``DATABASE_URL``."""

from memory.stores.postgres.connection import redacted
from memory.stores.postgres.search import PgSearchIndex

__all__ = ["PgSearchIndex", "redacted"]
