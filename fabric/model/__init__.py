"""Shared values: findings (what every stage reports instead of raising) and the frozen devices, links and
topologies the stages pass along.

In: nothing. Out: types. Must not import any stage, do file I/O or compute a design.
"""
