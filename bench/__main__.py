"""python -m bench: the scale benchmark (see bench/run.py)."""
from bench.run import main

main()
