"""Trajectories as training data: SFT and RL views, splits by target/family/app, `aoi data export|generate`."""
