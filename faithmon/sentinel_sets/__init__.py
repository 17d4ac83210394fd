"""Built-in sentinel sets (JSONL) for checking that the faithfulness judge has not drifted."""
