"""The data folder: everything in it owner-only, and locked by one process at a time."""

from __future__ import annotations

import fcntl
import os
import stat
from pathlib import Path

from memory.errors import ConfigError


#: The process's file mode mask while it works with a data folder: whatever it (and LanceDB,
#: SQLite's WAL, the log handler) creates is owner-only (files 0600, folders 0700).
OWNER_ONLY_UMASK = 0o077


def ensure_data_dir(folder: Path) -> Path:
    """Make everything this process creates owner-only and create the data folder.

    The process's umask becomes :data:`OWNER_ONLY_UMASK` (so files are 0600 and folders 0700
    whatever umask the process was started with); a missing folder is created 0700; in a
    folder that already exists, which keeps the mode its operator gave it, anything inside
    readable or writable by group or others (left by an earlier version or an operator's
    copy) loses those bits (symbolic links are left alone). Returns ``folder``.
    """
    os.umask(OWNER_ONLY_UMASK)
    folder = Path(folder)
    if not folder.exists():
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        folder.chmod(0o700)
        return folder
    for root, dirs, files in os.walk(folder):
        for name in (*dirs, *files):
            path = os.path.join(root, name)
            try:
                mode = os.lstat(path).st_mode
                if not stat.S_ISLNK(mode) and mode & 0o077:
                    os.chmod(path, stat.S_IMODE(mode) & ~0o077)
            except OSError:  # gone meanwhile, or not ours: nothing to tighten
                continue
    return folder


# ----------------------------------------------------------------- the data folder lock

LOCK_FILE_NAME = "memory-bot.lock"
"""The lock file inside the data folder. Only this file is locked, never the database, so
``memory-bot backup`` and read-only tools (``inspect``) work while the bot runs; a backup need
not copy it (it holds only the pid of the holder)."""


class DataDirInUse(ConfigError):
    """Another memory-bot process holds the data folder (exit code 2: a usage error).

    Attributes:
        folder: the data folder.
        pid: the holder's process id as it wrote it into the lock file, or None if unreadable.
    """

    def __init__(self, folder: Path, pid: int | None) -> None:
        self.folder = folder
        self.pid = pid
        holder = f" (pid {pid})" if pid is not None else ""
        super().__init__(f"the data folder {folder} is in use by another memory-bot "
                         f"process{holder}")


class DataDirLock:
    """An exclusive lock on one data folder, held until :meth:`release` or process exit.

    ``fcntl.flock`` on ``<folder>/memory-bot.lock``: the kernel drops it when the holding file
    description is closed, including on a crash or SIGKILL, so a stale lock never blocks a
    restart (no pid checks, no lock-file deletion). flock locks belong to the open file
    description, so a second :func:`lock_data_dir` on the same folder conflicts even inside the
    same process. Linux and macOS only (``fcntl``); on a network file system (NFS) flock may not
    be exclusive across machines.
    """

    def __init__(self, folder: Path, fd: int) -> None:
        self.folder = folder
        self.path = folder / LOCK_FILE_NAME
        self._fd: int | None = fd

    @property
    def held(self) -> bool:
        """Whether this object still holds the lock."""
        return self._fd is not None

    def release(self) -> None:
        """Drop the lock (idempotent). The lock file stays; its content no longer matters."""
        fd, self._fd = self._fd, None
        if fd is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)


def lock_data_dir(folder: Path) -> DataDirLock:
    """Take the data folder's exclusive lock without waiting and write this pid into it.

    Args:
        folder: an existing data folder.

    Returns:
        The held lock; release it with :meth:`DataDirLock.release` when the stores are closed.

    Raises:
        DataDirInUse: another process (or another open in this one) holds it.
        ConfigError: the lock file cannot be created (e.g. a read-only folder).
    """
    folder = Path(folder)
    path = folder / LOCK_FILE_NAME
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)  # close-on-exec by default
    except OSError as exc:
        raise ConfigError(f"cannot create the lock file {path}: {exc}") from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        try:
            raw = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        finally:
            os.close(fd)
        raise DataDirInUse(folder, int(raw) if raw.isdigit() else None) from None
    except OSError as exc:
        os.close(fd)
        raise ConfigError(f"cannot lock {path}: {exc}") from exc
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return DataDirLock(folder, fd)


def lock_holder(folder: Path) -> str | None:
    """Who holds the data folder's lock, without taking it (``memory-bot config check``).

    Returns:
        None when no process holds it (or there is no lock file), else the holder's pid as it
        wrote it into the lock file (``"?"`` when unreadable). The probe takes a shared lock for
        an instant, which fails while an exclusive one is held.
    """
    path = Path(folder) / LOCK_FILE_NAME
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "?"
    finally:
        os.close(fd)  # closing also drops the shared lock when it was taken
    return None
