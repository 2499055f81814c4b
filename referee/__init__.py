"""The Hollywood Gin referee: rules engine, seats, sandbox, matches and match logs."""
