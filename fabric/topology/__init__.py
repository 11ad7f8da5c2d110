"""Stage 2, the topology: a Design in, a Topology out (one networkx graph per fabric, devices placed in
racks, node ports attached): the Clos generator, hand-written and CSV fabrics, racks, media, port names.

Pure: no file I/O, no addresses (that is allocation).
"""
