"""One rooted hierarchy of errors for the memory core.

Every error the core raises derives from :class:`MemoryCoreError` (never the builtin
``MemoryError``). Adapters translate SDK errors at the seam with ``raise ... from exc``.
"""

from __future__ import annotations


class MemoryCoreError(Exception):
    """Root of every error raised by the memory core and its adapters."""


class StoreError(MemoryCoreError):
    """A storage backend (SQLite or LanceDB) failed or holds inconsistent data.

    Attributes:
        reason: the cause in words a user understands, completing "the storage is ...":
            ``full``, ``read-only``, ``damaged`` or ``failing`` (the default).
    """

    def __init__(self, message: str, *, reason: str = "failing") -> None:
        super().__init__(message)
        self.reason = reason


class ModelError(MemoryCoreError):
    """A language model or embedder call failed."""


class ModelRateLimited(ModelError):
    """The model provider asked us to slow down (HTTP 429 or 529)."""


class ModelUnavailable(ModelError):
    """The model provider could not be reached or answered with a server error."""


class ModelMisconfigured(ModelError):
    """The model provider refused our credentials or access (HTTP 401 or 403): a
    configuration error that retrying cannot fix."""


class ConfigError(MemoryCoreError):
    """A setting is missing or invalid; the message names the setting."""
