"""Policies: the stop rules (one definition each), the fitted stop gate and team policy, the neural
policy of the simulator and its checkpoints.
"""

__all__: list[str] = []
