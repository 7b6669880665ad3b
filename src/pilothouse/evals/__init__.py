"""The evaluation harness: cases, runs against the sandboxes, checks and reports."""
