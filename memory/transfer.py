"""Export and import of one user: everything stored about them as the export document
(:mod:`memory.portability`), and such a document loaded as a user and indexed.
"""

from __future__ import annotations

import logging

from memory.forgetting import Forgetting
from memory.indexing import Indexer
from memory.ports import Clock, Store

log = logging.getLogger("memory.service")


class Transfer:
    """Exports and imports users.

    Args:
        store: the user's rows (``privacy``) and accounts (``identities``).
        indexer: indexes what an import loaded (reconcile).
        forgetting: forgets a user an import with ``replace`` replaces.
        clock: the time of an export, an import.
    """

    def __init__(self, *, store: Store, indexer: Indexer, forgetting: Forgetting,
                 clock: Clock) -> None:
        self.store = store
        self.indexer = indexer
        self.forgetting = forgetting
        self.clock = clock

    async def export_user(self, user_id: int) -> dict:
        """Everything stored about one user as the export document (``memory.portability``)."""
        from memory.portability import build_document

        doc = build_document(await self.store.privacy.user_rows(user_id), self.clock.now())
        log.info("export user=%s facts=%d episodes=%d turns=%d", user_id, len(doc["facts"]),
                 len(doc["episodes"]), len(doc["turns"]))
        return doc

    async def import_user(self, doc: dict, *, replace: bool = False) -> int:
        """Load an export document as a user and index what it holds; returns the user id.

        Raises:
            ExportFormatError: the document is not a loadable export.
            UserExistsError: one of its accounts already has a user here and ``replace`` is
                False; with ``replace`` that user is first forgotten entirely and removed.
        """
        from memory.errors import StoreError
        from memory.portability import UserExistsError, parse_document

        rows = parse_document(doc)
        for acc in rows["accounts"]:
            existing = await self.store.identities.find_user(acc["platform"], acc["platform_user_id"])
            if existing is None:
                continue
            if not replace:
                raise UserExistsError(
                    f"user {acc['platform']}:{acc['platform_user_id']} exists (use --replace)")
            await self.forgetting.forget_all(existing.id)
            await self.store.privacy.delete_user(existing.id, self.clock.now())
        try:
            user_id = await self.store.privacy.load_user_rows(rows, self.clock.now())
        except StoreError as exc:
            raise UserExistsError(str(exc)) from exc
        await self.indexer.reconcile()
        return user_id
