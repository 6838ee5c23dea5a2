"""serve-mcp's client side: the backend MCP servers it connects to, restarts and calls."""
