"""Shared values (stage 0): findings and the registry of their codes, the vocabularies (layers, tiers, roles,
media kinds), the frozen devices, links and topologies, the fabric drafts the topology builders fill in, and
the cables with their labels.

In: nothing. Out: types. Must not import any stage, do file I/O or compute a design.
"""
