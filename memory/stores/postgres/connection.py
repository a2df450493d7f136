"""Connections to PostgreSQL (asyncpg): pools, the pgvector codec, and the one place where
driver errors become :class:`memory.errors.StoreError`.

URLs are ``postgresql://user:password@host:port/database`` (libpq's form, which asyncpg reads);
:func:`redacted` is the only form of a URL that goes into a log line or an error message.
"""

from __future__ import annotations

import contextlib
import struct
from collections.abc import AsyncIterator, Sequence
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import numpy as np

from memory.errors import StoreError

#: SQLSTATE classes and codes mapped to :attr:`StoreError.reason` (PostgreSQL documentation,
#: appendix A "Error Codes"); anything else is ``failing``.
_REASONS = {"53100": "full", "25006": "read-only", "XX001": "damaged", "XX002": "damaged"}


#: Session settings of every long-lived connection (the store's and the index's pools, each set
#: of thread locks), so that the server notices a client whose machine vanished (no FIN or RST:
#: a lost host, a network partition) within about a minute instead of the system's 2 hours of
#: TCP keepalive (``tcp_keepalive_time`` 7200 s on Linux), ends its session and with it the
#: advisory locks it held (a thread's turns, jobs or updates) and rolls back any transaction it
#: left open (row locks on a thread). Keepalive probes after 30 s idle, every 10 s, 3 lost
#: probes; unacknowledged data gives up after 60 s (``tcp_user_timeout``, milliseconds).
#: PostgreSQL documentation, 20.3.1 "Connection Settings"; they apply to TCP connections only
#: (a Unix socket has no peer to lose). Not set: ``idle_session_timeout`` (a lock connection
#: is idle while it holds its locks) and ``idle_in_transaction_session_timeout`` (a vanished
#: client's open transaction already ends with its session).
SESSION_SETTINGS = {"tcp_keepalives_idle": "30", "tcp_keepalives_interval": "10",
                    "tcp_keepalives_count": "3", "tcp_user_timeout": "60000"}


def redacted(url: str) -> str:
    """``url`` with its password replaced by ``***`` (user, host, port, database and query
    kept), for logs and messages; a string that does not parse as a URL becomes ``<url>``."""
    try:
        parts = urlsplit(url)
        if not parts.password:  # none, or empty (``user:@host``): nothing to hide
            return url
        host = parts.hostname or ""
        if ":" in host:  # an IPv6 address
            host = f"[{host}]"
        netloc = f"{parts.username or ''}:***@{host}"
        if parts.port is not None:
            netloc += f":{parts.port}"
        return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    except ValueError:
        return "<url>"


def store_error(action: str, exc: BaseException) -> StoreError:
    """The :class:`StoreError` for a failed ``action`` ("index search"), with the reason of its
    SQLSTATE; the driver's message is kept, which never holds the connection's password."""
    code = getattr(exc, "sqlstate", None) or ""
    reason = _REASONS.get(code, "failing")
    return StoreError(f"PostgreSQL {action} failed: {type(exc).__name__}: {exc}", reason=reason)


@contextlib.asynccontextmanager
async def mapped(action: str) -> AsyncIterator[None]:
    """Run the block, turning driver and connection errors into :func:`store_error`."""
    try:
        yield
    except StoreError:
        raise
    except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError, TimeoutError) as exc:
        raise store_error(action, exc) from exc


def encode_vector(vector: Sequence[float]) -> bytes:
    """pgvector's binary form of a ``vector``: dimensions and a zero as big-endian int16, then
    the float4 values big-endian (``vector_send`` in pgvector's ``src/vector.c``)."""
    values = np.asarray(vector, dtype=">f4")
    return struct.pack(">HH", values.shape[0], 0) + values.tobytes()


def decode_vector(data: bytes) -> np.ndarray:
    """The inverse of :func:`encode_vector`: a float32 array."""
    dim, _ = struct.unpack_from(">HH", data)
    return np.frombuffer(data, dtype=">f4", count=dim, offset=4).astype(np.float32)


async def _init_connection(conn: asyncpg.Connection) -> None:
    schema = await conn.fetchval(
        "SELECT n.nspname FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace "
        "WHERE t.typname = 'vector'")
    if schema is not None:
        await conn.set_type_codec("vector", schema=schema, encoder=encode_vector,
                                  decoder=decode_vector, format="binary")


async def create_vector_extension(url: str) -> None:
    """``CREATE EXTENSION IF NOT EXISTS vector`` on the database of ``url``.

    Raises:
        StoreError: the server cannot be reached, or pgvector is not installed there or may not
            be created by this user (managed services list it as an allowed extension).
    """
    async with mapped(f"connection to {redacted(url)}"):
        conn = await asyncpg.connect(url)
    try:
        async with mapped("CREATE EXTENSION vector (pgvector)"):
            if await conn.fetchval("SELECT 1 FROM pg_extension WHERE extname = 'vector'"):
                return
            await conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    finally:
        await conn.close()


async def open_pool(url: str, *, max_size: int = 4) -> asyncpg.Pool:
    """A pool of up to ``max_size`` connections to ``url`` with the pgvector codec, after
    :func:`create_vector_extension`.

    Raises:
        StoreError: the server cannot be reached or refuses the login, or pgvector is missing.
    """
    await create_vector_extension(url)
    async with mapped(f"connection to {redacted(url)}"):
        return await asyncpg.create_pool(url, min_size=1, max_size=max_size,
                                         init=_init_connection,
                                         server_settings=SESSION_SETTINGS)
