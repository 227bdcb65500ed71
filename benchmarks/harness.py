"""What the benchmark scripts share: their command lines' common flags, the CSV and PNG files they write, and the
machine they ran on.

A script imports it from this folder (``sys.path`` holds the folder only while it does: a test that loads a
script by its path keeps its own ``sys.path``, and this folder's ``dask.py`` never hides the ``dask`` package).
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

FOLDER = Path(__file__).resolve().parent
RESULTS = FOLDER / "results"

# The kernels timed are the compiled ones from their first call: no call runs on the NumPy path while its kernel
# compiles in the background (tiered execution, docs/cpu-backend.md). A script's own environment may say else.
os.environ.setdefault("OPENDML_TIERED", "0")


# --- the command line ---------------------------------------------------------------------------------------

def parser(doc: str | None) -> argparse.ArgumentParser:
    """A script's parser, its docstring as the help."""
    return argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)


def add_repeats(parser: argparse.ArgumentParser, help: str, default: int | None = None) -> None:
    parser.add_argument("--repeats", type=int, default=default, help=help)


def add_skip(parser: argparse.ArgumentParser, help: str) -> None:
    parser.add_argument("--skip", default="", help=help)


def add_out(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder for the CSV and the PNG")


def names(text: str) -> frozenset[str]:
    """The names of a comma-separated flag (``--skip torch,torch.compile``, ``--rows 1,3b``)."""
    return frozenset(name.strip() for name in text.split(",") if name.strip())


# --- the files ------------------------------------------------------------------------------------------------

def write_csv(path: Path, header: Mapping[str, str], columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """The header as ``# key: value`` lines, then the columns' names and the rows (the folder made if need be)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as handle:
        for key, value in header.items():
            handle.write(f"# {key}: {value}\n")
        writer = csv.writer(handle)
        writer.writerow(columns)
        writer.writerows(rows)


def pyplot(say: Callable[[str], None]) -> Any:
    """matplotlib's pyplot drawing to files, or None (said) where matplotlib is not installed."""
    try:
        import matplotlib
    except ImportError:
        say("matplotlib is not installed: no plot")
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(plt: Any, fig: Any, path: Path, dpi: int) -> None:
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    plt.close(fig)


# --- peers ---------------------------------------------------------------------------------------------------

def ort_session(nodes: list[Any], inputs: list[Any], outputs: list[Any], initializers: list[Any] | None = None,
                threads: int = 1) -> Any:
    """An ONNX Runtime CPU session of one small graph (opset 21) on ``threads`` threads (needs onnx and
    onnxruntime: the ``bench`` extra)."""
    import onnx
    import onnxruntime as ort
    from onnx import helper

    graph = helper.make_graph(nodes, "bench", inputs, outputs, initializers or [])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    onnx.checker.check_model(model)
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # Its worker threads would otherwise spin on the cores after each run, slowing whatever runs next
    # (opendml's ARGMIN right after it: 22.0 against 17.4 ms); its own time does not change (19.7 and 19.9).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


# --- the machine ------------------------------------------------------------------------------------------------

def cpu_model() -> str:
    """The CPU's model name (/proc/cpuinfo's, else the platform's)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def commit() -> str:
    """The checkout's commit (``git describe --always --dirty``), or "unknown"."""
    try:
        return subprocess.run(["git", "describe", "--always", "--dirty"], cwd=FOLDER, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def load_average() -> str:
    return " ".join(f"{v:.2f}" for v in os.getloadavg())
