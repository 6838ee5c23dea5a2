"""The command line: the Typer app, and the fast path that answers warm commands without it."""
