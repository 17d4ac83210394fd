"""Judges: implementations of the Judge protocol. No database, no ingest."""

from .offline import OfflineJudge

__all__ = ["OfflineJudge"]
