"""Collection: always-continue vote and team loops against an LLM endpoint, task files, and your own
sampling logs turned into a corpus of logged runs.
"""

__all__: list[str] = []
