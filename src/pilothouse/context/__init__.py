"""Context-safety layers, each a LangChain agent middleware."""
