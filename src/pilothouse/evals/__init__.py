"""The evaluation harness: cases, runs against the sandboxes, checks and reports.

An entry point like the interfaces (`pilothouse eval`): it gets its agents from the agent
factory, and its oracle model (the harness's self-check) lives here, not in `testing`.
"""
