"""Unit tests of the demo backend (scenarios, schema arguments, replays, DemoUpstream)."""
