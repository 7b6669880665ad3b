"""Codebase RAG: syntax-aware chunks, offline embeddings, ChromaDB, hybrid retrieval, MCP tools.

`index.CodeIndex` is the library entry point, `server.build_rag_server` the MCP server and
`cli` the command-line entry points. Nothing is imported here: the CLI mounts `cli` at start-up
and must not pay for ChromaDB and onnxruntime unless a RAG command actually runs.
"""
