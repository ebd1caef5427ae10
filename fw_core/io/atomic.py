"""Atomic, durable replacement of a file or folder entry, and the leftovers of killed saves.

A save writes a temporary entry beside its destination, named
``.{destination}.{pid}-{token}.fw-tmp``, flushes it to disk, renames it over the destination in
one step and flushes the folder, so a crash at any instant leaves the old or the new content.
The pid in the name tells a killed save's leftover (its process is gone) from a save still
running in another process; the next save of the same name removes leftovers.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import shutil
from collections.abc import Callable
from pathlib import Path

from ..errors import CheckpointError

SUFFIX = ".fw-tmp"
_TEMP = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)-[0-9a-f]+" + re.escape(SUFFIX) + "$")

_FIXES = {
    errno.ENOSPC: "free space on that disk, or save to another one",
    errno.EDQUOT: "your disk quota is used up: free space, or save elsewhere",
    errno.EFBIG: "the file is larger than this process may write (ulimit -f) or than the file "
                 "system allows: raise the limit, or save elsewhere",
    errno.EROFS: "that file system is read-only: save to a writable folder",
    errno.EACCES: "you may not write there: save to a folder you own, or fix its permissions",
    errno.EPERM: "the operating system refused the write: save to a folder you own",
}


def temp_beside(destination: Path) -> Path:
    """A fresh temporary name beside ``destination`` (nothing is created)."""
    token = secrets.token_hex(4)
    return destination.with_name(f".{destination.name}.{os.getpid()}-{token}{SUFFIX}")


def leftovers(folder: Path, name: str | None = None) -> list[Path]:
    """Temporary entries in ``folder`` (of saves to ``name``, or of any name) whose process
    has ended."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    found = []
    for entry in entries:
        match = _TEMP.match(entry.name)
        if match and (name is None or match["name"] == name) and not _alive(int(match["pid"])):
            found.append(Path(entry.path))
    return sorted(found)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # a live process of another user
        return True
    return True


def remove(path: Path) -> None:
    """Delete a file or a folder tree, whichever it is (a missing one is fine)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def fsync_folder(folder: Path) -> None:
    """Flush a folder's entries: a rename is durable only once its folder is flushed."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return  # no directory handles on this platform: the rename is still atomic
    try:
        os.fsync(fd)
    except OSError:
        pass  # noqa: S110 - some file systems refuse fsync on a folder; the rename stands
    finally:
        os.close(fd)


def write_file(destination: Path, write: Callable) -> None:
    """Replace ``destination`` by what ``write(file)`` writes to a binary file, atomically and
    durably, after removing the leftovers of killed saves to the same name.

    Raises:
        CheckpointError: the folder cannot be written (full disk, read-only, no permission,
            quota, file-size limit); ``destination`` is then as it was.
    """
    if destination.is_dir():
        raise CheckpointError(f"cannot save to {destination}: it is a folder",
                              hint="give a file name, e.g. folder/checkpoint.safetensors")
    with os_errors_as_checkpoint_errors(destination):
        destination.parent.mkdir(parents=True, exist_ok=True)
        for leftover in leftovers(destination.parent, destination.name):
            remove(leftover)
        temp = temp_beside(destination)
        try:
            with open(temp, "xb") as file:
                write(file)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temp, destination)
        except BaseException:
            remove(temp)
            raise
        fsync_folder(destination.parent)


@contextlib.contextmanager
def os_errors_as_checkpoint_errors(destination: Path):
    """Report an OSError raised while saving ``destination`` as a CheckpointError naming the
    path, the cause and a fix."""
    try:
        yield
    except CheckpointError:
        raise
    except OSError as exc:
        fix = _FIXES.get(exc.errno, "check that the folder exists and is writable")
        raise CheckpointError(f"could not save {destination}: {exc.strerror or exc}; whatever "
                              "was saved there before is unchanged", hint=fix) from exc
