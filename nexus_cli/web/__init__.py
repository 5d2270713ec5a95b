"""The board as a web page (`nexus board --web`): a local page served by the standard library's
HTTP server for exactly as long as the command runs, fed by the same board data as the terminal
board (`insight.board`), its actions run through the registry as the CLI runs them. A face:
nothing here loads on the hook path or in `nexus mcp`."""
