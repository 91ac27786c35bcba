"""Training: SFT and GRPO of a role's LoRA adapter on datasets from trajectories, rewarded by the twin."""
