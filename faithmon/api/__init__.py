"""The served HTTP application (``app.py``): ingest's OTLP routes, health, ``/metrics``
(``metrics.py``), the read API (``v1/``, one router per noun) and its reference page
(``docs.py``), the dashboard (``pages/``) and the uvicorn server that drains on shutdown
(``server.py``)."""
