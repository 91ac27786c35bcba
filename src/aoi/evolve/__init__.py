"""The Evolvers: fault scenarios executed and rewarded in the twin, and failed runs mined into guidance."""
