"""Logged runs as a world: the reader and its checks, the exact valuation of every path, the environment
over logs and the simulator fitted to them. A vote is a team of identical members.
"""

__all__: list[str] = []
