"""The one simulated shell (dash and bash flavours) and its userland, run in memory over a dict of files."""
