"""A one-line progress bar for long timing loops, drawn only on a terminal.

Drawn by tqdm where it is installed (elapsed and remaining time, the terminal's width, consoles without ANSI
escapes), else by a bar of its own, ``label [#####.....] 45%  text``: tqdm is not a dependency, as nothing but
``opendml dispatch``'s timing loops draws a bar, and those are only a view of the work (the timings are the same).
"""

from __future__ import annotations

import sys
import time
from types import ModuleType
from typing import Any, TextIO

_WIDTH = 30
# tqdm's line: the label, the bar, the percentage, the loop's own text (tqdm puts ", " before it), then
# elapsed<remaining.
_TQDM_FORMAT = "{desc} {bar} {percentage:3.0f}%{postfix} [{elapsed}<{remaining}]"


def _tqdm() -> ModuleType | None:
    """tqdm, where installed (imported on the first bar, never by ``import opendml``)."""
    try:
        import tqdm
    except ImportError:
        return None
    return tqdm


class Progress:
    """Draws the bar on ``stream`` once the loop has run ``delay`` seconds, at most once every ``interval``
    seconds; ``enabled`` None: only where ``stream`` is a terminal. ``update`` takes the fraction done and a
    short text; ``close`` erases the bar."""

    def __init__(self, label: str, stream: TextIO | None = None, enabled: bool | None = None,
                 delay: float = 0.5, interval: float = 0.1) -> None:
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self._start = time.perf_counter()
        self._delay = delay
        self._interval = interval
        self._last_draw = 0.0
        self._drawn = False
        tqdm = _tqdm() if self.enabled else None
        # tqdm keeps the delay and the interval itself; leave=False erases the bar on close.
        self._tqdm: Any = None if tqdm is None else tqdm.tqdm(
            total=100, desc=label, file=self.stream, delay=delay, mininterval=interval, leave=False,
            bar_format=_TQDM_FORMAT, dynamic_ncols=True)

    def update(self, fraction: float, text: str) -> None:
        if not self.enabled:
            return
        fraction = min(max(fraction, 0.0), 1.0)
        if self._tqdm is not None:
            self._tqdm.set_postfix_str(text, refresh=False)
            self._tqdm.update(100 * fraction - self._tqdm.n)
            return
        now = time.perf_counter()
        if now - self._start < self._delay or now - self._last_draw < self._interval:
            return
        self._last_draw = now
        filled = int(_WIDTH * fraction)
        bar = "#" * filled + "." * (_WIDTH - filled)
        self.stream.write(f"\r{self.label} [{bar}] {100 * fraction:3.0f}%  {text}")
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        """Erase the bar, so that the lines printed after it start clean."""
        if self._tqdm is not None:
            self._tqdm.close()
        elif self._drawn:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self._drawn = False
