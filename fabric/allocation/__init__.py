"""Stage 4, allocation: loopbacks, /31s, server subnets, management addresses, ASNs and cables with their
lengths, media and labels, all index-based so the same spec gives the same Plan; then the plan checks.

In: Design and Topology (the plan checks: the analysis Context grown by the Plan). Out: a frozen Plan and
findings. Pure.
"""
