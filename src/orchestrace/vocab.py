"""The survey's vocabulary as enums: the taxonomy *is* the API.

Names and values follow Zhang 2026 (arXiv:2605.02801) and its reference trace schema, so
that a user who read the survey finds them here, and so that the paper pool's CSV columns
(``reward_type``, ``credit_granularity``, ``orchestration_form``) validate against the
same enums as traces do.

>>> EventType("tool_call") is EventType.TOOL_CALL
True
>>> Decision.O5 is Decision.STOP, Decision.STOP.code
(True, 'O5')
>>> RewardFamily.R7.value, RewardFamily("verifier") is RewardFamily.DEBATE
('orchestration', True)
>>> [u.value for u in CreditUnit][:3]
['token', 'tool_call', 'message']
"""

from __future__ import annotations

from enum import Enum

__all__ = [
    "DEPENDENCY_EDGE_TYPES",
    "CreditUnit",
    "Decision",
    "EdgeType",
    "EventType",
    "Measure",
    "RewardFamily",
    "Severity",
    "Topology",
]


class _StrEnum(str, Enum):
    """A ``str`` enum whose ``str()`` is its value (msgspec encodes it by value)."""

    def __str__(self) -> str:
        return str(self.value)


class EventType(_StrEnum):
    """The ten event types of the reference schema."""

    ORCHESTRATOR_DECISION = "orchestrator_decision"
    SPAWN = "spawn"
    DESPAWN = "despawn"
    MESSAGE = "message"
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"
    RETURN = "return"
    AGGREGATE = "aggregate"
    HUMAN_INTERVENTION = "human_intervention"
    SAFETY_EVENT = "safety_event"


class EdgeType(_StrEnum):
    """The eight edge types of the reference schema.

    Every type but ``temporal`` and ``safety_flow`` is a *dependency* ("the destination
    used the source", :data:`DEPENDENCY_EDGE_TYPES`): dependency edges must form a DAG, time
    may not run backwards along them, and they alone enter the topological order, the
    critical path, ancestry and wasted work. ``temporal`` edges only order events and
    ``safety_flow`` edges annotate taint.
    """

    TEMPORAL = "temporal"
    CAUSAL = "causal"
    SPAWN = "spawn"
    MESSAGE = "message"
    TOOL_DEPENDENCY = "tool_dependency"
    RETURN = "return"
    AGGREGATE = "aggregate"
    SAFETY_FLOW = "safety_flow"


#: The one set of dependency edge types, shared by the validator (acyclic, forward in time)
#: and the graph core (topological order, critical path, ancestry): every type but
#: ``temporal`` and ``safety_flow``. A ``message`` edge is a dependency — the receiver used
#: the message — so a cycle through message edges is a cycle for both.
DEPENDENCY_EDGE_TYPES: frozenset[EdgeType] = frozenset(EdgeType) - {EdgeType.TEMPORAL, EdgeType.SAFETY_FLOW}


class Topology(_StrEnum):
    """Orchestration topologies of the survey."""

    CENTRALIZED = "centralized"
    PLANNER_EXECUTOR_CRITIC = "planner_executor_critic"
    DEBATE = "debate"
    SWARM = "swarm"
    HIERARCHICAL = "hierarchical"
    HARNESS = "harness"
    MIXED = "mixed"
    UNKNOWN = "unknown"


class Decision(_StrEnum):
    """The orchestration sub-decisions O1–O5 (``Decision.O1 is Decision.SPAWN``).

    The reference schema has no ``stop`` event: a stop is an ``orchestrator_decision``
    whose decision kind is :attr:`STOP`.
    """

    SPAWN = "spawn"
    DELEGATE = "delegate"
    COMMUNICATE = "communicate"
    AGGREGATE = "aggregate"
    STOP = "stop"
    O1 = "spawn"
    O2 = "delegate"
    O3 = "communicate"
    O4 = "aggregate"
    O5 = "stop"

    @property
    def code(self) -> str:
        """The survey's code, ``"O1"`` … ``"O5"``."""
        return _DECISION_CODES[self.value]


_DECISION_CODES = {"spawn": "O1", "delegate": "O2", "communicate": "O3", "aggregate": "O4", "stop": "O5"}


class RewardFamily(_StrEnum):
    """Reward families R1–R8. The paper pool writes R6 as ``debate`` or ``verifier``."""

    SHARED = "shared"
    INDIVIDUAL = "individual"
    ROLE = "role"
    PROCESS = "process"
    TOOL = "tool"
    DEBATE = "debate"
    ORCHESTRATION = "orchestration"
    HYBRID = "hybrid"
    R1 = "shared"
    R2 = "individual"
    R3 = "role"
    R4 = "process"
    R5 = "tool"
    R6 = "debate"
    R7 = "orchestration"
    R8 = "hybrid"

    @property
    def code(self) -> str:
        """The survey's code, ``"R1"`` … ``"R8"``."""
        return _REWARD_CODES[self.value]

    @classmethod
    def _missing_(cls, value: object) -> RewardFamily | None:
        if value == "verifier":
            return cls.DEBATE
        return None


_REWARD_CODES = {
    "shared": "R1",
    "individual": "R2",
    "role": "R3",
    "process": "R4",
    "tool": "R5",
    "debate": "R6",
    "orchestration": "R7",
    "hybrid": "R8",
}


class CreditUnit(_StrEnum):
    """The eight credit- or signal-bearing units, finest to coarsest."""

    TOKEN = "token"
    TOOL_CALL = "tool_call"
    MESSAGE = "message"
    TURN = "turn"
    AGENT = "agent"
    ROLE = "role"
    ORCHESTRATOR = "orchestrator"
    TEAM = "team"


class Measure(_StrEnum):
    """MAS-native measures E1–E4 (values are the reference ``metrics`` keys)."""

    TASK_SUCCESS = "task_success"
    PARALLELISM_EFFICIENCY = "parallelism_efficiency"
    PROTOCOL_OVERHEAD = "protocol_overhead"
    ERROR_AMPLIFICATION = "error_amplification"
    E1 = "task_success"
    E2 = "parallelism_efficiency"
    E3 = "protocol_overhead"
    E4 = "error_amplification"


class Severity(_StrEnum):
    """Severity of a validation problem."""

    ERROR = "error"
    WARNING = "warning"
