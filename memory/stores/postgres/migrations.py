"""Versioned migrations of the PostgreSQL search index's tables.

Each embedder has its own tables (as each has its own LanceDB table, ``memory_<embedder>``):
the rows, their postings (row x term), the term statistics and the table totals. ``memory_search_migrations`` records
which version each embedder's tables are at; :func:`migrate` brings them to the newest one in
one transaction, holding an advisory lock so that processes starting together migrate once.
A migration is a function of the table names and the vector size returning SQL statements, and
is never changed once released: a change of schema is a new entry at the end.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import asyncpg

MIGRATIONS_TABLE = "memory_search_migrations"


def ident(name: str) -> str:
    """``name`` as a quoted SQL identifier (quotes doubled)."""
    return '"' + name.replace('"', '""') + '"'


@dataclass(frozen=True, slots=True)
class TableNames:
    """The quoted, schema-qualified names of one embedder's search tables.

    Attributes:
        schema: the schema holding them (unquoted).
        base: the rows' table name (unquoted, ``memory_<embedder>``).
    """

    schema: str
    base: str

    def _q(self, suffix: str = "") -> str:
        return f"{ident(self.schema)}.{ident(self.base + suffix)}"

    @property
    def rows(self) -> str:
        """One row per indexed fact, episode or round."""
        return self._q()

    @property
    def postings(self) -> str:
        """Per row and distinct term: the term's count in the row and the row's length."""
        return self._q("_postings")

    @property
    def terms(self) -> str:
        """Per term, the number of rows holding it (BM25's document frequency)."""
        return self._q("_terms")

    @property
    def stats(self) -> str:
        """One row: the number of rows with at least one term, and the sum of all rows' lengths
        in terms (BM25's N and N * avgdl)."""
        return self._q("_stats")

    @property
    def large_scopes(self) -> str:
        """The scopes that have an approximate index of their own, with its name."""
        return self._q("_large_scopes")

    @property
    def migrations(self) -> str:
        return f"{ident(self.schema)}.{ident(MIGRATIONS_TABLE)}"

    def index(self, suffix: str) -> str:
        """An index name derived from the base name (unqualified: indexes live in the table's
        schema)."""
        return ident(f"{self.base}_{suffix}")


def _v1(t: TableNames, dim: int) -> list[str]:
    return [
        f"""CREATE TABLE {t.rows} (
            key text PRIMARY KEY,
            kind text NOT NULL,
            item_id bigint NOT NULL,
            owner text NOT NULL,
            scope text NOT NULL,
            status text NOT NULL,
            text text NOT NULL,
            search_text text NOT NULL,
            vector vector({int(dim)}) NOT NULL,
            created_at timestamptz NOT NULL
        )""",
        f"CREATE INDEX {t.index('scope_idx')} ON {t.rows} (scope)",
        # one row per (row, distinct term): what BM25 needs of a row, narrow, so a query reads
        # only the postings of its own terms in its own scope (the primary key's prefix)
        f"""CREATE TABLE {t.postings} (
            scope text NOT NULL,
            term text NOT NULL,
            key text NOT NULL,
            kind text NOT NULL,
            owner text NOT NULL,
            status text NOT NULL,
            count integer NOT NULL,
            length integer NOT NULL,
            PRIMARY KEY (scope, term, key)
        )""",
        f"CREATE INDEX {t.index('postings_key_idx')} ON {t.postings} (key)",
        f"CREATE TABLE {t.terms} (term text PRIMARY KEY, rows bigint NOT NULL)",
        f"""CREATE TABLE {t.stats} (
            only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
            rows_with_terms bigint NOT NULL,
            length bigint NOT NULL
        )""",
        f"INSERT INTO {t.stats} (rows_with_terms, length) VALUES (0, 0)",
    ]


def _v2(t: TableNames, dim: int) -> list[str]:
    return [
        f"""CREATE TABLE {t.large_scopes} (
            scope text PRIMARY KEY,
            index_name text NOT NULL UNIQUE,
            rows_at_build bigint NOT NULL,
            built_at timestamptz NOT NULL DEFAULT now()
        )""",
    ]


@dataclass(frozen=True, slots=True)
class Migration:
    """One schema version: ``version`` (1, 2, ...), what it does, and its statements."""

    version: int
    description: str
    statements: Callable[[TableNames, int], list[str]]


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "rows with vector and terms, term statistics, totals", _v1),
    Migration(2, "registry of the scopes with an approximate index of their own", _v2),
)
LATEST = MIGRATIONS[-1].version


async def migrate(conn: asyncpg.Connection, names: TableNames, dim: int, *,
                  upto: int | None = None) -> list[int]:
    """Bring one embedder's tables to version ``upto`` (default: :data:`LATEST`; earlier ones
    for tests of the migrations); returns the versions applied now.

    Runs in one transaction under an advisory lock keyed by the table, so a concurrent start
    waits and then finds nothing to do. The caller maps driver errors.
    """
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(hashtext($1))",
                           f"memory-bot search migrations {names.schema}.{names.base}")
        await conn.execute(f"""CREATE TABLE IF NOT EXISTS {names.migrations} (
            table_name text NOT NULL,
            version integer NOT NULL,
            description text NOT NULL,
            applied_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (table_name, version))""")
        done = {r["version"] for r in await conn.fetch(
            f"SELECT version FROM {names.migrations} WHERE table_name = $1", names.base)}
        applied = []
        for migration in MIGRATIONS:
            if migration.version in done or (upto is not None and migration.version > upto):
                continue
            for statement in migration.statements(names, dim):
                await conn.execute(statement)
            await conn.execute(
                f"INSERT INTO {names.migrations} (table_name, version, description) "
                "VALUES ($1, $2, $3)", names.base, migration.version, migration.description)
            applied.append(migration.version)
        return applied
