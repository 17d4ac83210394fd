"""``faithmon demo``: a small instrumented RAG app whose answers start to drift."""
