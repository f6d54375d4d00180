"""Example owners and the demo run; see examples/README in the docs."""
