"""Judges: implementations of the Judge protocol, found by name in ``registry``.
No database, no ingest."""

from .offline import OfflineJudge
from .registry import JUDGES, JudgeOptions, make_judge

__all__ = ["JUDGES", "JudgeOptions", "OfflineJudge", "make_judge"]
