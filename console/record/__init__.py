"""Recording and replay: a recording is just another source of frames and events (docs/recording.md)."""
