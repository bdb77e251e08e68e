"""Files that appear complete or not at all.

Everything the project writes (results, study tables, neutral models, figures, plots) goes
through :func:`atomic_write` or :func:`write_bytes`: the data go to a temporary file in the target's
folder (``.<name>.<pid>.part``), are flushed to the disk, and only then renamed over the target
(``os.replace``, atomic on POSIX within one file system). A run killed at any moment leaves the
previous file of that name intact or the complete new one, never a half file; a failure (a full
disk, Ctrl-C) removes the temporary file and re-raises. A temporary file left by a process that
was killed (SIGKILL cannot be caught) is removed by the next write to the same target once its
process is gone.

:func:`check_writable` is the check before a long run: the folder exists and takes a file, and
it has room for the estimated size, so that a read-only folder or a full disk is said at once, not
after the simulation.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil

#: Room kept free beyond a file's estimated size (the disk is not filled to its last byte).
SPARE_BYTES = 1 << 20


class FileWriteError(OSError):
    """A file could not be written; the message names it and says why (its ``filename`` too)."""


def _temp_name(target: str) -> str:
    folder, name = os.path.split(target)
    return os.path.join(folder, f".{name}.{os.getpid()}.part")


def _remove_stale(target: str) -> None:
    """Remove temporary files of ``target`` whose writing process no longer runs."""
    folder, name = os.path.split(target)
    pattern = re.compile(rf"^\.{re.escape(name)}\.(\d+)\.part$")
    try:
        entries = os.listdir(folder or ".")
    except OSError:
        return
    for entry in entries:
        m = pattern.match(entry)
        if not m:
            continue
        pid = int(m.group(1))
        if pid == os.getpid():
            continue
        try:
            os.kill(pid, 0)
            continue                      # its writer still runs
        except ProcessLookupError:
            pass
        except OSError:                   # another user's process: leave its file alone
            continue
        with contextlib.suppress(OSError):
            os.remove(os.path.join(folder, entry))


def _why(exc: OSError) -> str:
    if exc.errno == errno.ENOSPC:
        return "no space left on the device"
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return "the folder does not allow writing"
    if exc.errno == errno.ENOENT:
        return "its folder does not exist"
    if exc.errno == errno.EISDIR:
        return "it is a folder"
    return exc.strerror or str(exc)


def _error(path: str, exc: OSError) -> FileWriteError:
    err = FileWriteError(exc.errno or 0, f"cannot write {path}: {_why(exc)}")
    err.filename = path
    return err


@contextlib.contextmanager
def atomic_write(path, mode: str = "w", **open_args):
    """Open a temporary file beside ``path`` for writing; rename it to ``path`` when the block
    ends normally, remove it when the block raises (anything, KeyboardInterrupt too).

    Parameters
    ----------
    path : str or path-like
        The file to write. Its folder must exist.
    mode : {"w", "wb"}
        Text or binary; ``open_args`` go to :func:`open` (``newline``, ``encoding``).

    Raises
    ------
    FileWriteError
        The file could not be written (an ``OSError`` whose message names the file and says why:
        no space, a read-only folder, no such folder). The previous file of that name is intact.
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_write writes with 'w' or 'wb', not {mode!r}")
    target = os.fspath(path)
    if os.path.isdir(target):
        raise _error(target, IsADirectoryError(errno.EISDIR, "is a directory"))
    _remove_stale(target)
    temp = _temp_name(target)
    try:
        fh = open(temp, mode, **open_args)
    except OSError as exc:
        raise _error(target, exc) from None
    done = False
    try:
        with fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        mode_bits = _mode_of(target)
        if mode_bits is not None:
            with contextlib.suppress(OSError):
                os.chmod(temp, mode_bits)
        os.replace(temp, target)
        done = True
    except OSError as exc:
        raise _error(target, exc) from None
    finally:
        if not done:
            with contextlib.suppress(OSError):
                os.remove(temp)


def _mode_of(target: str):
    """The permission bits of an existing ``target`` (kept by the new file), else None."""
    try:
        return os.stat(target).st_mode & 0o7777
    except OSError:
        return None


def write_bytes(path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (:func:`atomic_write`)."""
    with atomic_write(path, "wb") as fh:
        fh.write(data)


def write_text(path, text: str, encoding: str = "utf-8") -> None:
    """Write ``text`` to ``path`` atomically (:func:`atomic_write`)."""
    with atomic_write(path, "w", encoding=encoding, newline="") as fh:
        fh.write(text)


def check_writable(path, estimated_bytes: int = 0) -> None:
    """Check, before a long computation, that ``path`` can be written with about
    ``estimated_bytes`` of data: its folder exists and takes a new file, the path is not a
    folder, and the folder's file system has that much room (plus :data:`SPARE_BYTES`).

    Raises
    ------
    FileWriteError
        Naming the file and what stands in the way. Nothing is written or left behind.
    """
    target = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(target))
    if os.path.isdir(target):
        raise _error(target, IsADirectoryError(errno.EISDIR, "is a directory"))
    if not os.path.isdir(folder):
        raise _error(target, FileNotFoundError(errno.ENOENT, "no such folder"))
    probe = _temp_name(target)
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        fd = None                          # our own leftover: the folder does take files
    except OSError as exc:
        raise _error(target, exc) from None
    if fd is not None:
        os.close(fd)
    with contextlib.suppress(OSError):
        os.remove(probe)
    if os.path.exists(target) and not os.access(target, os.W_OK) and not os.access(folder,
                                                                                    os.W_OK):
        raise _error(target, PermissionError(errno.EACCES, "read-only"))
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        return
    need = int(estimated_bytes) + SPARE_BYTES
    if estimated_bytes and free < need:
        raise FileWriteError(
            errno.ENOSPC, f"cannot write {target}: its results need about "
                          f"{_size(estimated_bytes)} and the disk has {_size(free)} free")


def _size(n: float) -> str:
    for unit in ("bytes", "kB", "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.3g} {unit}"
        n /= 1000.0
    return f"{n:.3g} TB"   # pragma: no cover
