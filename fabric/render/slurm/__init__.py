"""Slurm: topology.conf (topology/tree), topology-block.conf (topology/block), topology.yaml, nodes.conf."""
