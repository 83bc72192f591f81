"""The original's AdamW/LAMB update written out in NumPy, the oracle of the optimizer tests."""

import numpy as np

BETA_1, BETA_2, EPSILON, DECAY = 0.9, 0.999, 1e-6, 0.01


def reference_steps(weights, gradients, learning_rates, decays, layer_adaptation):
    """The original's update, written out: no bias correction, decay inside the update."""
    weights = weights.astype(np.float64)
    m = np.zeros_like(weights)
    v = np.zeros_like(weights)
    for gradient, lr in zip(gradients, learning_rates):
        m = BETA_1 * m + (1 - BETA_1) * gradient
        v = BETA_2 * v + (1 - BETA_2) * gradient**2
        update = m / (np.sqrt(v) + EPSILON)
        ratio = 1.0
        if decays:
            update = update + DECAY * weights
            if layer_adaptation:
                w_norm, u_norm = np.linalg.norm(weights), np.linalg.norm(update)
                ratio = w_norm / u_norm if w_norm > 0 and u_norm > 0 else 1.0
        weights = weights - ratio * lr * update
    return weights
