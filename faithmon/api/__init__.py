"""Read API served by `faithmon serve` beside the OTLP receiver."""
