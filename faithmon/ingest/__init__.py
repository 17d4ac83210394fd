"""Ingest: OTLP decode → trace assembly → extraction → sampling → scrubbing → save()."""
