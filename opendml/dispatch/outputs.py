"""The files a run writes: each to a temporary file at once, all put in place only when the run succeeds.

A writeFile command writes its temporary file beside the target straight away (its bytes are those of
that moment, and memory is not held until the end). ``commit`` then renames every temporary file over its
target, after checking that each target is a regular file or absent; if a rename fails, the targets
already replaced get their previous content back. ``discard`` removes the temporary files and the folders
made for them: a run that fails or is interrupted leaves the file system as it found it.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from .errors import model_error
from .paths import check_replaceable


@dataclass(frozen=True)
class _Staged:
    temporary: Path
    path: str  # the JSON path of the command's targetPath
    resource: str


@dataclass
class StagedFiles:
    _staged: dict[Path, _Staged] = field(default_factory=dict)  # target -> its temporary file
    _made_folders: list[Path] = field(default_factory=list)  # in the order made

    def stage(self, target: Path, path: str, resource: str, write: Callable[[BinaryIO], None]) -> None:
        """Write a temporary file for ``target`` with ``write``; ``path`` names the targetPath in errors."""
        try:
            self._make_folders(target.parent)
            temporary, descriptor = _create(target.parent)
            try:
                with os.fdopen(descriptor, "wb") as file:
                    write(file)
            except BaseException:
                temporary.unlink()
                raise
        except OSError as error:
            raise _write_error(path, target, error) from None
        replaced = self._staged.pop(target, None)  # a later writeFile of the same target wins
        if replaced is not None:
            replaced.temporary.unlink(missing_ok=True)
        self._staged[target] = _Staged(temporary, path, resource)

    def commit(self) -> list[tuple[str, Path]]:
        """Put every file in place, or none; returns (resource, target) for each, in the order staged."""
        staged = list(self._staged.items())
        for target, entry in staged:
            check_replaceable(target, entry.path)
        replaced: list[tuple[Path, Path | None]] = []  # (target, its previous content kept aside, or None)
        try:
            for target, entry in staged:
                previous = _keep_previous(target)
                try:
                    os.replace(entry.temporary, target)
                except OSError as error:
                    if previous is not None:
                        os.replace(previous, target)
                    raise _write_error(entry.path, target, error) from None
                replaced.append((target, previous))
        except BaseException:
            _restore(replaced)
            raise
        for _, previous in replaced:
            if previous is not None:
                previous.unlink(missing_ok=True)
        self._staged.clear()
        self._made_folders.clear()
        return [(entry.resource, target) for target, entry in staged]

    def discard(self) -> None:
        """Remove every temporary file, and the folders made for them (those still empty)."""
        for entry in self._staged.values():
            entry.temporary.unlink(missing_ok=True)
        self._staged.clear()
        for folder in reversed(self._made_folders):
            with contextlib.suppress(OSError):  # not empty (something else was put there): left alone
                folder.rmdir()
        self._made_folders.clear()

    def _make_folders(self, folder: Path) -> None:
        missing = []
        while not folder.exists() and folder != folder.parent:
            missing.append(folder)
            folder = folder.parent
        for made in reversed(missing):
            made.mkdir()
            self._made_folders.append(made)


def _fresh_name(folder: Path, suffix: str) -> Path:
    # Short, so that it fits wherever the target's own name does.
    return folder / f".opendml-{secrets.token_hex(6)}.{suffix}"


def _create(folder: Path) -> tuple[Path, int]:
    """A new, empty file in ``folder``, open for writing, with the permissions of any new file (0644
    under umask 022: the system applies the umask to 0666)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    while True:
        path = _fresh_name(folder, "tmp")
        try:
            return path, os.open(path, flags, 0o666)
        except FileExistsError:
            continue


def _keep_previous(target: Path) -> Path | None:
    """A second name for the target's current content (a hard link), so that a failed commit can restore it."""
    if not target.exists():
        return None
    while True:
        previous = _fresh_name(target.parent, "old")
        try:
            os.link(target, previous)
        except FileExistsError:
            continue
        except OSError:  # a file system without hard links: move the file aside instead
            os.replace(target, previous)
        return previous


def _restore(replaced: list[tuple[Path, Path | None]]) -> None:
    for target, previous in reversed(replaced):
        with contextlib.suppress(OSError):  # best effort: the error being reported matters more
            if previous is None:
                target.unlink(missing_ok=True)
            else:
                os.replace(previous, target)


def _write_error(path: str, target: Path, error: OSError) -> Exception:
    return model_error(path, "must name a file that can be written", f"{target} ({error.strerror or error})")
