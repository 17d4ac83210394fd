"""`faithmon gate`: a release gate on curated cases, with the judge production uses.

``cases`` reads the JSONL, ``digest`` versions the dataset by its inputs, ``judging``
judges the cases (bounded, within a budget), ``rules`` and ``checks`` hold them to the
bars, ``results`` writes the evaluation records and reads a baseline back, ``report``
and ``junit`` say what was found, and ``run`` puts them together with the exit status.
No database: the CLI hands in the judge and its standing.
"""

from .cases import Case, parse_cases
from .digest import dataset_digest
from .errors import GateInputError
from .junit import write_junit
from .results import (
    Baseline,
    prompt_version,
    read_baseline,
    refuse_other_dataset,
    write_records,
)
from .rules import Rules, load_rules, parse_percentile, with_flags
from .run import FAILED, JUDGE_FAILED, PASSED, USAGE, Outcome, Standing, run_gate

__all__ = [
    "FAILED",
    "JUDGE_FAILED",
    "PASSED",
    "USAGE",
    "Baseline",
    "Case",
    "GateInputError",
    "Outcome",
    "Rules",
    "Standing",
    "dataset_digest",
    "load_rules",
    "parse_cases",
    "parse_percentile",
    "prompt_version",
    "read_baseline",
    "refuse_other_dataset",
    "run_gate",
    "with_flags",
    "write_junit",
    "write_records",
]
