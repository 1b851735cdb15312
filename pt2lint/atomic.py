"""Atomic file replacement: a file is either its old bytes or its new bytes, never half-written.

Used by ``fix``, ``--add-noqa``, baselines and the result cache.  The new bytes go to
a temporary file in the same directory, which is then renamed over the target
(``os.replace`` is atomic on POSIX and Windows), so a crash, a full disk or a
concurrent reader never sees a partial file.
"""

from __future__ import annotations

import os
import tempfile
from typing import Callable, Optional


def _default_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def atomic_write(
    path: str,
    data: bytes,
    *,
    mode: Optional[int] = None,
    durable: bool = True,
    before_replace: Optional[Callable[[], None]] = None,
    prefix: str = ".pt2lint-",
) -> None:
    """Replace ``path`` with ``data`` atomically.

    Args:
        path: the file to write (its directory must exist).
        data: the complete new contents.
        mode: permission bits for the new file; default: the existing file's, else 0o666 & ~umask.
        durable: fsync the data before the rename (off for disposable files such as cache entries).
        before_replace: called after the data is written and before the rename; raising
            from it aborts the write and leaves ``path`` untouched (``fix`` re-checks that the
            file did not change in between).
        prefix: name prefix of the temporary file.

    Raises:
        OSError: the directory is not writable, the disk is full, ...
        Exception: whatever ``before_replace`` raises.
    """
    directory = os.path.dirname(os.path.abspath(path))
    if mode is None:
        try:
            mode = os.stat(path).st_mode & 0o7777
        except FileNotFoundError:
            mode = _default_mode()
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        if before_replace is not None:
            before_replace()
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
