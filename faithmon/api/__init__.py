"""The served HTTP application (``app.py``): ingest's OTLP routes, health, ``/metrics``
(``metrics.py``) and the uvicorn server that drains on shutdown (``server.py``)."""
