"""tests/programs/ holds real training scripts, not tests: pytest (and --doctest-modules) must not
import them, since several train at import time exactly as their originals do."""
collect_ignore_glob = ["*.py"]
