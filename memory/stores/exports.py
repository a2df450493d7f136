"""Export files: the console's ``/export`` documents under ``<data folder>/exports/``.

They hold everything of one user, so a deletion's purge removes them
(``MemoryService.forget_all``, ``forget_fact``): a copy left in the data folder would keep
what was just forgotten. Names are ``memory-export-<user id>-<UTC stamp>.json``; files are
written owner-only (0600) in an owner-only folder (0700).
"""

from __future__ import annotations

import os
from pathlib import Path

FOLDER_NAME = "exports"


class ExportFiles:
    """The export files of one data folder.

    Args:
        folder: ``<data folder>/exports`` (created on the first write).
    """

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)

    @classmethod
    def beside(cls, database_path: str | Path) -> ExportFiles | None:
        """The export files of the data folder holding ``database_path`` (None for an
        in-memory database: no data folder)."""
        if str(database_path) == ":memory:":
            return None
        return cls(Path(database_path).parent / FOLDER_NAME)

    def write(self, user_id: int, stamp: str, body: str) -> Path:
        """Write one export document (``stamp`` such as ``20261201T090000Z``); returns its
        path. Raises ``OSError`` when the folder cannot be written."""
        self.folder.mkdir(mode=0o700, exist_ok=True)
        path = self.folder / f"memory-export-{user_id}-{stamp}.json"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(body + "\n")
        return path

    def drop(self, user_id: int) -> int:
        """Delete every export file of one user; returns how many were removed."""
        removed = 0
        for path in self.folder.glob(f"memory-export-{user_id}-*.json"):
            path.unlink(missing_ok=True)
            removed += 1
        return removed
