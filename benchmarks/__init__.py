"""The project's benchmarks; ``python -m benchmarks`` (or ``./dev bench``) runs them all and
prints one table of figures against baselines measured in the same run (README.md)."""
