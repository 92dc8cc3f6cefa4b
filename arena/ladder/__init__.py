"""The continuous ladder (issue 16): matchmaking, the runner and its state."""
