"""ORM tables. These classes never leave ``store``; its query modules return model types.

One module per job, each on :mod:`.base`; importing this package (or any of its modules)
imports them all, so ``Base.metadata`` always holds the whole schema.
"""

from .alerts import AlertGroupRow, AlertRow, OutboxRow, SilenceRow
from .base import Base, JSONType, UTCDateTime
from .counts import DroppedTraceRow, SamplingCountRow, SegmentDailyRow, SegmentMetricsRow
from .drift import BaselineRow, DriftRunRow, DriftStateRow, DriftThresholdRow
from .evaluations import ClaimRow, EvaluationRow
from .fleet import ApiKeyRow, FingerprintRow, ReceiverRow
from .judges import JudgeBlockRow, JudgeTrustRow, JudgeUsageRow, SentinelRunRow, SentinelSetRow
from .records import ChunkRow, FeedbackRow, RecordDocumentRow, RecordRow
from .review import ReviewCursorRow, ReviewItemRow, ReviewLabelRow, ReviewThresholdRow

__all__ = [
    "AlertGroupRow",
    "AlertRow",
    "ApiKeyRow",
    "Base",
    "BaselineRow",
    "ChunkRow",
    "ClaimRow",
    "DriftRunRow",
    "DriftStateRow",
    "DriftThresholdRow",
    "DroppedTraceRow",
    "EvaluationRow",
    "FeedbackRow",
    "FingerprintRow",
    "JSONType",
    "JudgeBlockRow",
    "JudgeTrustRow",
    "JudgeUsageRow",
    "OutboxRow",
    "ReceiverRow",
    "RecordDocumentRow",
    "RecordRow",
    "ReviewCursorRow",
    "ReviewItemRow",
    "ReviewLabelRow",
    "ReviewThresholdRow",
    "SamplingCountRow",
    "SegmentDailyRow",
    "SegmentMetricsRow",
    "SentinelRunRow",
    "SentinelSetRow",
    "SilenceRow",
    "UTCDateTime",
]
