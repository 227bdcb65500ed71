"""A folder to run one dispatch model in, and what changed in it afterwards.

Layout: ``model/`` (the model and the files its sourcePaths may name), ``cwd/`` (the working folder),
``o1/out/`` (--output-path, with ``link`` a symbolic link to ``outside/``, an existing file and folder),
``outside/`` (which nothing may touch).
"""

from __future__ import annotations

import hashlib
import io
import os
import zipfile
from pathlib import Path

import numpy as np

from .models import CWD, MODEL_DIR, OUTPUT, OUTSIDE


def make_sandbox(root: Path) -> None:
    model, out, outside = root / MODEL_DIR, root / OUTPUT, root / OUTSIDE
    for folder in (model, root / CWD, out, outside, model / "dir", out / "existing_dir"):
        folder.mkdir(parents=True, exist_ok=True)
    np.save(model / "data.npy", np.arange(-4, 5, dtype=np.float32))
    (model / "raw.bin").write_bytes(np.arange(9, dtype=np.float32).tobytes())
    (model / "empty.bin").write_bytes(b"")
    (model / "odd.bin").write_bytes(b"\x01\x02\x03\x04\x05")
    (model / "text.npy").write_text("not an npy file\n")
    stream = io.BytesIO()  # an .npz archive named .npy
    with zipfile.ZipFile(stream, "w") as archive:
        archive.writestr("x.npy", b"\x93NUMPY")
    (model / "fake.npy").write_bytes(stream.getvalue())
    (out / "existing.npy").write_bytes(b"old")
    (outside / "keep.txt").write_text("nothing may change me\n")
    os.symlink(outside, out / "link")


def snapshot(root: Path) -> dict[str, str]:
    """Every entry under ``root`` (links not followed): its kind and, for files, a hash of its bytes."""
    found: dict[str, str] = {}
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in dirs + files:
            path = Path(folder) / name
            relative = str(path.relative_to(root))
            if path.is_symlink():
                found[relative] = "link " + os.readlink(path)
            elif path.is_dir():
                found[relative] = "dir"
            else:
                found[relative] = "file " + hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def changes(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """Entries added, removed or changed, as relative paths."""
    return sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
