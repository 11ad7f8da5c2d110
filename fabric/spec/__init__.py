"""Stage 1, the spec: read YAML with positions, validate it into frozen pydantic models, merge the hardware
catalog and part files, check cross-references; a Design comes out (or FabricError with findings).

The only stage besides the writer that touches files: every byte from outside enters here.
"""
