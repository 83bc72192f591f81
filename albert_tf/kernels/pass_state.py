"""What a kernel set keeps for the one forward pass being computed (`forward_pass`)."""

import contextlib
import threading


class PassState:
    """One value per forward pass and thread: MirroredStrategy traces its replicas' passes
    concurrently, each must see its own."""

    def __init__(self):
        self._local = threading.local()

    @contextlib.contextmanager
    def holding(self, value):
        """`value` is `current()` within the block, the enclosing pass's again after it."""
        outer = self.current()
        self._local.value = value
        try:
            yield
        finally:
            self._local.value = outer

    def current(self):
        """The enclosing pass's value; None outside a pass."""
        return getattr(self._local, "value", None)
