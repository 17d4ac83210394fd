"""faithmon: a monitor of RAG faithfulness in production."""

__version__ = "0.1.0"
