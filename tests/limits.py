"""How long a test waits before it calls something hung. These limits catch a hang, never slowness.

A slow or busy machine gives a slow pass, never a failure. A test can be slow for ordinary reasons: two
cores shared with other work, two pytest-xdist workers, or an empty kernel cache, so that a subprocess
compiles its Numba kernels before it runs anything. So no test asserts how fast something ran, and every
wait below is many times what the slowest run of the suite has needed. Without a limit, a hung subprocess
would stop CI until the job itself is killed, and no test would name it.
"""

from __future__ import annotations

HANG_SECONDS = 900
"""A subprocess (``python -m opendml``, a benchmark's tiny run, a compiler), a thread or a pool task: past
this it is hung. Today's slowest such wait, a cold benchmark run on two busy cores, takes about a minute."""
