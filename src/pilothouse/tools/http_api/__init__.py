"""What the MCP servers over an HTTP API (Argo CD, GitHub) share: the client base, error mapping,
the tool runner and server, the `serve` command, page validation and output fitting.

Each API's package keeps only what is its own: authentication, which statuses mean what, its
tools and their shapes.
"""
