"""Trains Ludus league policies from the server's replays (the tensors dataset) and registers them back."""
