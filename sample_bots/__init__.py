"""Sample bot programs built on the SDK."""
