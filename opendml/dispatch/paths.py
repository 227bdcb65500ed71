"""File names from a model or the command line: checked before the system sees them, and confined.

A name with a NUL character, one the file system cannot encode, or one too long is refused here with the
JSON path that holds it, rather than failing deep inside the system with a bare ``ValueError`` or
``OSError``. writeFile targets stay inside the output folder unless the caller allows otherwise.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .errors import describe, model_error

# The limits of Linux and most file systems; a system with lower ones still fails cleanly, later.
NAME_MAX = 255  # bytes in one file name
PATH_MAX = 4096  # bytes in a whole path, its terminating NUL included
ALLOW_OUTSIDE_OPTION = "--allow-outside-output-path"
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")  # DxDispatch reads and writes images; opendml does not


def check_path(text: str, path: str) -> str:
    """``text`` if the system can take it as a file name; ``path`` names where it came from in errors.

    >>> check_path("out/y.npy", "commands[2].targetPath")
    'out/y.npy'
    >>> check_path("y\\0.npy", "commands[2].targetPath")
    Traceback (most recent call last):
    opendml.dispatch.errors.ModelError: commands[2].targetPath: must not contain a NUL character; got "y\\u0000.npy".
    """
    if "\0" in text:
        raise model_error(path, "must not contain a NUL character", _shown(text))
    try:
        encoded = os.fsencode(text)
    except UnicodeError:
        raise model_error(path, "must be a file name this system can encode", _shown(text)) from None
    if len(encoded) >= PATH_MAX:
        raise model_error(path, f"must be shorter than {PATH_MAX} bytes", f"{len(encoded)} bytes")
    longest = max(len(part) for part in encoded.replace(os.sep.encode(), b"/").split(b"/"))
    if longest > NAME_MAX:
        raise model_error(path, f"must not hold a name longer than {NAME_MAX} bytes", f"a name of {longest} bytes")
    return text


def _shown(text: str) -> str:
    return describe(text, limit=200)  # whole, unless absurdly long


def resolve_input(source: str, model_dir: Path) -> Path:
    """A source file: relative to the model's folder first, then to the current folder (as DxDispatch)."""
    path = Path(source)
    if path.is_absolute():
        return path
    beside_model = model_dir / path
    try:
        return beside_model if beside_model.exists() or not path.exists() else path
    except OSError:  # too long once joined, say: reading it reports the problem on the model's path
        return beside_model


def resolve_output(text: str, path: str, output_dir: Path, allow_outside: bool) -> Path:
    """A writeFile ``targetPath``: relative to ``output_dir``, and (unless allowed) inside it once every
    ``..`` and symbolic link is resolved."""
    check_path(text, path)
    target = Path(text)
    if text.endswith(("/", os.sep)) or target.name in ("", ".", ".."):
        raise model_error(path, "must name a file", _shown(text))
    if target.is_absolute() and not allow_outside:
        raise model_error(path, f"must be relative to the output folder (an absolute path needs "
                          f"{ALLOW_OUTSIDE_OPTION})", _shown(text))
    full = output_dir / target  # an absolute target stays as it is
    if not allow_outside:
        root = os.path.realpath(output_dir)
        resolved = os.path.realpath(full)
        if os.path.commonpath([root, resolved]) != root:
            raise model_error(path, f"must stay inside the output folder {root} ({ALLOW_OUTSIDE_OPTION} allows "
                              f"it)", f"{_shown(text)}, which leads to {resolved}")
    return full


def check_replaceable(target: Path, path: str) -> None:
    """Refuse a target that exists and is not a regular file: renaming over it would replace a folder,
    a device such as /dev/null, a pipe, or a symbolic link rather than the file it points to."""
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        return
    except OSError as error:
        raise model_error(path, "must name a file that can be written", f"{target} ({error.strerror})") from None
    if not stat.S_ISREG(mode):
        raise model_error(path, "must name a regular file or a new one", f"{target}, {file_kind(mode)}")


def file_kind(mode: int) -> str:
    """What a file is, in words, from its ``st_mode``."""
    kinds = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a character device"),
             (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a named pipe"), (stat.S_ISSOCK, "a socket"))
    return next((words for test, words in kinds if test(mode)), "a regular file")
