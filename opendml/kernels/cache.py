"""Where compiled CPU kernels live on disk: one directory per version of the kernel helpers.

The cache root is ``OPENDML_CACHE_DIR``, else the user's cache directory as ``platformdirs`` gives it
(``user_cache_root``: ``$XDG_CACHE_HOME/opendml`` or ``~/.cache/opendml`` on Linux, ``~/Library/Caches/opendml``
on macOS, ``%LOCALAPPDATA%\\opendml\\Cache`` on Windows). Under it, ``kernels-<fingerprint>`` holds everything
compiled by one version of the helpers: the generated Numba modules (``generated/``) and Numba's disk cache of
them and of the hand-written kernels (``numba/``). The fingerprint hashes the source of every kernel helper module (the
CPU kernel package, ``opendml/expr.py`` and its node modules ``expr_*.py``, ``opendml/kernels/``) with the Numba,
llvmlite, NumPy and Python versions and the machine, so an edit to any helper starts a new directory: a
kernel is never loaded from code compiled against another version of the helpers it calls (Numba alone
would only notice an edit to the kernel's own file).

Where the root cannot be written (a read-only home directory), kernels go to ``opendml-<user>`` in the
system's temporary directory, and failing that to a new temporary directory of this process: silently, as
caching is only a speed-up. ``opendml cache info`` shows where they went.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import os
import platform
import re
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from .. import settings
from . import debug, notices

ENV_CACHE_DIR = settings.CACHE_DIR.name
PREFIX = "kernels-"
_NAME = re.compile(r"kernels-[0-9a-f]{16}")
_PACKAGE = Path(__file__).resolve().parent.parent  # opendml/
KERNEL_PACKAGE = _PACKAGE / "backends" / "cpu_kernels"

_directories: dict[str, Path] = {}  # the fingerprint directory, by the root asked for
_fingerprint: str | None = None


def root() -> Path:
    """The cache root asked for (it may not exist, or not be writable)."""
    chosen = settings.CACHE_DIR.get()
    return user_cache_root() if chosen is None else chosen


def user_cache_root() -> Path:
    """opendml's directory in the user's cache directory, where the platform keeps caches (platformdirs).

    platformdirs is a dependency (small, pure Python, no dependencies of its own), imported here, when the cache
    is first used, so that ``import opendml`` still imports only NumPy. An install without it (``pip install
    --no-deps``) falls back to the XDG rule, which is what platformdirs answers on Linux.
    """
    try:
        import platformdirs
    except ImportError:
        base = os.environ.get("XDG_CACHE_HOME", "").strip()
        return (Path(base) if base else Path.home() / ".cache") / "opendml"
    return Path(platformdirs.user_cache_dir("opendml", appauthor=False))


def helper_sources() -> list[Path]:
    """Every module a compiled kernel may depend on: a change to any of them changes the fingerprint."""
    files = sorted(KERNEL_PACKAGE.rglob("*.py")) + [_PACKAGE / "expr.py", *sorted(_PACKAGE.glob("expr_*.py"))] + sorted(
        (_PACKAGE / "kernels").glob("*.py")) + sorted((_PACKAGE / "rounded").rglob("*.py")) + sorted(
        (_PACKAGE / "rounded").rglob("*.npz"))  # the hard cases are frozen into the compiled functions
    return [f for f in files if f.is_file()]


def _version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "absent"


def _machine() -> str:
    """The architecture, and the CPU LLVM compiles for where llvmlite is installed (code is built for it)."""
    try:
        from llvmlite import binding
        cpu = binding.get_host_cpu_name()
    except ImportError:
        cpu = "unknown"
    return f"{platform.machine()}-{cpu}"


def fingerprint(sources: Iterable[Path] | None = None) -> str:
    """16 hex digits naming the helper modules' sources (``sources``: the real ones by default), the
    compiler and library versions and the machine."""
    digest = hashlib.sha256()
    for path in helper_sources() if sources is None else sources:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    for name in ("numba", "llvmlite", "numpy"):
        digest.update(f"{name}={_version(name)}\0".encode())
    digest.update(f"{sys.version}\0{_machine()}".encode())
    return digest.hexdigest()[:16]


def current_fingerprint() -> str:
    """``fingerprint()`` of this process's helper modules, computed once."""
    global _fingerprint
    if _fingerprint is None:
        _fingerprint = fingerprint()
    return _fingerprint


def _writable(path: Path) -> bool:
    try:
        path.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
        return True
    except OSError:
        return False


def directory() -> Path:
    """This version's directory under the root, made if needed (or the silent fallback, see above)."""
    wanted = root()
    found = _directories.get(str(wanted))
    if found is None:
        name = PREFIX + current_fingerprint()
        user = re.sub(r"[^A-Za-z0-9_.-]", "_", _user())
        for candidate in (wanted, Path(tempfile.gettempdir()) / f"opendml-{user}"):
            if _writable(candidate / name):
                found = candidate / name
                break
        else:
            found = Path(tempfile.mkdtemp(prefix="opendml-")) / name
            found.mkdir()
        _directories[str(wanted)] = found
    return found


def _user() -> str:
    """Who owns the fallback directory: a user id where there are any (names can repeat across hosts)."""
    if hasattr(os, "getuid"):
        return str(os.getuid())
    import getpass

    return getpass.getuser()


def write_text(path: Path, text: str) -> None:
    """``text`` into ``path`` unless it holds it already; written whole or not at all, so processes writing
    the same file at once (pytest -n) never read half of one."""
    try:
        if path.read_text() == text:
            return
    except OSError:
        pass
    write_bytes(path, text.encode())


def write_bytes(path: Path, data: bytes) -> None:
    """``data`` into ``path``, written whole or not at all (a temporary file renamed over it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as f:
            f.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


_generating = threading.Lock()  # operators compiled on several threads at once import each module once


def generated_module(modules: dict[Any, ModuleType], key: Hashable, prefix: str,
                     source: Callable[[], str]) -> ModuleType:
    """``modules[key]``, else the module of ``source()``'s text: named ``prefix`` and a hash of the text,
    written to the kernel cache and imported (``import_source``) once per process, whichever thread asks
    first, and printed where OPENDML_PRINT_KERNELS asks. Each generator keeps its own ``modules``."""
    module = modules.get(key)
    if module is None:
        with _generating:
            module = modules.get(key)
            if module is None:
                text = source()
                stem = prefix + hashlib.sha256(text.encode()).hexdigest()[:16]
                if debug.print_kernels_enabled():
                    debug.print_source("cpu", f"{stem} {key!r}", text)
                module = modules[key] = import_source(stem, text)
    return module


def import_source(stem: str, text: str) -> ModuleType:
    """The module of source ``text``, written as ``generated/<stem>.py`` in ``directory()`` and imported
    from that file (so Numba can cache what it compiles from it)."""
    name = f"opendml_generated_{stem}"
    module = sys.modules.get(name)
    if module is not None:
        return module
    path = directory() / "generated" / f"{stem}.py"
    write_text(path, text)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


@dataclass(frozen=True)
class Entry:
    """One fingerprint directory under the root."""

    path: Path
    files: int
    bytes: int


def entries(under: Path | None = None) -> list[Entry]:
    """opendml's directories under the root (``under``), each with its file count and size."""
    base = root() if under is None else under
    found = []
    for path in sorted(base.glob(PREFIX + "*")) if base.is_dir() else []:
        if path.is_dir() and _NAME.fullmatch(path.name):
            files = [f for f in path.rglob("*") if f.is_file()]
            found.append(Entry(path, len(files), sum(f.stat().st_size for f in files)))
    return found


def clear(under: Path | None = None) -> list[Entry]:
    """Remove opendml's directories under the root (nothing else there); returns what was removed."""
    removed = entries(under)
    for entry in removed:
        shutil.rmtree(entry.path, ignore_errors=True)
    _directories.clear()
    return removed


# Numba's disk cache of the kernels. Numba files a function's compiled code by its own source file only,
# so an edit to a helper it calls (a kernel split into modules) would load stale code; filed under the
# fingerprint directory instead, every edit to any helper starts afresh.

_registered = False


def use_for_numba() -> None:
    """Put the compiled code of every Numba function of the kernel package, and of generated kernels,
    under ``directory()``; other Numba users keep Numba's own choice. Call before such functions are
    decorated (Numba picks a function's cache location then)."""
    global _registered
    if _registered:
        return
    from numba.core import caching

    caching.CacheImpl._locator_classes.insert(0, _locator_class(caching))
    _name_data_files_apart(caching)
    notices.watch_numba(_ours)
    _registered = True


def _ours(source: Path) -> bool:
    """Whether a Numba function's source file is opendml's: its kernel package, or a generated module."""
    source = source.resolve()
    return source.is_relative_to(KERNEL_PACKAGE) or (
        source.parent.name == "generated" and source.parent.parent.name.startswith(PREFIX))


def _name_data_files_apart(caching: Any) -> None:
    """Give the data files of each of Numba's cache files in the kernel cache names of their own.

    Numba files a function's compiled specialisations in one index (signature -> data file name) and
    numbered data files. Saving one reads the index, takes the first free number, writes the index, then the
    data. Two processes that save two specialisations of one function at once (pytest-xdist's workers, Dask
    workers sharing a cache) can both take the same number: the index can then end up with one signature
    and the data file with the other's code, which is loaded for that signature from then on. With a random
    part in each cache file's names, no two processes write one data file; at worst one's index entry is
    lost, and that specialisation is compiled again later. Other Numba users' cache files keep Numba's
    names."""
    numba_init = caching.IndexDataCacheFile.__init__

    def __init__(self: Any, cache_path: str, filename_base: str, source_stamp: Any) -> None:
        numba_init(self, cache_path, filename_base, source_stamp)
        if any(_NAME.fullmatch(part) for part in Path(cache_path).parts):
            self._data_name_pattern = f"{filename_base}.{os.urandom(6).hex()}-{{number:d}}.nbc"

    caching.IndexDataCacheFile.__init__ = __init__


def _locator_class(caching: Any) -> type:
    checked: set[str] = set()

    class KernelCacheLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):  # type: ignore
        """Numba functions of opendml's kernel package and generated modules: cached by fingerprint."""

        def __init__(self, py_func: Any, py_file: str, path: Path) -> None:
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = str(path)

        def get_cache_path(self) -> str:
            return self._cache_path

        def ensure_cache_path(self) -> None:
            if self._cache_path in checked:  # written to once already: no test file per function
                os.makedirs(self._cache_path, exist_ok=True)  # (``opendml cache clear`` may have run since)
                return
            super().ensure_cache_path()
            checked.add(self._cache_path)

        @classmethod
        def from_function(cls, py_func: Any, py_file: str) -> KernelCacheLocator | None:
            source = Path(py_file).resolve()
            if source.is_relative_to(KERNEL_PACKAGE):  # subpackages apart: Numba names files by module only
                place = Path("cpu_kernels", source.parent.relative_to(KERNEL_PACKAGE))
            elif _ours(source):
                place = Path("generated")
            else:
                return None  # not opendml's: Numba's other locators decide
            locator = cls(py_func, py_file, directory() / "numba" / place)
            try:
                locator.ensure_cache_path()
            except OSError:
                return None
            return locator

    return KernelCacheLocator
