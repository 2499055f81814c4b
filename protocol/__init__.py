"""The gRPC contract between the referee and bots, its conversions, and the Python bot SDK."""
