"""r3bench: physics reasoning benchmarks and step-level reward RL for small language models.

The flow a problem takes (see docs/ARCHITECTURE.md):
problem -> prompt -> generation -> parse -> check / verify -> reward -> feedback -> update -> score.
"""

__version__ = "0.1.0"
