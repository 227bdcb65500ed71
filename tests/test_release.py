"""What a release needs to stay true: the README names every operator, and its links work on a package index
page (absolute, to files and headings that exist); the package metadata declares the license as an SPDX
expression with its file; the source distribution's manifest carries what the tests read."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from opendml.ops import BY_NAME

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
REPOSITORY = "https://github.com/opendml/opendml"
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def test_readme_names_every_operator() -> None:
    missing = [name for name in sorted(BY_NAME) if not re.search(rf"(?<![A-Z0-9_]){name}(?![A-Z0-9_])", README)]
    assert not missing, f"README.md's operator list must name every operator; missing {missing}"


def _slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_readme_links_are_absolute_and_lead_somewhere() -> None:
    links = LINK.findall(README)
    assert links
    relative = [link for link in links if not link.startswith(("https://", "http://"))]
    assert not relative, f"relative links break on a package index page: {relative}"
    for link in links:
        if not link.startswith(f"{REPOSITORY}/blob/main/"):
            continue
        path, _, anchor = link.removeprefix(f"{REPOSITORY}/blob/main/").partition("#")
        assert (ROOT / path).is_file(), f"{link}: no file {path}"
        if anchor:
            text = (ROOT / path).read_text(encoding="utf-8")
            headings = {_slug(h) for h in re.findall(r"^#+ (.+)$", text, re.MULTILINE)}
            assert anchor in headings, f"{link}: {path} has no heading #{anchor}"


def test_license_metadata() -> None:
    if sys.version_info < (3, 11):
        pytest.skip("tomllib is in the standard library from Python 3.11")
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "MIT"
    assert all((ROOT / name).is_file() for name in project["license-files"])
    assert "MIT License" in (ROOT / "LICENSE").read_text(encoding="utf-8")
    # An SPDX license expression replaces the License classifiers: setuptools refuses both at once.
    assert not [c for c in project["classifiers"] if c.startswith("License ::")]
    assert set(project["urls"].values()) <= {REPOSITORY, f"{REPOSITORY}/tree/main/docs",
                                              f"{REPOSITORY}/blob/main/CHANGELOG.md"}


CARRIED = ("tests", "docs", "examples", "benchmarks")  # what the tests read, besides the package itself
CARRIED_FILES = ("LICENSE", "README.md", "CHANGELOG.md", "CONTRIBUTING.md", "conftest.py", "pyproject.toml")
LEFT_BEHIND = {"__pycache__", ".hypothesis", ".pytest_cache"}


def _files(root: Path) -> set[str]:
    found = {f for f in CARRIED_FILES if (root / f).is_file()}
    for folder in CARRIED:
        for path in (root / folder).rglob("*"):
            relative = path.relative_to(root)
            if path.is_file() and not LEFT_BEHIND & set(relative.parts) and path.suffix != ".pyc":
                found.add(relative.as_posix())
    return found


def test_the_sdist_carries_every_file_the_tests_read(tmp_path: Path) -> None:
    """Built from a copy of this tree (setuptools writes its egg-info beside the sources)."""
    setuptools = pytest.importorskip("setuptools")
    if int(setuptools.__version__.split(".")[0]) < 77:
        pytest.skip(f"the build needs setuptools>=77 (pyproject's build-system); got {setuptools.__version__}")
    source = tmp_path / "source"
    ignore = shutil.ignore_patterns(".git", *LEFT_BEHIND, "*.pyc", "*.egg-info", "build", "dist")
    shutil.copytree(ROOT, source, ignore=ignore)
    built = subprocess.run([sys.executable, "-c", "import setuptools.build_meta as b; print(b.build_sdist('dist'))"],
                           cwd=source, capture_output=True, text=True, check=False)
    assert built.returncode == 0, built.stderr
    assert "deprecated" not in built.stderr.lower(), built.stderr
    name = built.stdout.strip().splitlines()[-1]
    with tarfile.open(source / "dist" / name) as archive:
        top = name.removesuffix(".tar.gz")
        members = {m.name.removeprefix(f"{top}/") for m in archive.getmembers() if m.isfile()}
    missing = sorted(_files(source) - members)
    assert not missing, f"the sdist lacks {missing}"
    assert "opendml/onnx/model.py" in members and "opendml/dispatch/examples/clip.json" in members
