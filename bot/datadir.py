"""The data folder: created owner-only (issue 8)."""

from __future__ import annotations

from pathlib import Path


def ensure_data_dir(folder: Path) -> Path:
    """Create the data folder with owner-only permissions (0o700, whatever the umask); a folder
    that already exists keeps the permissions its operator gave it. Returns ``folder``."""
    folder = Path(folder)
    if not folder.exists():
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        folder.chmod(0o700)
    return folder
