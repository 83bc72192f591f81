"""Fine-tuning on one driver: `driver.run(task)` does what every task shares, a `task.FineTuningTask`
(`glue`, `squad`, `race`) only what differs (docs/architecture.md, "Fine-tuning")."""
