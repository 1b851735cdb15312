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


def _keep_owner(tmp: str, existing: os.stat_result) -> None:
    """Give ``tmp`` the owner and group of the file it replaces.

    The temporary file belongs to whoever runs pt2lint; renamed over a file of another
    user (``sudo pt2lint fix`` on a checkout owned by ``nobody``) it would change the
    file's owner.  Root can always restore both; another user can at most set a group
    it belongs to, and a failure there is not an error (the file keeps the writer's group,
    as with any editor's save).
    """
    if not hasattr(os, "chown"):
        return
    st = os.stat(tmp)
    if (st.st_uid, st.st_gid) == (existing.st_uid, existing.st_gid):
        return
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        os.chown(tmp, existing.st_uid, existing.st_gid)
        return
    try:
        os.chown(tmp, -1, existing.st_gid)
    except OSError:
        pass


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
            The owner and group of an existing file are kept too (see :func:`_keep_owner`).
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
    try:
        existing: Optional[os.stat_result] = os.stat(path)
    except FileNotFoundError:
        existing = None
    if mode is None:
        mode = existing.st_mode & 0o7777 if existing is not None else _default_mode()
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        if existing is not None:
            _keep_owner(tmp, existing)
        os.chmod(tmp, mode)  # after chown, which clears set-user-id bits
        if before_replace is not None:
            before_replace()
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
