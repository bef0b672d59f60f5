"""The envelope format: entries, rendering, compose, parse, verify, nesting, spotlighting, hygiene."""
