"""Agents over A2A (a2a-sdk 1.x): serve any agent, and call remote agents as if they were local.

Serving: `server.agent_endpoint` / `server.a2a_app` (card, JSON-RPC, REST, streaming, tasks in
`store`) over the factory's `runtime.handle.AgentHandle`, run by `executor.ConversationExecutor`
with `publisher.TaskPublisher` and the disconnect-aware `handler.CancellingRequestHandler`.
Calling: `remote.RemoteSubAgent`, the A2A half of `runtime.subagent.SubAgent` (the in-process
half, `InProcessSubAgent`, needs no A2A and lives in the runtime).
"""
