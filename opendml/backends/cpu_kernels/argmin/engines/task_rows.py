"""The columns of a row of a computed element's task table: ``prologue`` writes one row per task, and the
tasks of the generated modules (``boxes``, ``fast_rows``, ``fast_columns``, ``extras``) read them."""

# The state row, the first slot and index, the engine's range of outer positions, the range of box positions,
# the box dimension and its step; then each operand's first element, then the walker's sizes (a leading 1,
# then the task's).
PIECE, SLOT0, INDEX0, START, STOP, FIRST, LAST, F, STEP, ORIGINS = range(10)
