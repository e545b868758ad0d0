"""The lm-eval layer: benchmark data, task glue, the import hook, retrieval and the inference strategies."""
