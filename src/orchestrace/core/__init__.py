"""The trace core: the structs, reading and writing, validation, the schema, the columnar dataset,
synthetic traces and which files a path names. Every layer above builds on it.
"""

__all__: list[str] = []
