"""The review loop's rules and statistics (pure): which evaluations people review and how
likely each was to be picked (``queue``), how the judge agrees with them
(``agreement``), and the score thresholds their labels support (``calibrate``)."""
