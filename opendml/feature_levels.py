"""DirectML feature levels: ordered, parsed from several spellings."""

from __future__ import annotations

import enum
import re

from .enums import parse_enum


class FeatureLevel(enum.IntEnum):
    """DML_FEATURE_LEVEL, with DirectML's values; each level is a strict superset of the ones before."""

    FL_1_0 = 0x1000
    FL_2_0 = 0x2000
    FL_2_1 = 0x2100
    FL_3_0 = 0x3000
    FL_3_1 = 0x3100
    FL_4_0 = 0x4000
    FL_4_1 = 0x4100
    FL_5_0 = 0x5000
    FL_5_1 = 0x5100
    FL_5_2 = 0x5200
    FL_6_0 = 0x6000
    FL_6_1 = 0x6100
    FL_6_2 = 0x6200
    FL_6_3 = 0x6300
    FL_6_4 = 0x6400

    @classmethod
    def parse(cls, value: object, *, owner: str = "opendml", field: str = "FeatureLevel") -> FeatureLevel:
        """Accept a FeatureLevel, ``"6_2"``, ``"6.2"``, ``"FL_6_2"``, ``"DML_FEATURE_LEVEL_6_2"`` or ``0x6200``.

        >>> FeatureLevel.parse("6.2") is FeatureLevel.FL_6_2
        True
        """
        return parse_enum(cls, value, owner, field, name_of=_member_name, label=lambda level: level.label)

    @property
    def label(self) -> str:
        """DirectML's short spelling, ``"6_2"``."""
        return self.name.removeprefix("FL_")

    def __str__(self) -> str:
        return self.label


NEWEST = FeatureLevel.FL_6_4


def _member_name(text: str) -> str:
    """``"6_2"``, ``"6.2"``, ``"FL_6_2"`` or ``"DML_FEATURE_LEVEL_6_2"`` (upper-cased) to ``"FL_6_2"``."""
    match = re.fullmatch(r"(?:DML_FEATURE_LEVEL_|FL_?)?([0-9]+)[._]([0-9]+)", text)
    return f"FL_{match[1]}_{match[2]}" if match else ""
