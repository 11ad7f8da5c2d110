"""Maximum flows on a fabric's switch graph: the bisection, worst single failure and ECMP width of the figures, and
the job table's cuts.

Two engines give the same numbers: `lists` (pure Python on adjacency lists, so that a small design never loads
numpy and scipy) and `arrays` (numpy and scipy, with the symmetry reduction of `reduction`). `graph` builds the
switch graph both read; `bisection` holds the balanced splits and the loop over planes both run.
`analysis/figures.py` chooses between them by size; tests/support/flow_reference.py is the slow oracle they are tested
against.
"""
