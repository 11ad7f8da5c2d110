"""Stage 3, analysis: the figures of each fabric computed on its graph (loads, oversubscription, bisection
on the symmetry-reduced graph, ECMP width, worst single failure) and the graph checks that judge them.

In: a Context (Design, Topology, figures). Out: figures and findings. Pure.
"""
