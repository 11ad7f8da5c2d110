"""Stage 1, the spec: read YAML with positions, validate it into frozen pydantic models, merge the hardware
catalog and part files, describe the platforms (templates/<platform>/platform.yaml), check cross-references;
a Design comes out (or FabricError with findings).

In: files. Out: a Design. The only stage besides the writer that touches files: every byte from outside
enters here.
"""
