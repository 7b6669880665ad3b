"""Observability: structured logs, traces, Prometheus metrics and the memory guard.

`operations.operations(settings)` configures logging and tracing once per process; the agent
factory detects the `memory.MemoryBudget`, runs its `memory.MemoryMonitor`, and gives each agent
`middleware.ObservabilityMiddleware` and `memory.MemoryGuardMiddleware`; `metrics.render_metrics`
serves `/metrics`. Nothing here imports the runtime, the agents or the interfaces.
"""
