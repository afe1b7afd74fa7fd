"""Analysis of one trace: the graph core (:mod:`orchestrace.analysis.graph`) and the namespaced
measures computed on it (:mod:`orchestrace.analysis.measures`).
"""

__all__: list[str] = []
