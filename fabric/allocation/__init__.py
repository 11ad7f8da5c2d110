"""Stage 4, allocation: loopbacks, /31s, server subnets, management addresses, ASNs and cables with their
lengths, media and labels, all index-based so the same spec gives the same Plan.

In: Design and Topology. Out: a frozen Plan with its findings. Pure.
"""
