"""The AOI team: the Observer, the sub-agents' loop and their tools (see README.md)."""
