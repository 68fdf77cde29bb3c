"""Benchmark harness: `make bench` (see bench/README.md)."""
