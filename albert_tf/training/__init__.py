"""What training and fine-tuning runs share: optimizers, strategies, determinism, resuming, evaluation."""
