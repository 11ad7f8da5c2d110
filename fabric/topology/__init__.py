"""Stage 2, the topology: a Design in, a Topology out (one networkx graph per fabric, devices placed in
racks, node ports attached, ports named as their platform names them): the Clos generator, hand-written and
CSV fabrics, racks, attachment, media.

Pure: no addresses (that is allocation), no output syntax.
"""
