"""The one way pt2lint reads a file: bounded, never blocking, never escaping the tree unasked.

Every file the tool opens -- sources, ``.gitignore`` files, config files, cache entries,
the files ``fix`` and ``--add-noqa`` rewrite, the modules the analysis follows -- goes
through :func:`read_bytes`, which:

- opens with ``O_NONBLOCK`` (so opening a FIFO never waits for a writer) and checks
  what was opened with ``fstat``: a regular file is read; a directory, a device
  (``/dev/zero``), a socket or a FIFO is refused with a one-line reason, unless the
  caller passes ``allow_pipe=True`` for a path the user named on the command line
  (``pt2lint check <(cat model.py)``), which is then read with a time limit (waiting for a
  FIFO's writer to open it too: before that, a non-blocking read would be end of file);
- reads at most ``max_bytes`` (default :data:`DEFAULT_MAX_BYTES`, 10 MB) and refuses a
  longer file, so ``/dev/zero`` behind a link or a huge generated file cannot exhaust memory;
- with ``root``, refuses a path that is (or goes through) a symbolic link resolving
  outside ``root``.

Refusals are :class:`ReadRefused`, an :class:`OSError` whose ``strerror`` is the reason,
so callers that already report ``error: <path>: <reason>`` for I/O errors need no change.
"""

from __future__ import annotations

import errno
import os
import select
import stat
import time
from typing import Optional

#: Largest file read by default, in bytes (Python sources, ``.gitignore``, config files).
DEFAULT_MAX_BYTES = 10 * 1024 * 1024

#: How long a pipe named on the command line may stay silent before the read is abandoned, in seconds.
PIPE_TIMEOUT_S = 30.0

_CHUNK = 1 << 20


class ReadRefused(OSError):
    """A file pt2lint will not read: not a regular file, too large, or a link out of the tree.

    ``strerror`` holds the reason, lower-case, without the path (``"not a regular file
    (a character device)"``).
    """

    def __init__(self, reason: str, filename: Optional[str] = None) -> None:
        super().__init__(errno.EINVAL, reason, filename)


def file_kind(mode: int) -> str:
    """What a non-regular file is, for messages: ``"a character device"``, ``"a named pipe"``, ..."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def format_size(n: int) -> str:
    """``n`` bytes for a message: ``"10 MB"``, ``"23.4 KB"``, ``"300 bytes"`` (units of 1024)."""
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= size:
            text = f"{n / size:.1f}"
            return f"{text[:-2] if text.endswith('.0') else text} {unit}"
    return f"{n} bytes"


def is_within(path: str, root: str) -> bool:
    """Whether ``path``, with every symbolic link resolved, lies in ``root`` (also resolved)."""
    real = os.path.realpath(path)
    base = os.path.realpath(root)
    try:
        return os.path.commonpath([real, base]) == base
    except ValueError:  # different drives
        return False


def link_outside(path: str, root: str) -> bool:
    """Whether ``path`` reaches a file outside ``root`` through a symbolic link.

    False when ``path`` is no link and lies (as written) in ``root``'s real location:
    only a link can take a path that is inside the tree out of it.
    """
    return not is_within(path, root)


def read_bytes(
    path: str,
    *,
    max_bytes: Optional[int] = DEFAULT_MAX_BYTES,
    root: Optional[str] = None,
    allow_pipe: bool = False,
    what: Optional[str] = "max-file-size",
) -> bytes:
    """The bytes of the file at ``path``, read safely (see the module docstring).

    Args:
        path: the file.
        max_bytes: refuse files longer than this many bytes (``None``: no limit).
        root: when given, refuse a path whose real location (links resolved) is outside it.
        allow_pipe: read a FIFO or pipe too (only for a path the user named), giving up
            after :data:`PIPE_TIMEOUT_S` seconds without data.
        what: the setting that raises the limit, named in the too-large message
            (default: ``max-file-size``; ``None``: none).

    Raises:
        ReadRefused: a directory, device, socket or (without ``allow_pipe``) FIFO; larger
            than ``max_bytes``; a link out of ``root``; a pipe that stayed silent.
        OSError: the OS's error (missing, permission denied, a link loop, ...).
    """
    if root is not None and link_outside(path, root):
        raise ReadRefused("a symbolic link to a file outside the project, not read", path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    flags |= getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory, not a Python file", path)
        if stat.S_ISREG(st.st_mode):
            if max_bytes is not None and st.st_size > max_bytes:
                raise ReadRefused(_too_large(st.st_size, max_bytes, what), path)
            return _read_regular(fd, max_bytes, what, path)
        if allow_pipe and stat.S_ISFIFO(st.st_mode):
            return _read_pipe(fd, max_bytes, what, path)
        raise ReadRefused(f"not a regular file ({file_kind(st.st_mode)}), not read", path)
    finally:
        os.close(fd)


def _too_large(size: Optional[int], limit: int, what: Optional[str]) -> str:
    have = f"{format_size(size)}, " if size is not None else "over the "
    hint = f"; raise it with the {what} setting" if what else ""
    return f"file too large ({have}limit {format_size(limit)}{hint}), not read"


def _read_regular(fd: int, max_bytes: Optional[int], what: Optional[str], path: str) -> bytes:
    # A regular file can grow between fstat and read: never read more than the cap (+1 to notice).
    parts = []
    total = 0
    while True:
        want = _CHUNK if max_bytes is None else min(_CHUNK, max_bytes + 1 - total)
        if want <= 0:
            raise ReadRefused(_too_large(None, max_bytes or 0, what), path)
        chunk = os.read(fd, want)
        if not chunk:
            return b"".join(parts)
        parts.append(chunk)
        total += len(chunk)
        if max_bytes is not None and total > max_bytes:
            raise ReadRefused(_too_large(None, max_bytes, what), path)


def _read_pipe(fd: int, max_bytes: Optional[int], what: Optional[str], path: str) -> bytes:
    parts = []
    total = 0
    deadline = time.monotonic() + PIPE_TIMEOUT_S
    while True:
        # wait until the pipe is readable, but not forever: a FIFO no writer has opened yet is not
        # readable (and a non-blocking read of it would be end of file at once: an empty file)
        left = deadline - time.monotonic()
        if left <= 0:
            raise ReadRefused(f"a pipe that sent nothing for {PIPE_TIMEOUT_S:.0f} s, not read", path)
        ready, _, _ = select.select([fd], [], [], min(left, 1.0))
        if not ready:
            continue
        try:
            chunk = os.read(fd, _CHUNK)
        except BlockingIOError:  # readable a moment ago, drained by now: wait again
            continue
        if not chunk:
            return b"".join(parts)
        deadline = time.monotonic() + PIPE_TIMEOUT_S
        parts.append(chunk)
        total += len(chunk)
        if max_bytes is not None and total > max_bytes:
            raise ReadRefused(_too_large(None, max_bytes, what), path)


def read_text(path: str, *, max_bytes: Optional[int] = DEFAULT_MAX_BYTES, root: Optional[str] = None) -> str:
    """Read and decode a Python source file the way the linter does (PEP 263, BOM), for the LSP and tools.

    Args:
        path: the file.
        max_bytes: as for :func:`read_bytes`.
        root: as for :func:`read_bytes`.

    Raises:
        OSError: as :func:`read_bytes` (including :class:`ReadRefused`).
        pt2lint.engine.DecodeError: undecodable bytes.
    """
    from pt2lint.engine import decode_source

    return decode_source(read_bytes(path, max_bytes=max_bytes, root=root))


def printable(text: str) -> str:
    """``text`` (a file name, a message) with control characters escaped, for printing on a terminal.

    C0 and C1 control characters and DEL become ``\\xNN`` (``\\n``, ``\\r``, ``\\t`` as
    themselves escaped); so does an undecodable byte that reached us as a surrogate escape
    (``\\udcff`` → ``\\xff``).  Everything else, backslashes included, is kept, so ordinary
    names print unchanged.
    """
    if text.isprintable():
        return text
    out = []
    for ch in text:
        o = ord(ch)
        if ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif o < 0x20 or 0x7F <= o < 0xA0:
            out.append(f"\\x{o:02x}")
        elif 0xDC80 <= o <= 0xDCFF:  # surrogateescape of a byte that is not UTF-8
            out.append(f"\\x{o - 0xDC00:02x}")
        elif 0xD800 <= o <= 0xDFFF or ch in "\u2028\u2029\u0085":
            out.append(f"\\u{o:04x}")
        else:
            out.append(ch)
    return "".join(out)


def utf8_safe(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD, so it encodes as valid UTF-8.

    A file name that is not valid UTF-8 reaches Python with its bad bytes as surrogate
    escapes (``b"\\xff"`` → ``"\\udcff"``).  Machine-readable reports (JSON, SARIF, LSP,
    JUnit, HTML) show such a byte as U+FFFD REPLACEMENT CHARACTER, as ruff does
    (Rust's ``to_string_lossy``); human-readable ones escape it first (:func:`printable`).
    """
    if not any("\ud800" <= ch <= "\udfff" for ch in text):
        return text
    return "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in text)


__all__ = [
    "DEFAULT_MAX_BYTES",
    "PIPE_TIMEOUT_S",
    "ReadRefused",
    "file_kind",
    "format_size",
    "is_within",
    "link_outside",
    "printable",
    "read_bytes",
    "read_text",
    "utf8_safe",
]
