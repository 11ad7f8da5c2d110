"""Tools that work on a built fabric, after the pipeline: `fabric verify` (compare ibnetdiscover output or
LLDP neighbours with the cabling plan) and `fabric lab` (boot the generated FRR configs in network namespaces).

In: a Build and discovered data. They never feed back into the pipeline.
"""
