"""Applications: the `r3bench` command line, the demo, reproduce plans and the doctor."""
