"""The lm-eval layer: task glue, the import hook, retrieval and the inference strategies."""
