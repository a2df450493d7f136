"""A bot on PostgreSQL whose database becomes unreachable answers with the storage-failure
reply, as for any other storage failure, instead of raising: the thread lock the engine takes
first lives in that database too.

The real PostgreSQL the tests start, reached through a relay on a Unix socket of the test's own
that is shut (its sockets closed, its socket file gone) while the bot runs: the server is fine,
the bot cannot reach it. The offline model.
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import parse_qs, quote, urlparse

import pytest

from adapters.embedders import HashingEmbedder
from bot.app import build_app
from bot.settings import Settings
from i18n import say
from memory.types import ChatKind, IncomingMessage, ThreadKey

pytestmark = pytest.mark.postgres


class Relay:
    """Passes connections made to ``<folder>/.s.PGSQL.5432`` on to the server's socket until
    :meth:`shut`, which closes every relayed connection and the listening socket."""

    def __init__(self, folder: Path, target: str) -> None:
        self.folder, self.target = folder, target
        self._server: asyncio.Server | None = None
        self._writers: list[asyncio.StreamWriter] = []

    async def start(self) -> None:
        self._server = await asyncio.start_unix_server(self._relay,
                                                       path=self.folder / ".s.PGSQL.5432")

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_unix_connection(self.target)
        self._writers += [writer, up_writer]

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(OSError):
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            dst.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    async def shut(self) -> None:
        assert self._server is not None
        self._server.close()
        for writer in self._writers:
            writer.close()
        await self._server.wait_closed()
        (self.folder / ".s.PGSQL.5432").unlink(missing_ok=True)


def _msg(text: str, n: int) -> IncomingMessage:
    return IncomingMessage(ThreadKey("telegram", "77"), ChatKind.PRIVATE, "77", "Ana", text,
                           datetime.now(timezone.utc), platform_message_id=str(n))


async def test_an_unreachable_database_gets_the_storage_failure_reply(tmp_path, pg_schema):
    url, schema = pg_schema
    socket_dir = parse_qs(urlparse(url).query)["host"][0]
    folder = tmp_path / "relay"
    folder.mkdir()
    relay = Relay(folder, f"{socket_dir}/.s.PGSQL.5432")
    await relay.start()
    settings = Settings(data_dir=tmp_path / "data", embedder="hashing",
                        database_url=f"postgresql://postgres:@/postgres?host={quote(str(folder))}"
                                     f"&search_path={quote(schema + ',public')}")
    app = await build_app(settings, embedder=HashingEmbedder())
    try:
        assert await app.engine.handle(_msg("remember that my favourite colour is teal", 1))
        await relay.shut()
        replies = await app.engine.handle(_msg("what is my favourite colour?", 2))
        reason = say("en", "storage.reason.failing")
        assert replies == [say("en", "engine.not_saved", reason=reason)]
    finally:
        with contextlib.suppress(Exception):
            await app.aclose()
