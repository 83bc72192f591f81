"""The pretraining trainer behind `run_pretraining.py`: MLM + SOP on `tf.distribute`, no Estimator."""
