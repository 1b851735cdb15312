"""Every file pt2lint writes goes through this module.

- :func:`atomic_write` replaces a regular file: the new bytes go to a temporary file
  in the same directory, which is then renamed over the target (``os.replace`` is
  atomic on POSIX and Windows), so a crash, a full disk or a concurrent reader never
  sees a partial file.  It refuses to rename over anything that is not a regular file
  (or a symbolic link, which is replaced itself): a device, a FIFO or a socket is never
  turned into a regular file.  Used directly for the result cache.
- :func:`write_output` writes a file the user named (``--output-file``,
  ``--write-baseline``): a character device (``/dev/null``, a terminal) or a pipe
  (a FIFO, ``-o >(cat)``, ``/dev/stdout``) is written through, a symbolic link to a
  regular file has its target replaced atomically (the link stays), a regular file is
  replaced atomically.
- :func:`rewrite_file` replaces a source file pt2lint edits (``fix``, ``--add-noqa``):
  never through a link out of the project, never a read-only file, never a file that
  changed since it was read.

A failed write (a full disk: ``ENOSPC``; a reader that went away: ``EPIPE``) always
raises; nothing here reports success for bytes that did not reach their target.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
import time
from typing import Callable, Optional

from pt2lint.reading import PIPE_TIMEOUT_S, file_kind


class WriteRefused(OSError):
    """A file pt2lint will not write (a directory, a block device, a socket, a link out of
    the project, a read-only or changed source file).

    ``strerror`` holds the reason, lower-case, without the path (``"not a regular file
    (a socket), not written"``).
    """

    def __init__(self, reason: str, filename: Optional[str] = None) -> None:
        super().__init__(errno.EINVAL, reason, filename)


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

    A symbolic link at ``path`` is replaced by the new file (the link's target is left
    alone); use :func:`write_output` to write through a link.

    Raises:
        WriteRefused: ``path`` exists and is neither a regular file nor a symbolic link
            (a device, a FIFO, a socket, a directory): renaming over it would destroy it.
        OSError: the directory is not writable, the disk is full, ...
        Exception: whatever ``before_replace`` raises.
    """
    directory = os.path.dirname(os.path.abspath(path))
    try:
        here = os.lstat(path)
    except FileNotFoundError:
        here = None
    if here is not None and not (stat.S_ISREG(here.st_mode) or stat.S_ISLNK(here.st_mode)):
        raise WriteRefused(f"not a regular file ({file_kind(here.st_mode)}), not replaced", path)
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


def write_output(path: str, data: bytes, *, pipe_timeout: float = PIPE_TIMEOUT_S) -> None:
    """Write ``data`` to a file the user named as an output (a report, a baseline).

    What ``path`` is decides how (links followed):

    - missing, or a regular file: replaced atomically (:func:`atomic_write`);
    - a symbolic link (also a dangling one) whose target is, or will be, a regular file:
      the target the link resolves to is replaced atomically, and the link stays a link;
    - a character device (``/dev/null``, a terminal) or a pipe (a FIFO, ``/dev/fd/N``
      from ``-o >(cmd)``, ``/dev/stdout``): opened for writing and written through, no
      temporary file, no rename; a FIFO nobody opens for reading within
      ``pipe_timeout`` seconds is an error rather than a wait without end;
    - a directory, a block device or a socket: refused.

    Every byte is written or an error is raised: a full device (``ENOSPC``), a reader that
    closed the pipe (``EPIPE``) and an error when closing the file all raise.

    Args:
        path: the file named on the command line.
        data: the complete contents.
        pipe_timeout: seconds to wait for a reader on a FIFO.

    Raises:
        WriteRefused: a directory, a block device or a socket.
        OSError: the OS's error (no space left on device, broken pipe, permission denied,
            a link loop, no reader on a FIFO: ``ENXIO``, ...).
    """
    try:
        st: Optional[os.stat_result] = os.stat(path)
    except FileNotFoundError:
        st = None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, "is a directory", path)
    if st is not None and (stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode)):
        if _write_through(path, data, stat.S_ISFIFO(st.st_mode), pipe_timeout):
            return
    elif st is not None and not stat.S_ISREG(st.st_mode):
        raise WriteRefused(f"not a regular file ({file_kind(st.st_mode)}), not written", path)
    target = os.path.realpath(path) if os.path.islink(path) else path
    atomic_write(target, data)


def _write_through(path: str, data: bytes, fifo: bool, timeout: float) -> bool:
    """Write ``data`` into the device or pipe at ``path``; ``False`` when it turned out to be a regular file."""
    flags = os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    deadline = time.monotonic() + timeout
    while True:
        try:
            fd = os.open(path, flags)
            break
        except OSError as exc:  # ENXIO: a FIFO with no reader yet
            if not (fifo and exc.errno == errno.ENXIO):
                raise
            if time.monotonic() >= deadline:
                raise OSError(errno.ENXIO, f"nobody opened the named pipe for reading within {timeout:g} s", path) from None
            time.sleep(0.05)
    try:
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode):  # replaced by a regular file since the stat: nothing written yet
            return False
        os.set_blocking(fd, True)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    except BaseException:
        try:
            os.close(fd)
        except OSError:
            pass
        raise
    os.close(fd)  # an error reported at close (NFS, a full device) is an error too
    return True


def rewrite_file(path: str, data: bytes, *, expected: bytes, root: Optional[str], action: str = "not written") -> None:
    """Replace the source file ``path`` with ``data`` if it still holds ``expected`` (``fix``, ``--add-noqa``).

    A symbolic link is written through: its target is replaced atomically and the link
    stays -- unless ``root`` is given and the link (or a directory link on the way) leads
    outside it, which is refused.  A file without any write permission bit is refused
    even when running as root.  The file is re-read just before the rename, and a file
    that changed since it was read is left alone.

    Args:
        path: the file, as named or found.
        data: the new bytes.
        expected: the bytes the edit was computed from.
        root: the project root (``None``: no boundary check).
        action: the end of a refusal message (``"not fixed"``, ``"not edited"``).

    Raises:
        WriteRefused: a link out of ``root``, a read-only file, a file that changed or
            could not be re-read; ``strerror`` is the one-line reason.
        OSError: the file cannot be written (the original is then left as it was).
    """
    from pt2lint.reading import is_within, read_bytes

    linked = os.path.realpath(path) != os.path.abspath(path)  # the path or a directory on it is a link
    if root is not None and linked and not is_within(path, root):
        raise WriteRefused(f"a symbolic link to a file outside the project, {action}", path)
    real = os.path.realpath(path)
    st = os.stat(real)
    if not stat.S_ISREG(st.st_mode):
        raise WriteRefused(f"not a regular file ({file_kind(st.st_mode)}), {action}", path)
    if not st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        raise WriteRefused(f"read-only file, {action}", path)

    def unchanged_since_read() -> None:
        try:
            current = read_bytes(real, max_bytes=None)
        except OSError as exc:
            reason = (exc.strerror or type(exc).__name__).lower()
            raise WriteRefused(f"cannot re-read before writing: {reason}", path) from None
        if current != expected:
            raise WriteRefused(f"changed since it was read, {action}", path)

    atomic_write(real, data, mode=stat.S_IMODE(st.st_mode), before_replace=unchanged_since_read, prefix=".pt2lint-fix-")


__all__ = ["WriteRefused", "atomic_write", "rewrite_file", "write_output"]
