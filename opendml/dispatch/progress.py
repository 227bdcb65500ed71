"""A one-line progress bar for long timing loops, drawn only on a terminal."""

from __future__ import annotations

import sys
import time
from typing import TextIO

_WIDTH = 30


class Progress:
    """Draws ``label [#####.....] 45%  text`` on ``stream`` once the loop has run ``delay`` seconds."""

    def __init__(self, label: str, stream: TextIO | None = None, enabled: bool | None = None,
                 delay: float = 0.5) -> None:
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self._start = time.perf_counter()
        self._delay = delay
        self._last_draw = 0.0
        self._drawn = False

    def update(self, fraction: float, text: str) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self._start < self._delay or now - self._last_draw < 0.1:
            return
        self._last_draw = now
        filled = int(_WIDTH * min(max(fraction, 0.0), 1.0))
        bar = "#" * filled + "." * (_WIDTH - filled)
        self.stream.write(f"\r{self.label} [{bar}] {100 * min(fraction, 1.0):3.0f}%  {text}")
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        """Erase the bar, so that the lines printed after it start clean."""
        if self._drawn:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self._drawn = False
