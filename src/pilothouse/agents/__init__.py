"""The agents: each specialist's toolkit (argocd, github, devops), the supervisor, and the one
`factory.AgentFactory` that builds every agent with every layer for every door."""
