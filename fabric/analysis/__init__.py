"""Stage 3, analysis: the figures of each fabric computed on its graph (loads, oversubscription, bisection
on the symmetry-reduced graph, ECMP width, worst single failure) and the checks that judge them.

In: Design and Topology (checks of the plan also get the Plan). Out: figures and findings. Pure.
"""
