"""Echo on Ray: rollout samplers and the GRPO trainer decoupled (colocated, sequential pull, async push-pull)."""
