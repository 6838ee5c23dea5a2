"""`toolfind serve-mcp`: an MCP discovery server over toolfind's catalogs, in front of the
backend MCP servers it proxies.

The rooms: `main` runs it; `server` answers tools (the meta-tools and forwarded calls) with
`meta`, `arguments` and the live index of `state`; `passthrough/` relays what backends offer
besides tools, one module per capability; `backends/` is the client side (servers files, the
pool, one connection, naming their tools, ``catalog pull``); `transports/` serves stdio or
HTTP. `options` and `defaults` say what serve-mcp is asked to do.

Nothing is imported here: this package and `main` import the MCP SDK only when serving.
"""
