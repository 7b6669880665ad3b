"""Observability: structured logs, traces, Prometheus metrics and the memory guard.

`logging.configure_logging`, `tracing.configure_tracing` and `memory.MemoryBudget.detect` are
called once at start-up; `middleware.ObservabilityMiddleware` and `memory.MemoryGuardMiddleware`
join each agent; `metrics.render_metrics` serves `/metrics`.
"""
