"""How serve-mcp reaches its clients: stdio, or streamable HTTP behind its limits."""
