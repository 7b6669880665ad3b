"""Agents over A2A (a2a-sdk 1.x): serve any agent graph, and call agents as if they were local.

Serving: `server.agent_endpoint` / `server.a2a_app` (card, JSON-RPC, REST, streaming, tasks in
`store`), run by `executor.ConversationExecutor` with `publisher.TaskPublisher` and the
disconnect-aware `handler.CancellingRequestHandler`. Calling: the `subagent.SubAgent` interface,
in process (`subagent.InProcessSubAgent`) or remote (`remote.RemoteSubAgent`).
"""
