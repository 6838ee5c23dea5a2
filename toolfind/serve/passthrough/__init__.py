"""What backends offer besides tools, passed through to serve-mcp's clients."""
